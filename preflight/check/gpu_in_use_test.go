package check

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

func TestGPUInUse(t *testing.T) {
	busy := &facts.Processes{Count: 1, First: []facts.Process{{PID: 48213, UsedBytes: 32 << 30}}}
	tests := []struct {
		rule      string
		change    func(*facts.GPUHealth)
		mig       bool
		ranks     []facts.Ranks
		status    Status
		nodeFault bool
		says      []string
	}{
		{"an idle GPU passes", func(*facts.GPUHealth) {}, false, nil, Pass, false, nil},
		{"a process on the GPU is a node fault", func(h *facts.GPUHealth) { h.Processes = busy }, false, nil, Error, true,
			[]string{"GPU 2", "PID 48213 (32768 MiB)", "host", "another node", "PREFLIGHT_IGNORE=gpu-in-use"}},
		{"exclusive-process mode with a process says no second one fits", func(h *facts.GPUHealth) {
			h.Processes, h.ComputeMode = busy, facts.ComputeModeExclusiveProcess
		}, false, nil, Error, true, []string{"exclusive-process", "no second process"}},
		{"exclusive-process mode alone passes", func(h *facts.GPUHealth) { h.ComputeMode = facts.ComputeModeExclusiveProcess }, false, nil, Pass, false, nil},
		{"compute mode prohibited is a node fault", func(h *facts.GPUHealth) { h.ComputeMode = facts.ComputeModeProhibited }, false, nil, Error, true,
			[]string{"prohibited", "nvidia-smi -i 2 -c DEFAULT"}},
		{"memory no listed process holds is another PID namespace's, a node fault", func(h *facts.GPUHealth) { h.Memory.UsedBytes = 20 << 30 }, false, nil, Error, true,
			[]string{"GPU 2", "20480 MiB", "no process of this PID namespace", "another node", "PREFLIGHT_IGNORE=gpu-in-use"}},
		{"memory held where NVML gave no process list is still a node fault", func(h *facts.GPUHealth) {
			h.Memory.UsedBytes, h.Processes = 20<<30, nil
		}, false, nil, Error, true, []string{"20480 MiB of 81920 MiB allocated", "another node"}},
		{"exclusive-process mode with memory held says no second one fits", func(h *facts.GPUHealth) {
			h.Memory.UsedBytes, h.ComputeMode = 20<<30, facts.ComputeModeExclusiveProcess
		}, false, nil, Error, true, []string{"20480 MiB", "no second process"}},
		{"a few MiB allocated is an idle GPU", func(h *facts.GPUHealth) { h.Memory.UsedBytes = 4 << 20 }, false, nil, Pass, false, nil},
		{"a GPU in MIG mode is shared by design", func(h *facts.GPUHealth) { h.Processes = busy }, true, nil, Pass, false, nil},
		{"processes beside per-rank siblings may be the job's own", func(h *facts.GPUHealth) { h.Processes = busy }, false,
			[]facts.Ranks{{Launcher: facts.LauncherSlurm, Source: "SLURM_NTASKS_PER_NODE=8", PerNode: 8}}, Info, false,
			[]string{"other ranks", "SLURM_NTASKS_PER_NODE=8"}},
		{"memory held beside per-rank siblings may be the job's own", func(h *facts.GPUHealth) { h.Memory.UsedBytes = 20 << 30 }, false,
			[]facts.Ranks{{Launcher: facts.LauncherTorchWorker, Source: "LOCAL_WORLD_SIZE=8", PerNode: 8}}, Info, false,
			[]string{"other ranks", "LOCAL_WORLD_SIZE=8"}},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			in := dgxH100.node(8, 2, tt.change)
			if tt.mig {
				in.Visible[2].MIGMode = "enabled"
			}
			in.Facts.Container.Ranks = tt.ranks
			f := GPUInUse.Run(in)
			if f.ID != "gpu-in-use" || f.Status != tt.status || f.NodeFault != tt.nodeFault {
				t.Fatalf("%s %s nodeFault %v: %s", f.ID, f.Status, f.NodeFault, f.Message)
			}
			checkFindingText(t, f, tt.says)
		})
	}
}
