package check

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

func healthyGPU(i int) facts.GPU {
	zero, no := uint64(0), false
	return facts.GPU{Index: i, UUID: "GPU-" + string(rune('a'+i)), Brand: "Nvidia", ComputeCapability: "8.0",
		MIGMode: "disabled", PersistenceMode: "enabled", ECCUncorrectedVolatile: &zero, RetiredPagesPending: &no}
}

func TestGPUHealthCheck(t *testing.T) {
	three, yes, none, two := uint64(3), true, 0, 2
	tests := []struct {
		rule   string
		nvml   string
		gpus   []facts.GPU
		change func(g *facts.GPU)
		status Status
		says   []string
	}{
		{"healthy GPUs pass", facts.ProbeOK, []facts.GPU{healthyGPU(0), healthyGPU(1)}, nil, Pass, []string{"2 visible GPU(s)"}},
		{"no visible GPU is skipped", facts.ProbeOK, nil, nil, Skip, []string{"no visible GPU"}},
		{"without NVML the check is skipped, not passed", facts.ProbeDriverNotLoaded, []facts.GPU{{Index: 0}}, nil, Skip,
			[]string{"needs NVML", "driver-not-loaded"}},
		{"uncorrected ECC errors warn", facts.ProbeOK, []facts.GPU{healthyGPU(0), healthyGPU(1)},
			func(g *facts.GPU) { g.ECCUncorrectedVolatile = &three }, Warn,
			[]string{"GPU 1 (GPU-b) has 3 uncorrected ECC error(s)", "nvidia-smi -r -i 1"}},
		{"pending retired pages warn", facts.ProbeOK, []facts.GPU{healthyGPU(0), healthyGPU(1)},
			func(g *facts.GPU) { g.RetiredPagesPending = &yes }, Warn,
			[]string{"GPU 1", "retired memory pages", "reboot"}},
		{"persistence mode off warns", facts.ProbeOK, []facts.GPU{healthyGPU(0), healthyGPU(1)},
			func(g *facts.GPU) { g.PersistenceMode = "disabled" }, Warn,
			[]string{"GPU 1", "persistence mode off", "nvidia-smi -i 1 -pm 1"}},
		{"MIG mode without a MIG device warns", facts.ProbeOK, []facts.GPU{healthyGPU(0), healthyGPU(1)},
			func(g *facts.GPU) { g.MIGMode, g.MIGDevices = "enabled", &none }, Warn,
			[]string{"GPU 1", "MIG mode but no MIG device", "nvidia-smi -i 1 -mig 0"}},
		{"MIG mode with MIG devices passes", facts.ProbeOK, []facts.GPU{healthyGPU(0), healthyGPU(1)},
			func(g *facts.GPU) { g.MIGMode, g.MIGDevices = "enabled", &two }, Pass, nil},
		{"unknown health facts (GeForce: no ECC, no MIG) pass", facts.ProbeOK, []facts.GPU{healthyGPU(0), healthyGPU(1)},
			func(g *facts.GPU) {
				g.ECCUncorrectedVolatile, g.RetiredPagesPending, g.MIGMode, g.PersistenceMode = nil, nil, "", ""
			}, Pass, nil},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			if tt.change != nil {
				tt.change(&tt.gpus[1])
			}
			in := Input{Facts: facts.Facts{Host: facts.Host{GPUs: tt.gpus, NVML: facts.NVML{Outcome: tt.nvml}}}, Visible: tt.gpus}
			f := GPUHealth.Run(in)
			if f.ID != "gpu-health" || f.Status != tt.status {
				t.Fatalf("got %s %s (%s), want %s", f.ID, f.Status, f.Message, tt.status)
			}
			checkFindingText(t, f, tt.says)
		})
	}
}

func TestGPUHealthReportsEveryProblemOnce(t *testing.T) {
	three := uint64(3)
	gpus := []facts.GPU{healthyGPU(0), healthyGPU(1), healthyGPU(2)}
	gpus[0].PersistenceMode, gpus[2].PersistenceMode = "disabled", "disabled"
	gpus[1].ECCUncorrectedVolatile = &three
	in := Input{Facts: facts.Facts{Host: facts.Host{GPUs: gpus, NVML: facts.NVML{Outcome: facts.ProbeOK}}}, Visible: gpus}
	f := GPUHealth.Run(in)
	checkFindingText(t, f, []string{"GPU 0 (GPU-a) has persistence mode off", "GPU 2 (GPU-c) has persistence mode off",
		"GPU 1 (GPU-b) has 3 uncorrected", "nvidia-smi -i 0 -pm 1", "nvidia-smi -i 2 -pm 1"})
	if f.Status != Warn {
		t.Errorf("status %s", f.Status)
	}
}

func TestGPUHealthLooksOnlyAtVisibleGPUs(t *testing.T) {
	gpus := []facts.GPU{healthyGPU(0), healthyGPU(1)}
	gpus[1].PersistenceMode = "disabled"
	in := Input{Facts: facts.Facts{Host: facts.Host{GPUs: gpus, NVML: facts.NVML{Outcome: facts.ProbeOK}}}, Visible: gpus[:1]}
	if f := GPUHealth.Run(in); f.Status != Pass {
		t.Errorf("a hidden GPU's problem leaked into the finding: %s %s", f.Status, f.Message)
	}
}
