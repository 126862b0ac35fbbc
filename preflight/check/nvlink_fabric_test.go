package check

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

func TestNVLinkFabric(t *testing.T) {
	tests := []struct {
		rule   string
		fabric *facts.Fabric
		status Status
		says   []string
	}{
		{"a completed, successful registration passes", &facts.Fabric{State: facts.FabricCompleted, CliqueID: 32766, ClusterUUID: "aa"}, Pass, []string{"8 of 8"}},
		{"a fabric manager not started is a node fault (CUDA 802)", &facts.Fabric{State: facts.FabricNotStarted}, Error,
			[]string{"GPU 5", "not-started", "802", "Fabric Manager", "another node"}},
		{"a registration still in progress is a node fault", &facts.Fabric{State: facts.FabricInProgress}, Error, []string{"in-progress"}},
		{"a registration that completed with an error is a node fault", &facts.Fabric{State: facts.FabricCompleted, Status: 23, StatusText: "Insufficient Resources"}, Error,
			[]string{"GPU 5", "Insufficient Resources", "status 23"}},
		{"a degraded health mask warns", &facts.Fabric{State: facts.FabricCompleted, Degraded: []string{facts.FabricHealthDegradedBandwidth}}, Warn,
			[]string{"GPU 5", "bandwidth degraded"}},
		{"no fabric (NOT_SUPPORTED) is no finding", nil, Pass, []string{"7 of 8", "1 do not support it"}},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			in := dgxH100.node(8, 5, func(h *facts.GPUHealth) {
				h.Fabric = tt.fabric
				if tt.fabric == nil {
					h.Unsupported = append(h.Unsupported, "fabric")
				}
			})
			f := NVLinkFabric.Run(in)
			if f.ID != "nvlink-fabric" || f.Status != tt.status || f.NodeFault != (tt.status != Pass) {
				t.Fatalf("%s %s nodeFault %v: %s", f.ID, f.Status, f.NodeFault, f.Message)
			}
			checkFindingText(t, f, tt.says)
		})
	}
}
