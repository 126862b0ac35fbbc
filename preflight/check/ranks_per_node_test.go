package check

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

func TestRanksPerNode(t *testing.T) {
	torchrun := func(n int) facts.Ranks {
		return facts.Ranks{Launcher: "torchrun", Source: "--nproc-per-node=8", PerNode: n}
	}
	tests := []struct {
		rule    string
		visible int
		ranks   []facts.Ranks
		status  Status
		says    []string
	}{
		{"as many ranks as GPUs pass", 8, []facts.Ranks{torchrun(8)}, Pass, []string{"8 GPU(s) visible", "torchrun --nproc-per-node=8: 8"}},
		{"fewer ranks than GPUs pass", 8, []facts.Ranks{torchrun(4)}, Pass, nil},
		{"more ranks than GPUs is the job's mismatch", 4, []facts.Ranks{torchrun(8)}, Error,
			[]string{"starts 8 processes", "4 GPU(s) are visible", "invalid device ordinal", "at most 4", "nvidia.com/gpu: 8"}},
		{"any launcher's count over the GPUs counts", 4, []facts.Ranks{torchrun(4), {Launcher: "slurm", Source: "SLURM_NTASKS_PER_NODE=8", PerNode: 8}}, Error,
			[]string{"slurm SLURM_NTASKS_PER_NODE=8"}},
		{"a count resting on an assumption warns", 4, []facts.Ranks{{Launcher: "accelerate", Source: "--num_processes=8", PerNode: 8, Assumed: "one machine"}}, Warn,
			[]string{"assuming one machine"}},
		{"no launcher count skips", 4, nil, Skip, nil},
		{"no visible GPU skips: gpu-count speaks for it", 0, []facts.Ranks{torchrun(8)}, Skip, nil},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			in := dgxH100.node(tt.visible, -1, nil)
			in.Facts.Container.Ranks = tt.ranks
			f := RanksPerNode.Run(in)
			if f.ID != "ranks-per-node" || f.Status != tt.status || f.NodeFault {
				t.Fatalf("%s %s nodeFault %v: %s", f.ID, f.Status, f.NodeFault, f.Message)
			}
			checkFindingText(t, f, tt.says)
		})
	}
}
