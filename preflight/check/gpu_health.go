package check

import (
	"fmt"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// GPUHealth is the `gpu-health` check: no uncorrected ECC errors or pending
// retired pages, persistence mode on, a MIG device when MIG is on. Each is
// a warning and a node fault, so under strict policy the job is retried on
// another node. Without NVML facts it is skipped rather than passed.
var GPUHealth = Check{ID: "gpu-health", rule: gpuHealth}

func gpuHealth(in Input) Finding {
	f := Finding{}
	if len(in.Visible) == 0 {
		f.Status = Skip
		f.Message = "no visible GPU"
		return f
	}
	if o := in.Facts.Host.NVML.Outcome; o != facts.ProbeOK {
		f.Status = Skip
		f.Message = "GPU health needs NVML, which did not answer (" + orUnknown(o) + ")"
		return f
	}
	var problems, remedies []string
	addRemedy := func(r string) {
		for _, have := range remedies {
			if have == r {
				return
			}
		}
		remedies = append(remedies, r)
	}
	for _, g := range in.Visible {
		id := fmt.Sprintf("GPU %d (%s)", g.Index, orUnknown(g.UUID))
		if g.ECCUncorrectedVolatile != nil && *g.ECCUncorrectedVolatile > 0 {
			problems = append(problems, fmt.Sprintf("%s has %d uncorrected ECC error(s) since the driver loaded", id, *g.ECCUncorrectedVolatile))
			addRemedy(fmt.Sprintf("drain the node and reset GPU %d (nvidia-smi -r -i %d) or reboot; replace the GPU if the errors return", g.Index, g.Index))
		}
		if g.RetiredPagesPending != nil && *g.RetiredPagesPending {
			problems = append(problems, id+" has retired memory pages waiting for a reboot")
			addRemedy(fmt.Sprintf("reboot the node (or reset GPU %d) so the pending page retirement takes effect", g.Index))
		}
		if g.PersistenceMode == "disabled" {
			problems = append(problems, id+" has persistence mode off, so every process start re-initialises it")
			addRemedy(fmt.Sprintf("on the host, as root: nvidia-smi -i %d -pm 1 (or run nvidia-persistenced)", g.Index))
		}
		if g.MIGMode == "enabled" && g.MIGDevices != nil && *g.MIGDevices == 0 {
			problems = append(problems, id+" is in MIG mode but no MIG device is visible, so CUDA sees no device on it")
			addRemedy(fmt.Sprintf("create GPU and compute instances on GPU %d (nvidia-smi mig -cgi <profiles> -C), disable MIG (nvidia-smi -i %d -mig 0), or request a MIG device instead of the whole GPU", g.Index, g.Index))
		}
	}
	if len(problems) == 0 {
		f.Status = Pass
		f.Message = fmt.Sprintf("%d visible GPU(s): no uncorrected ECC errors or pending page retirements reported, persistence mode not off, MIG usable", len(in.Visible))
		return f
	}
	f.Status = Warn
	f.NodeFault = true
	f.Message = strings.Join(problems, "; ")
	f.Remedy = strings.Join(remedies, "; ")
	return f
}
