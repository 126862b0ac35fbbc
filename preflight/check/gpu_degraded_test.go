package check

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

func TestGPUDegraded(t *testing.T) {
	tests := []struct {
		rule   string
		m      model
		change func(*facts.GPUHealth)
		status Status
		says   []string
	}{
		{"NVLinks down where same-model peers have them up warn, naming the peers", dgxH100, func(h *facts.GPUHealth) {
			h.NVLink = &facts.NVLink{Active: 14, Inactive: []int{3, 7, 11, 15}}
		}, Warn, []string{"GPU 6", "14 NVLink(s) active", "3, 7, 11, 15", "7 peer(s) of model NVIDIA H100 80GB HBM3 have up to 18", "nvidia-smi nvlink -s -i 6"}},
		{"no GPU with NVLink support (PCIe cards) gives none", pcieL40S, func(*facts.GPUHealth) {}, Pass, nil},
		{"a narrower PCIe link than it can reach warns", dgxA100, func(h *facts.GPUHealth) { h.PCIe.CurrentWidth = 8 }, Warn,
			[]string{"GPU 6", "x8 of the x16", "lspci -vv -s 00000000:1E:00.0"}},
		{"a lower current generation is an idle GPU's, no finding", dgxA100, func(h *facts.GPUHealth) { h.PCIe.CurrentGeneration = 1 }, Pass, nil},
		{"a link reaching a lower generation than its peers' warns", dgxH100, func(h *facts.GPUHealth) { h.PCIe.MaxGeneration = 3 }, Warn,
			[]string{"GPU 6", "reaches Gen3", "supports Gen5", "reaches Gen5"}},
		{"without the GPU's own generation, a link below a same-model peer's warns", dgxB200, func(h *facts.GPUHealth) { h.PCIe.MaxGeneration = 4 }, Warn,
			[]string{"GPU 6", "reaches Gen4 where a peer", "reaches Gen5"}},
		{"HW slowdown, thermal and power brake clock events warn", dgxB200, func(h *facts.GPUHealth) {
			h.ClockEvents = []string{facts.ClockHWSlowdown, facts.ClockHWPowerBrake}
		}, Warn, []string{"GPU 6", "hw-slowdown, hw-power-brake-slowdown", "nvidia-smi -q -d PERFORMANCE"}},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			f := GPUDegraded.Run(tt.m.node(8, 6, tt.change))
			if f.ID != "gpu-degraded" || f.Status != tt.status || f.NodeFault != (tt.status == Warn) {
				t.Fatalf("%s %s nodeFault %v: %s", f.ID, f.Status, f.NodeFault, f.Message)
			}
			checkFindingText(t, f, tt.says)
		})
	}
}

// Every GPU of a model capped alike by its slots is the server's design:
// a note, not a warning, so a fleet of such servers does not warn.
func TestGPUDegradedNotesACapEveryPeerShares(t *testing.T) {
	in := dgxH100.node(8, -1, nil)
	for _, g := range in.Visible {
		g.Health.PCIe.MaxGeneration = 4
	}
	f := GPUDegraded.Run(in)
	if f.Status != Info || f.NodeFault {
		t.Fatalf("%s nodeFault %v: %s", f.Status, f.NodeFault, f.Message)
	}
	checkFindingText(t, f, []string{"GPU(s) 0, 1, 2, 3, 4, 5, 6, 7", "reach Gen4", "supports Gen5", "not a fault"})
}
