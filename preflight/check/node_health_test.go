package check

import (
	"fmt"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// nodeHealthChecks are the checks over facts.GPUHealth.
var nodeHealthChecks = []Check{RowRemap, NVLinkFabric, GPUInUse, GPUDegraded}

// model is what a healthy, idle GPU of one model reports, as
// test/fakenvml's scenarios script it (docs/node-health.md, "Scenarios").
type model struct {
	name           string
	links          int  // NVLinks; 0: NOT_SUPPORTED
	fabric         bool // registered in an NVLink fabric; false: NOT_SUPPORTED
	gen, gpuGen    int  // the link's and the GPU's maximum PCIe generation; 0: not answered
	width, maxWide int
}

var (
	dgxA100  = model{name: "NVIDIA A100-SXM4-80GB", links: 12, gen: 4, gpuGen: 4, width: 16, maxWide: 16}
	dgxH100  = model{name: "NVIDIA H100 80GB HBM3", links: 18, fabric: true, gen: 5, gpuGen: 5, width: 16, maxWide: 16}
	dgxB200  = model{name: "NVIDIA B200", links: 18, fabric: true, gen: 5, width: 16, maxWide: 16}
	gb200    = model{name: "NVIDIA GB200", links: 18, fabric: true}
	pcieL40S = model{name: "NVIDIA L40S", gen: 4, gpuGen: 4, width: 16, maxWide: 16}
)

// gpu is GPU i of model m, healthy and idle.
func (m model) gpu(i int) facts.GPU {
	idle := uint64(1)
	h := &facts.GPUHealth{
		RemappedRows:   &facts.RemappedRows{},
		Memory:         &facts.MemoryUse{TotalBytes: 80 << 30},
		Processes:      &facts.Processes{},
		ComputeMode:    facts.ComputeModeDefault,
		ClockEventMask: &idle,
	}
	if m.links > 0 {
		h.NVLink = &facts.NVLink{Active: m.links}
	} else {
		h.Unsupported = append(h.Unsupported, "nvlink")
	}
	if m.fabric {
		h.Fabric = &facts.Fabric{State: facts.FabricCompleted}
	} else {
		h.Unsupported = append(h.Unsupported, "fabric")
	}
	if m.gen > 0 {
		h.PCIe = &facts.PCIe{CurrentGeneration: 1, CurrentWidth: m.width, MaxGeneration: m.gen, MaxWidth: m.maxWide, GPUMaxGeneration: m.gpuGen}
	}
	return facts.GPU{Index: i, Name: m.name, UUID: fmt.Sprintf("GPU-%d", i), PCIBusID: fmt.Sprintf("00000000:%02X:00.0", 0x18+i), MIGMode: "disabled", Health: h}
}

// node is n GPUs of m, with change applied to GPU sick when it is set.
func (m model) node(n int, sick int, change func(*facts.GPUHealth)) Input {
	gpus := make([]facts.GPU, n)
	for i := range gpus {
		gpus[i] = m.gpu(i)
		if i == sick && change != nil {
			change(gpus[i].Health)
		}
	}
	return Input{Facts: facts.Facts{Host: facts.Host{GPUs: gpus, NVML: facts.NVML{Outcome: facts.ProbeOK}}}, Visible: gpus}
}

// Healthy A100, H100, B200 and GB200 nodes, and PCIe cards without
// NVLink or fabric, give no finding: NOT_SUPPORTED is no fault.
func TestHealthyNodesGiveNoFinding(t *testing.T) {
	for _, tt := range []struct {
		m model
		n int
	}{{dgxA100, 8}, {dgxH100, 8}, {dgxB200, 8}, {gb200, 4}, {pcieL40S, 4}} {
		in := tt.m.node(tt.n, -1, nil)
		for _, c := range nodeHealthChecks {
			if f := c.Run(in); f.Status != Pass {
				t.Errorf("%s x%d: %s %s: %s | %s", tt.m.name, tt.n, f.ID, f.Status, f.Message, f.Remedy)
			}
		}
	}
}

// Without visible GPUs, NVML or health facts the checks skip: nothing was
// read, so nothing passed.
func TestNodeHealthChecksSkipWhatWasNotRead(t *testing.T) {
	noHealth := dgxH100.node(2, -1, nil)
	for i := range noHealth.Visible {
		noHealth.Visible[i].Health = nil
	}
	noNVML := dgxH100.node(2, -1, nil)
	noNVML.Facts.Host.NVML.Outcome = facts.ProbeDriverNotLoaded
	for name, in := range map[string]Input{"no visible GPU": {}, "NVML did not answer": noNVML, "no health reported": noHealth} {
		for _, c := range nodeHealthChecks {
			if f := c.Run(in); f.Status != Skip {
				t.Errorf("%s: %s %s: %s", name, f.ID, f.Status, f.Message)
			}
		}
	}
}

// A call NVML failed is said, as info: never read as healthy or as sick.
func TestNodeHealthChecksSayWhatNVMLCouldNotRead(t *testing.T) {
	for _, tt := range []struct {
		check Check
		key   string
	}{{RowRemap, "remappedRows"}, {NVLinkFabric, "fabric"}, {GPUInUse, "processes"}, {GPUDegraded, "nvlink"}} {
		in := dgxH100.node(2, 1, func(h *facts.GPUHealth) { h.Errors = map[string]string{tt.key: "GPU is lost"} })
		f := tt.check.Run(in)
		if f.Status != Info || f.NodeFault {
			t.Errorf("%s: %s nodeFault %v", f.ID, f.Status, f.NodeFault)
		}
		checkFindingText(t, f, []string{"GPU 1", tt.key, "GPU is lost", "nvidia-smi -q -i 1"})
	}
}
