package check

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// Node faults are the findings about the node's health, not about whether
// the image fits the driver: a hung NVML, a driver present but not loaded,
// an unhealthy GPU. Everything else, and every passing finding, is not.
func TestNodeFaultMarksTheNodesHealthOnly(t *testing.T) {
	procfs := facts.Driver{Version: "550.54.15", CUDAVersion: "12.4", Source: "procfs"}
	sick := healthyGPU(0)
	sick.PersistenceMode = "disabled"
	tests := []struct {
		rule      string
		check     Check
		in        Input
		nodeFault bool
	}{
		{"a hung NVML is a node fault", NVML,
			Input{Facts: facts.Facts{Host: facts.Host{Driver: procfs, NVML: facts.NVML{Outcome: facts.ProbeTimeout}}}}, true},
		{"a driver present but not loaded is a node fault", NVML,
			Input{Facts: facts.Facts{Host: facts.Host{Driver: procfs, NVML: facts.NVML{Outcome: facts.ProbeDriverNotLoaded}}}}, true},
		{"no driver at all (a CPU-only host) is not", NVML,
			Input{Facts: facts.Facts{Host: facts.Host{NVML: facts.NVML{Outcome: facts.ProbeDriverNotLoaded}}}}, false},
		{"a library version mismatch may be the image's: not", NVML,
			Input{Facts: facts.Facts{Host: facts.Host{Driver: procfs, NVML: facts.NVML{Outcome: facts.ProbeInitFailed}}}}, false},
		{"an unhealthy GPU is a node fault", GPUHealth,
			Input{Facts: facts.Facts{Host: facts.Host{GPUs: []facts.GPU{sick}, NVML: facts.NVML{Outcome: facts.ProbeOK}}},
				Visible: []facts.GPU{sick}}, true},
		{"a healthy GPU is not", GPUHealth,
			Input{Facts: facts.Facts{Host: facts.Host{GPUs: []facts.GPU{healthyGPU(0)}, NVML: facts.NVML{Outcome: facts.ProbeOK}}},
				Visible: []facts.GPU{healthyGPU(0)}}, false},
		{"too few GPUs is the request's, not the node's health", GPUCount,
			Input{Options: Options{MinGPUs: 2}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			if f := tt.check.Run(tt.in); f.NodeFault != tt.nodeFault {
				t.Errorf("%s %s (%s): NodeFault %v, want %v", f.ID, f.Status, f.Message, f.NodeFault, tt.nodeFault)
			}
		})
	}
}
