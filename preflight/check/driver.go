package check

import (
	"fmt"
	"strings"
)

// Driver is the `driver` check: an NVIDIA kernel driver is present. No
// driver only warns unless a GPU is required: CPU-only runs are legitimate.
var Driver = Check{ID: "driver", rule: driver}

func driver(in Input) Finding {
	h := in.Facts.Host
	f := Finding{}
	if h.Driver.Present() {
		f.Status = Pass
		f.Message = fmt.Sprintf("NVIDIA driver %s (supports CUDA <= %s) from %s",
			h.Driver.Version, orUnknown(h.Driver.CUDAVersion), h.Driver.Source)
		return f
	}
	var seen []string
	if len(h.DeviceNodes) > 0 {
		seen = append(seen, strings.Join(h.DeviceNodes, ", ")+" present")
	}
	if len(h.GPUs) > 0 {
		seen = append(seen, fmt.Sprintf("%d GPU(s) listed", len(h.GPUs)))
	}
	f.Status = Warn
	if in.Options.RequireGPU {
		f.Status = Error
	}
	if len(seen) > 0 {
		f.Message = fmt.Sprintf("NVIDIA driver version unknown (%s, but no /proc/driver/nvidia/version and NVML %s)",
			strings.Join(seen, "; "), orUnknown(h.NVML.Outcome))
		f.Remedy = "make the driver's /proc/driver/nvidia tree and libnvidia-ml.so.1 visible in the container (run it with the NVIDIA Container Toolkit)"
		return f
	}
	f.Message = fmt.Sprintf("no NVIDIA driver found: no /proc/driver/nvidia/version, no /dev/nvidia* device, NVML %s",
		orUnknown(h.NVML.Outcome))
	f.Remedy = "run the container with GPUs (docker run --gpus all, Kubernetes resource nvidia.com/gpu, or the nvidia runtime class); for a CPU-only run this warning is expected"
	if f.Status == Error {
		f.Remedy += "; PREFLIGHT_REQUIRE_GPU=true makes it an error"
	}
	return f
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
