package check

import (
	"fmt"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// NVLinkFabric is the `nvlink-fabric` check: every visible GPU of an
// NVLink fabric completed its registration, successfully, or CUDA fails
// with error 802 (a node fault); a degraded health mask warns
// (docs/node-health.md, "NVLink fabric").
var NVLinkFabric = Check{ID: "nvlink-fabric", rule: nvlinkFabric}

func nvlinkFabric(in Input) Finding {
	gpus, skip := healthGPUs(in)
	if skip != nil {
		return *skip
	}
	const remedy = "start the NVIDIA Fabric Manager at the driver's version on the host (systemctl status nvidia-fabricmanager; " +
		"on GB200, the NVLink switch trays' fabric manager), then check nvidia-smi -q | grep -A 8 Fabric; run the job on another node meanwhile"
	var v verdict
	for _, g := range gpus {
		f := g.Health.Fabric
		switch {
		case f == nil:
		case f.State != facts.FabricCompleted:
			v.add(Error, true, fmt.Sprintf("%s has not registered with the NVLink fabric (state %s): CUDA will fail with error 802, system not yet initialized", gpuRef(g), f.State), remedy)
		case f.Status != 0:
			v.add(Error, true, fmt.Sprintf("%s's NVLink fabric registration failed: %s (status %d)", gpuRef(g), orUnknown(f.StatusText), f.Status), remedy)
		case len(f.Degraded) > 0:
			v.add(Warn, true, fmt.Sprintf("%s's NVLink fabric reports %s", gpuRef(g), strings.Join(f.Degraded, ", ")),
				"look at the fabric on the host (nvidia-smi -q | grep -A 12 Fabric) and the fabric manager's log; drain the node if it stays degraded")
		}
	}
	v.unread(gpus, "fabric")
	return v.finding("every GPU in an NVLink fabric completed its registration: " + answeredCount(gpus, "fabric", func(h facts.GPUHealth) bool { return h.Fabric != nil }))
}
