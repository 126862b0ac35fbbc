package launcher

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// The environments are what Slurm sets (src/common/env.c: env_array_for_step
// in a step, env_array_for_batch_job in a batch script; SLURM_NODEID is the
// node's index in the step, src/slurmd/slurmstepd/task.c).
func TestSlurmCountsThisNodesTasks(t *testing.T) {
	step := func(tpn, node string, more ...string) []string {
		return append([]string{"SLURM_JOB_ID=7", "SLURM_STEP_ID=0", "SLURM_STEPID=0", "SLURM_TASKS_PER_NODE=" + tpn,
			"SLURM_STEP_TASKS_PER_NODE=" + tpn, "SLURM_NODEID=" + node}, more...)
	}
	assumed := "the most tasks a node runs: SLURM_NODEID=\"\" does not place this node"
	outsideStep := "the job's layout runs here: outside an srun step this may be the batch script alone"
	testRanks(t, []rankCase{
		{"srun -N2 -n16: the step's count on this node", "python train.py", step("8(x2)", "1"),
			[]facts.Ranks{r("slurm", "SLURM_STEP_TASKS_PER_NODE=8(x2), SLURM_NODEID=1", 8)}},
		{"srun -N3 -n8: the last node of 3(x2),2 runs 2", "python train.py", step("3(x2),2", "2"),
			[]facts.Ranks{r("slurm", "SLURM_STEP_TASKS_PER_NODE=3(x2),2, SLURM_NODEID=2", 2)}},
		{"srun -N3 -n8: the first node of 3(x2),2 runs 3", "python train.py", step("3(x2),2", "0"),
			[]facts.Ranks{r("slurm", "SLURM_STEP_TASKS_PER_NODE=3(x2),2, SLURM_NODEID=0", 3)}},
		{"the step's layout wins over an inherited --ntasks-per-node", "python train.py", step("1(x2)", "0", "SLURM_NTASKS_PER_NODE=8"),
			[]facts.Ranks{r("slurm", "SLURM_STEP_TASKS_PER_NODE=1(x2), SLURM_NODEID=0", 1)}},
		{"srun --preserve-env keeps the job's SLURM_TASKS_PER_NODE; the step's counts",
			"python train.py", []string{"SLURM_STEP_ID=3", "SLURM_TASKS_PER_NODE=8(x2)", "SLURM_STEP_TASKS_PER_NODE=2,1", "SLURM_NODEID=1"},
			[]facts.Ranks{r("slurm", "SLURM_STEP_TASKS_PER_NODE=2,1, SLURM_NODEID=1", 1)}},
		{"a batch script reads the job's list as an assumption", "python train.py", []string{"SLURM_JOB_ID=7", "SLURM_TASKS_PER_NODE=2(x3),1", "SLURM_NODEID=3"},
			[]facts.Ranks{{Launcher: "slurm", Source: "SLURM_TASKS_PER_NODE=2(x3),1, SLURM_NODEID=3", PerNode: 1, Assumed: outsideStep}}},
		{"a step's list without SLURM_STEP_ID is no step", "python train.py", []string{"SLURM_TASKS_PER_NODE=4", "SLURM_STEP_TASKS_PER_NODE=9", "SLURM_NODEID=0"},
			[]facts.Ranks{{Launcher: "slurm", Source: "SLURM_TASKS_PER_NODE=4, SLURM_NODEID=0", PerNode: 4, Assumed: outsideStep}}},
		{"without SLURM_NODEID an even list needs no place", "python train.py", []string{"SLURM_TASKS_PER_NODE=8(x2)"},
			[]facts.Ranks{{Launcher: "slurm", Source: "SLURM_TASKS_PER_NODE=8(x2)", PerNode: 8, Assumed: outsideStep}}},
		{"without SLURM_NODEID --ntasks-per-node counts", "python train.py", []string{"SLURM_TASKS_PER_NODE=3(x2),2", "SLURM_NTASKS_PER_NODE=3"},
			[]facts.Ranks{r("slurm", "SLURM_NTASKS_PER_NODE=3", 3)}},
		{"without a place an uneven list counts its most, as an assumption", "python train.py", []string{"SLURM_TASKS_PER_NODE=3(x2),2"},
			[]facts.Ranks{{Launcher: "slurm", Source: "SLURM_TASKS_PER_NODE=3(x2),2", PerNode: 3, Assumed: assumed}}},
		{"tasks with GPUs of their own count nothing", "python train.py", step("8(x2)", "0", "SLURM_GPUS_PER_TASK=1"), nil},
		{"srun --ntasks-per-gpu=2: tasks bound to a GPU each count nothing", "python train.py", step("8(x2)", "0", "SLURM_NTASKS_PER_GPU=2"), nil},
		{"a list that is no list counts nothing", "python train.py", step("8(x0)", "0"), nil},
		{"srun --ntasks-per-node=1 torchrun: torchrun's count and Slurm's, each against the GPUs",
			"torchrun --nnodes=2 --nproc-per-node=8 train.py", step("1(x2)", "1", "SLURM_NTASKS_PER_NODE=1"),
			[]facts.Ranks{r("torchrun", "--nproc-per-node=8", 8), r("slurm", "SLURM_STEP_TASKS_PER_NODE=1(x2), SLURM_NODEID=1", 1)}},
	})
}

// The forms are Slurm's own: sbatch(1)'s "2(x3),1", uint16_array_to_str's
// "1,2,1(x3),3,2" (src/common/env.c), and the largest repeat a uint32 holds.
func TestParseTasksPerNodeReadsTheCompressedForm(t *testing.T) {
	tests := []struct {
		list, node string
		want       taskCounts
	}{
		{"8", "0", taskCounts{at: 8, least: 8, most: 8, nodes: 1}},
		{"8(x2)", "1", taskCounts{at: 8, least: 8, most: 8, nodes: 2}},
		{"2(x3),1", "3", taskCounts{at: 1, least: 1, most: 2, nodes: 4}},
		{"2(x3),1", "2", taskCounts{at: 2, least: 1, most: 2, nodes: 4}},
		{"1,2,1(x3),3,2", "5", taskCounts{at: 3, least: 1, most: 3, nodes: 7}},
		{"1,2,1(x3),3,2", "7", taskCounts{at: 0, least: 1, most: 3, nodes: 7}},
		{"4(x4294967295)", "4294967294", taskCounts{at: 4, least: 4, most: 4, nodes: 4294967295}},
	}
	for _, tt := range tests {
		node, _ := strconv.ParseUint(tt.node, 10, 64)
		if got, err := parseTasksPerNode(tt.list, node); err != nil || got != tt.want {
			t.Errorf("parseTasksPerNode(%q, %d) = %+v, %v; want %+v", tt.list, node, got, err, tt.want)
		}
	}
}

func TestParseTasksPerNodeRejectsWhatSlurmDoesNotWrite(t *testing.T) {
	for _, list := range []string{"4(x4294967296)", "65536", "8(x0)", "8(x2", "8(x2)x", "8,,1", " 8", "-1", "+8", ""} {
		if got, err := parseTasksPerNode(list, 0); err == nil {
			t.Errorf("parseTasksPerNode(%q) = %+v, want an error", list, got)
		}
	}
}

func TestParseTasksPerNodeAllocatesNothingOnAMebibyte(t *testing.T) {
	list := strings.Repeat("65535(x4294967295),", 1<<20/19) + "1"
	var counts taskCounts
	allocs := testing.AllocsPerRun(2, func() { counts, _ = parseTasksPerNode(list, 1<<62) })
	if allocs != 0 || counts.most != 65535 || counts.least != 1 {
		t.Errorf("%v allocations, counts %+v", allocs, counts)
	}
	got := slurm(facts.Slurm{TasksPerNode: list, NodeID: "0"})
	if len(got) != 1 || len(got[0].Source) > 2*maxQuoted {
		t.Errorf("the source quotes the whole list: %d bytes", len(got[0].Source))
	}
}

func FuzzParseTasksPerNode(f *testing.F) {
	for _, seed := range []string{"8", "8(x2)", "2(x3),1", "3(x2),2", "1,2,1(x3),3,2", "1(x4294967295)", "8(x0)"} {
		f.Add(seed, uint64(1))
	}
	f.Fuzz(func(t *testing.T, list string, node uint64) {
		c, err := parseTasksPerNode(list, node)
		if err != nil {
			return
		}
		if c.least < 0 || c.least > c.most || c.most > 65535 || c.nodes == 0 {
			t.Fatalf("%q: %+v", list, c)
		}
		if node < c.nodes && (c.at < c.least || c.at > c.most) {
			t.Fatalf("%q node %d: %+v", list, node, c)
		}
		if c.nodes > 1000 {
			return
		}
		var expanded []int
		for item := range strings.SplitSeq(list, ",") {
			count, reps, _ := strings.Cut(item, "(x")
			n, _ := strconv.Atoi(count)
			times, _ := strconv.Atoi(strings.TrimSuffix(reps, ")"))
			for range max(times, 1) {
				expanded = append(expanded, n)
			}
		}
		if want := 0; node < uint64(len(expanded)) && c.at != expanded[node] || node >= uint64(len(expanded)) && c.at != want {
			t.Fatalf("%q node %d: at %d, expanded %v", list, node, c.at, expanded)
		}
	})
}

func TestSlurmQuotesSLURM_NODEIDAsANumber(t *testing.T) {
	got := slurm(facts.Slurm{TasksPerNode: "8(x2)", NodeID: strings.Repeat("0", 1<<20) + "1"})
	if len(got) != 1 || got[0].Source != "SLURM_TASKS_PER_NODE=8(x2), SLURM_NODEID=1" {
		t.Errorf("got %+v", got)
	}
}
