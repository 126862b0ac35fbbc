package trace_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/report/trace"
	"github.com/gpu-preflight/gpu-preflight/test/tracetest"
)

var t0 = time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)

const (
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	oldDrv  = "535.161.08"
	newDrv  = "550.54.15"
)

func node(i int) string { return fmt.Sprintf("gpu-node-%02d", i) }

// ledger encodes runs as a ledger does: one compact record per line.
func ledger(t testing.TB, runs []tracetest.Run) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, r := range runs {
		line, err := json.Marshal(tracetest.Record(r))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// traceOf reads each source after the other, as separate sources.
func traceOf(t testing.TB, o trace.Options, sources ...[]byte) trace.Result {
	t.Helper()
	tr := trace.New(o)
	for i, s := range sources {
		for _, err := range tr.Read([]trace.Source{trace.Stream(fmt.Sprintf("source%d", i), bytes.NewReader(s))}) {
			if err != nil {
				t.Fatalf("source%d: %v", i, err)
			}
		}
	}
	return tr.Result()
}

// rollingUpgrade: job slurm:hpc/100 ran on 16 nodes with the old driver;
// then 3 of the 16 nodes were upgraded, and job 101 started on all 16.
func rollingUpgrade() []tracetest.Run {
	var runs []tracetest.Run
	n := 0
	for j, job := range []string{"100", "101"} {
		for rank := range 16 {
			drv, cuda := oldDrv, "12.2"
			if j == 1 && (rank == 3 || rank == 7 || rank == 11) {
				drv, cuda = newDrv, "12.4"
			}
			n++
			runs = append(runs, tracetest.Run{RunID: tracetest.RunID(n), At: t0.Add(time.Duration(j)*time.Hour + time.Duration(rank)*time.Second),
				Node: node(rank), Job: job, Slurm: true, Rank: rank, Driver: drv, DriverCUDA: cuda, Digest: digestA})
		}
	}
	return runs
}

func TestJobsNameTheRanksOnTheUpgradedDriver(t *testing.T) {
	res := traceOf(t, trace.Options{}, ledger(t, rollingUpgrade()))
	if res.MultiRankJobs != 2 {
		t.Errorf("multi-rank jobs %d, want 2", res.MultiRankJobs)
	}
	if len(res.Jobs) != 1 || res.Jobs[0].JobID != "slurm:hpc/101" {
		t.Fatalf("jobs with drift %+v, want only slurm:hpc/101", res.Jobs)
	}
	j := res.Jobs[0]
	if !j.Matters || !res.DriftMatters || j.Ranks != 16 || j.Records != 16 {
		t.Errorf("job %+v: want 16 ranks, 16 records, drift that matters", j)
	}
	var facts []string
	for _, f := range j.Facts {
		facts = append(facts, f.Fact)
	}
	if !slices.Equal(facts, []string{"driver", "driver branch", "driver CUDA"}) {
		t.Errorf("drifting facts %v, want driver, driver branch, driver CUDA", facts)
	}
	drv := j.Facts[0]
	minority, majority := drv.Values[0], drv.Values[1]
	if minority.Value != newDrv || !slices.Equal(minority.Ranks, []string{"3", "7", "11"}) ||
		!slices.Equal(minority.Nodes, []string{node(3), node(7), node(11)}) {
		t.Errorf("minority %+v, want %s on ranks 3, 7, 11 of nodes 03, 07, 11", minority, newDrv)
	}
	if majority.Value != oldDrv || len(majority.Ranks) != 13 || majority.Records != 13 {
		t.Errorf("majority %+v, want %s on 13 ranks", majority, oldDrv)
	}
}

func TestRanksThatAgreeAreNoDrift(t *testing.T) {
	runs := rollingUpgrade()[:16]
	res := traceOf(t, trace.Options{}, ledger(t, runs))
	if len(res.Jobs) != 0 || res.DriftMatters || res.MultiRankJobs != 1 {
		t.Errorf("one job on one driver: jobs %+v, drift %v, multi-rank %d", res.Jobs, res.DriftMatters, res.MultiRankJobs)
	}
}

func TestMinorDriftDoesNotMatter(t *testing.T) {
	runs := rollingUpgrade()[:16]
	runs[5].GPUs = 4 // one rank sees 4 GPUs: a placement, not a fault
	res := traceOf(t, trace.Options{}, ledger(t, runs))
	if len(res.Jobs) != 1 || res.DriftMatters || res.Jobs[0].Facts[0].Fact != "GPU count" {
		t.Fatalf("jobs %+v, drift that matters %v: want GPU count drift that does not matter", res.Jobs, res.DriftMatters)
	}
}

// digestChange: job name ml-resnet (PREFLIGHT_JOB_ID) ran twice, single
// rank: on digest A it succeeded three times, then the image was rebuilt
// (digest B) and it failed twice.
func digestChange() []tracetest.Run {
	var runs []tracetest.Run
	for i := range 5 {
		d, exit := digestA, 0
		if i >= 3 {
			d, exit = digestB, 1
		}
		runs = append(runs, tracetest.Run{RunID: tracetest.RunID(1000 + i), At: t0.Add(time.Duration(i) * 24 * time.Hour),
			Node: node(i % 2), Job: "ml-resnet", Driver: oldDrv, DriverCUDA: "12.2", Digest: d,
			Ref: "registry.example/ml/resnet:latest", Exit: tracetest.Exit(exit)})
	}
	return runs
}

// TestRegressionBoundaryIsTheImageDigestChange: a rollout to a new digest
// continues the image repository's history, so the job's and the image's
// boundary is the last good run on the old digest and the first bad one on
// the new.
func TestRegressionBoundaryIsTheImageDigestChange(t *testing.T) {
	res := traceOf(t, trace.Options{}, ledger(t, digestChange()))
	var job, image *trace.History
	for i, h := range res.Regressions {
		switch {
		case h.Kind == trace.KindJob && h.Key == "ml-resnet":
			job = &res.Regressions[i]
		case h.Kind == trace.KindImage && h.Key == "registry.example/ml/resnet":
			image = &res.Regressions[i]
		}
	}
	if job == nil || image == nil {
		t.Fatalf("no regression for job ml-resnet and image registry.example/ml/resnet: %+v", res.Regressions)
	}
	if !reflect.DeepEqual(job.Boundaries, image.Boundaries) {
		t.Errorf("the image repository's boundary differs from the job's:\n%+v\n%+v", image.Boundaries, job.Boundaries)
	}
	if !job.Failing || job.Runs != 5 || job.Good != 3 || job.Bad != 2 || len(job.Boundaries) != 1 {
		t.Fatalf("history %+v: want failing, 5 runs, 3 good, 2 bad, one boundary", job)
	}
	b := job.Boundaries[0]
	if b.LastGood.RunID != tracetest.RunID(1002) || b.FirstBad.RunID != tracetest.RunID(1003) {
		t.Errorf("boundary %s -> %s, want runs 1002 -> 1003", b.LastGood.RunID, b.FirstBad.RunID)
	}
	if b.GoodRuns != 3 || b.BadRuns != 2 {
		t.Errorf("sides %d good, %d bad; want 3 and 2", b.GoodRuns, b.BadRuns)
	}
	if b.FirstBad.Outcome != "exit 1" || b.LastGood.Outcome != "exit 0" {
		t.Errorf("outcomes %q, %q", b.LastGood.Outcome, b.FirstBad.Outcome)
	}
	first := b.Changes[0]
	if first.Field != "image digest" || first.Old != digestA || first.New != digestB || !first.Matters {
		t.Errorf("first change %+v, want the image digest A -> B", first)
	}
	for _, c := range b.Changes {
		if c.Matters && c.Field != "image digest" {
			t.Errorf("change %+v matters, but only the digest changed", c)
		}
	}
}

func TestSeveralBoundariesAreEachReported(t *testing.T) {
	runs := digestChange()
	// Fixed (back to A), then broken again.
	for i, d := range []string{digestA, digestA, digestB} {
		exit := 0
		if d == digestB {
			exit = 1
		}
		runs = append(runs, tracetest.Run{RunID: tracetest.RunID(2000 + i), At: t0.Add(time.Duration(10+i) * 24 * time.Hour),
			Node: node(0), Job: "ml-resnet", Driver: oldDrv, DriverCUDA: "12.2", Digest: d, Exit: tracetest.Exit(exit)})
	}
	res := traceOf(t, trace.Options{Job: "ml-resnet"}, ledger(t, runs))
	for _, h := range res.Regressions {
		if h.Kind != trace.KindJob {
			continue
		}
		if len(h.Boundaries) != 2 {
			t.Fatalf("%d boundaries, want 2", len(h.Boundaries))
		}
		second := h.Boundaries[1]
		if second.LastGood.RunID != tracetest.RunID(2001) || second.FirstBad.RunID != tracetest.RunID(2002) ||
			second.GoodRuns != 2 || second.BadRuns != 1 {
			t.Errorf("second boundary %+v", second)
		}
		return
	}
	t.Fatal("no job history")
}

func TestRunsGivenNewestFirstGiveTheSameBoundary(t *testing.T) {
	runs := digestChange()
	slices.Reverse(runs)
	res := traceOf(t, trace.Options{Job: "ml-resnet"}, ledger(t, runs))
	for _, h := range res.Regressions {
		if h.Kind == trace.KindJob {
			b := h.Boundaries[0]
			if h.Misplaced != 0 || b.LastGood.RunID != tracetest.RunID(1002) || b.FirstBad.RunID != tracetest.RunID(1003) {
				t.Errorf("reversed input: %+v", h)
			}
			return
		}
	}
	t.Fatal("no job history")
}

// nvmlHang: 16 nodes run jobs; node 09's NVML hangs, so each run there is
// a node-fault abort on the nvml finding; node 04 runs an image that needs
// a newer driver twice (mismatch aborts).
func nvmlHang() []tracetest.Run {
	var runs []tracetest.Run
	n := 0
	for round := range 3 {
		for i := range 16 {
			n++
			r := tracetest.Run{RunID: tracetest.RunID(5000 + n), At: t0.Add(time.Duration(n) * time.Minute), Node: node(i),
				Job: fmt.Sprintf("batch-%d-%d", round, i), Driver: oldDrv, DriverCUDA: "12.2", Digest: digestA}
			if i == 9 {
				r.Abort, r.NodeFault = []string{"nvml"}, true
			}
			if i == 4 && round > 0 {
				r.Abort = []string{"cuda-requirement"}
			}
			runs = append(runs, r)
		}
	}
	return runs
}

func TestNodesDrainTheOneWhoseNVMLHangs(t *testing.T) {
	res := traceOf(t, trace.Options{}, ledger(t, nvmlHang()))
	if !slices.Equal(res.Drain, []string{node(9)}) {
		t.Errorf("drain %v, want only %s", res.Drain, node(9))
	}
	if len(res.Nodes) != 16 {
		t.Fatalf("%d nodes, want 16", len(res.Nodes))
	}
	first, second := res.Nodes[0], res.Nodes[1]
	if first.Name != node(9) || first.Runs != 3 || first.NodeFaultAborts != 3 ||
		!slices.Equal(first.NodeFaultFindings, []trace.FindingCount{{ID: "nvml", Count: 3}}) || !first.Drain {
		t.Errorf("first node %+v, want %s: 3 runs, 3 node-fault aborts on nvml", first, node(9))
	}
	if second.Name != node(4) || second.MismatchAborts != 2 || second.Drain ||
		!slices.Equal(second.MismatchFindings, []trace.FindingCount{{ID: "cuda-requirement", Count: 2}}) {
		t.Errorf("second node %+v, want %s with 2 mismatch aborts, not drained", second, node(4))
	}
	if first.LastDriver != oldDrv {
		t.Errorf("last driver %q", first.LastDriver)
	}
}

func TestFiltersSelectJobImageAndTime(t *testing.T) {
	src := ledger(t, append(rollingUpgrade(), digestChange()...))
	cases := []struct {
		name string
		o    trace.Options
		want int64
	}{
		{"job id", trace.Options{Job: "slurm:hpc/101"}, 16},
		{"job name", trace.Options{Job: "ml-resnet"}, 5},
		{"image digest", trace.Options{Image: digestB}, 2},
		{"image ref", trace.Options{Image: "registry.example/ml/resnet:latest"}, 5},
		{"since", trace.Options{Since: t0.Add(24 * time.Hour)}, 4},
		{"until", trace.Options{Until: t0.Add(time.Hour)}, 16 + 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := traceOf(t, c.o, src)
			if res.Totals.Records != c.want || res.Totals.Records+res.Totals.Filtered != 37 {
				t.Errorf("records %d (filtered %d), want %d of 37", res.Totals.Records, res.Totals.Filtered, c.want)
			}
		})
	}
}

func TestRenderFitsEightyColumns(t *testing.T) {
	runs := append(append(rollingUpgrade(), digestChange()...), nvmlHang()...)
	runs[0].Node = strings.Repeat("very-long-node-name-", 10) + "\x1b[2J"
	res := traceOf(t, trace.Options{}, ledger(t, runs))
	var b bytes.Buffer
	if err := trace.Render(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > trace.Width {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Error("an escape sequence from a record reached the terminal")
	}
	for _, want := range []string{"slurm:hpc/101", "550.54.15: 3 ranks (3, 7, 11)", "job ml-resnet", "image digest", "drain first: " + node(9)} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	t.Log("\n" + out)
}

func TestResultHoldsOnlyRecordsOfThisSchemaVersion(t *testing.T) {
	r := tracetest.Record(digestChange()[0])
	r.SchemaVersion = "2"
	other, _ := json.Marshal(r)
	var problems []trace.Problem
	tr := trace.New(trace.Options{Problem: func(p trace.Problem) { problems = append(problems, p) }})
	tr.Read([]trace.Source{trace.Stream("ledger", bytes.NewReader(append(other, '\n')))})
	res := tr.Result()
	if res.Totals.Records != 0 || res.Totals.OtherSchema != 1 || len(problems) != 1 || problems[0].Kind != trace.ProblemSchema ||
		problems[0].Line != 1 {
		t.Errorf("totals %+v, problems %v", res.Totals, problems)
	}
}

// TestADecisionOfNoKnownActionIsNoAbort: a record whose decision is
// neither exec nor abort (a forgery) is read like any other, not as an
// abort.
func TestADecisionOfNoKnownActionIsNoAbort(t *testing.T) {
	r := tracetest.Record(digestChange()[0])
	r.Decision.Action = "skip"
	b, _ := json.Marshal(r)
	res, _, err := readAll(t, append(b, '\n'))
	if err != nil || res.Totals.Records != 1 || len(res.Nodes) != 1 || res.Nodes[0].NodeFaultAborts+res.Nodes[0].MismatchAborts != 0 {
		t.Errorf("%v: totals %+v, nodes %+v", err, res.Totals, res.Nodes)
	}
}

func TestWriteJSONIsResult(t *testing.T) {
	tr := trace.New(trace.Options{})
	tr.Read([]trace.Source{trace.Stream("l", bytes.NewReader(ledger(t, append(append(rollingUpgrade(), digestChange()...), nvmlHang()...))))})
	var b bytes.Buffer
	if err := tr.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(tr.Result())
	if strings.TrimSpace(b.String()) != string(want) {
		t.Errorf("WriteJSON:\n%s\nResult:\n%s", b.String(), want)
	}
	sum := tr.Summary(1)
	if len(sum.Regressions) != 1 || len(sum.Jobs) != 1 {
		t.Errorf("Summary(1): %d regressions, %d jobs", len(sum.Regressions), len(sum.Jobs))
	}
	var out bytes.Buffer
	trace.Render(&out, sum)
	if !strings.Contains(out.String(), "more (--json lists them all)") {
		t.Errorf("the summary does not say what it left out:\n%s", out.String())
	}
}

func TestAResubmittedJobIsComparedByEachRanksLatestRun(t *testing.T) {
	// Job slurm:hpc/100 again under the same id on a new image: every rank
	// moved, so the ranks agree.
	runs := rollingUpgrade()[:16]
	for rank := range 16 {
		r := runs[rank]
		r.RunID, r.At, r.Digest = tracetest.RunID(700+rank), r.At.Add(2*time.Hour), digestB
		runs = append(runs, r)
	}
	res := traceOf(t, trace.Options{}, ledger(t, runs))
	if len(res.Jobs) != 0 {
		t.Errorf("a resubmission on a new image is drift: %+v", res.Jobs)
	}
	// Rank 5 restarts on an upgraded node: only its latest run counts.
	r := runs[5]
	r.RunID, r.At, r.Node, r.Driver = tracetest.RunID(800), r.At.Add(3*time.Hour), node(16), newDrv
	res = traceOf(t, trace.Options{}, ledger(t, append(runs, r)))
	if len(res.Jobs) != 1 {
		t.Fatalf("jobs %+v", res.Jobs)
	}
	drv := res.Jobs[0].Facts[0].Values[0]
	if drv.Value != newDrv || fmt.Sprint(drv.Ranks, drv.Nodes) != "[5] [gpu-node-16]" || drv.Records != 3 {
		t.Errorf("restarted rank %+v: want rank 5 on gpu-node-16, its 3 records", drv)
	}
}

// One rank of a multi-node job predicted on TCP sockets while the others
// use their InfiniBand HCAs: the job is flagged, that rank named.
func TestRanksThatDisagreeOnTransportAreDrift(t *testing.T) {
	ib := facts.TransportPrediction{Network: facts.NetIB, LinkLayer: "InfiniBand"}
	for i := 7; i >= 0; i-- {
		ib.Devices = append(ib.Devices, fmt.Sprintf("mlx5_%d:1", i))
	}
	var runs []tracetest.Run
	for rank := range 4 {
		p := ib
		if rank == 2 {
			p = facts.TransportPrediction{Network: facts.NetSocket, Interfaces: []string{"eth0"}}
		}
		runs = append(runs, tracetest.Run{RunID: tracetest.RunID(900 + rank), At: t0.Add(time.Duration(rank) * time.Second),
			Node: node(rank), Job: "4242", Slurm: true, Rank: rank, Driver: oldDrv, DriverCUDA: "12.2", Digest: digestA, Transport: p})
	}
	res := traceOf(t, trace.Options{}, ledger(t, runs))
	if len(res.Jobs) != 1 || !res.DriftMatters || len(res.Jobs[0].Facts) != 1 || res.Jobs[0].Facts[0].Fact != "NCCL transport" {
		t.Fatalf("jobs %+v, drift that matters %v; want the job's NCCL transport", res.Jobs, res.DriftMatters)
	}
	odd, usual := res.Jobs[0].Facts[0].Values[0], res.Jobs[0].Facts[0].Values[1]
	if odd.Value != "Socket" || !slices.Equal(odd.Ranks, []string{"2"}) || !slices.Equal(odd.Nodes, []string{node(2)}) {
		t.Errorf("odd one out %+v, want Socket on rank 2", odd)
	}
	if usual.Value != "IB (InfiniBand) on mlx5_0:1 mlx5_1:1 mlx5_2:1 mlx5_3:1 mlx5_4:1 mlx5_5:1 mlx5_6:1 mlx5_7:1" || len(usual.Ranks) != 3 {
		t.Errorf("the others %+v, want IB on the eight HCAs, in order, on 3 ranks", usual)
	}
	runs[2].Transport = ib
	if res := traceOf(t, trace.Options{}, ledger(t, runs)); len(res.Jobs) != 0 {
		t.Errorf("ranks on one network and HCA set flagged: %+v", res.Jobs)
	}
}

// The node-health faults abort with the node-fault code: the nodes they
// hit drain first, the node with more such aborts before the other, each
// with the findings that stopped it.
func TestNodesRankByTheirHealthFaults(t *testing.T) {
	var runs []tracetest.Run
	n := 0
	for round := range 3 {
		for i := range 8 {
			n++
			r := tracetest.Run{RunID: tracetest.RunID(7000 + n), At: t0.Add(time.Duration(n) * time.Minute), Node: node(i),
				Job: fmt.Sprintf("b-%d-%d", round, i), Driver: oldDrv, DriverCUDA: "12.2", Digest: digestA}
			switch {
			case i == 5:
				r.Abort, r.NodeFault = []string{"row-remap"}, true
			case i == 2 && round > 0:
				r.Abort, r.NodeFault = []string{"nvlink-fabric", "gpu-in-use"}, true
			case i == 6:
				r.Abort = []string{"ranks-per-node"}
			}
			runs = append(runs, r)
		}
	}
	res := traceOf(t, trace.Options{}, ledger(t, runs))
	if !slices.Equal(res.Drain, []string{node(5), node(2)}) {
		t.Fatalf("drain %v, want %s (3 row-remap aborts) then %s (2 fabric aborts)", res.Drain, node(5), node(2))
	}
	if f := res.Nodes[0].NodeFaultFindings; !slices.Equal(f, []trace.FindingCount{{ID: "row-remap", Count: 3}}) {
		t.Errorf("%s's findings %+v", node(5), f)
	}
	if f := res.Nodes[1].NodeFaultFindings; !slices.Equal(f, []trace.FindingCount{{ID: "gpu-in-use", Count: 2}, {ID: "nvlink-fabric", Count: 2}}) {
		t.Errorf("%s's findings %+v", node(2), f)
	}
	if third := res.Nodes[2]; third.Name != node(6) || third.Drain || third.MismatchAborts != 3 {
		t.Errorf("third %+v, want %s: 3 mismatch aborts (ranks-per-node), not drained", third, node(6))
	}
}
