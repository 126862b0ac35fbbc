package check

import (
	"fmt"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// RowRemap is the `row-remap` check: no visible GPU has a row remapping
// pending (reset it) or failed (drain), both node faults
// (docs/node-health.md, "Row remapping").
var RowRemap = Check{ID: "row-remap", rule: rowRemap}

func rowRemap(in Input) Finding {
	gpus, skip := healthGPUs(in)
	if skip != nil {
		return *skip
	}
	var v verdict
	for _, g := range gpus {
		r := g.Health.RemappedRows
		switch {
		case r == nil:
		case r.Failed:
			v.add(Error, true, fmt.Sprintf("%s has had a row remapping fail (%d row(s) remapped for uncorrectable errors)", gpuRef(g), r.Uncorrectable),
				fmt.Sprintf("drain the node and have GPU %d replaced: a failed row remapping is an RMA condition", g.Index))
		case r.Pending:
			v.add(Error, true, fmt.Sprintf("%s has a row remapping pending after memory errors (%d uncorrectable, %d correctable row(s) remapped)", gpuRef(g), r.Uncorrectable, r.Correctable),
				fmt.Sprintf("reset GPU %d (nvidia-smi -r -i %d) or reboot the node: the remapping takes effect at the next reset; run the job on another node meanwhile", g.Index, g.Index))
		}
	}
	v.unread(gpus, "remappedRows")
	return v.finding("no row remapping pending or failed: " + answeredCount(gpus, "remappedRows", func(h facts.GPUHealth) bool { return h.RemappedRows != nil }))
}
