package check

import (
	"fmt"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// NVML is the `nvml` check: the NVML probe answered within its deadline.
// "Driver not loaded" without other driver evidence is a CPU-only host
// that carries libnvidia-ml (Debian's libnvidia-ml1): info. With evidence
// it is a broken setup: warn, not error, since `driver` and
// `cuda-requirement` still judge the driver from procfs. A hung NVML and a
// driver present but not loaded are node faults.
var NVML = Check{ID: "nvml", rule: nvmlCheck}

func nvmlCheck(in Input) Finding {
	h := in.Facts.Host
	n := h.NVML
	f := Finding{}
	switch n.Outcome {
	case facts.ProbeOK:
		f.Status = Pass
		f.Message = fmt.Sprintf("NVML %s answered in %.0f ms (%s): driver %s, CUDA %s, %d GPU(s)",
			orUnknown(n.Version), n.DurationMillis, orUnknown(n.Via), orUnknown(h.Driver.Version),
			orUnknown(h.Driver.CUDAVersion), len(h.GPUs))
	case facts.ProbeNotRun, "":
		f.Status = Skip
		f.Message = "NVML probe not run: no NVIDIA driver evidence (no /proc/driver/nvidia/version, no /dev/nvidia*)"
	case facts.ProbeLibraryNotFound:
		f.Status = Info
		f.Message = "NVML library not found (" + orUnknown(n.Error) + "); GPU facts come from procfs only, without brand, compute capability or health"
		f.Remedy = "run the container with the NVIDIA Container Toolkit and NVIDIA_DRIVER_CAPABILITIES including utility (it injects libnvidia-ml.so.1), or point PREFLIGHT_NVML_LIBRARY at it"
	case facts.ProbeDriverNotLoaded:
		if hasDriverEvidence(h) {
			f.Status = Warn
			f.Message = fmt.Sprintf("NVML says %q although the driver left traces (%s); GPU facts come from procfs only",
				orUnknown(n.Error), driverEvidence(h))
			f.Remedy = "check the NVIDIA kernel module on the host (nvidia-smi, dmesg); after a driver upgrade, reboot the node"
			f.NodeFault = true // the driver is there but not working: the node, not the image
		} else {
			f.Status = Info
			f.Message = fmt.Sprintf("NVML loaded but says %q: no NVIDIA kernel driver on this host", orUnknown(n.Error))
			f.Remedy = "expected on a CPU-only host; for a GPU job, run it on a node with the NVIDIA driver and GPUs exposed to the container"
		}
	case facts.ProbeTimeout:
		f.Status = Error
		f.Message = "NVML did not answer: " + orUnknown(n.Error) + "; a hung NVML call usually means a hung driver or GPU"
		f.Remedy = "check the node's GPUs (nvidia-smi on the host, dmesg for Xid errors) and drain it if NVML hangs; " +
			"raise PREFLIGHT_NVML_TIMEOUT if the node is merely slow, or set PREFLIGHT_IGNORE=nvml to start without NVML facts"
		f.NodeFault = true
	case facts.ProbeInitFailed:
		f.Status = Warn
		f.Message = "NVML failed to initialise: " + orUnknown(n.Error) + "; GPU facts come from procfs only"
		f.Remedy = "a \"Driver/library version mismatch\" means the container's libnvidia-ml.so.1 is not the host driver's: " +
			"do not install NVIDIA driver libraries in the image, and reboot the node after a driver upgrade; otherwise check nvidia-smi on the host"
	case facts.ProbeUnavailable:
		f.Status = Info
		if !n.Embedded {
			f.Message = "this gpu-preflight was built without the NVML probe (a plain go build or go install cannot embed it) and no " +
				"gpu-preflight-nvml was found beside it or on PATH; GPU facts come from procfs only, without brand, compute capability or health"
			f.Remedy = "use a binary built with `make build` or from `make dist`, which embed the probe, or install gpu-preflight-nvml beside gpu-preflight"
			break
		}
		f.Message = "NVML probe could not be started (" + orUnknown(n.Error) + "); GPU facts come from procfs only"
		f.Remedy = "allow exec from memfd (vm.memfd_noexec < 2, no seccomp rule against it) or install gpu-preflight-nvml beside gpu-preflight"
	default: // facts.ProbeFailed and anything newer
		f.Status = Warn
		f.Message = "NVML probe failed: " + orUnknown(n.Error) + "; GPU facts come from procfs only"
		f.Remedy = "run gpu-preflight-nvml by hand in the container to see its error, and report it with its output"
	}
	return f
}

func hasDriverEvidence(h facts.Host) bool {
	return h.Driver.Version != "" || len(h.DeviceNodes) > 0
}

func driverEvidence(h facts.Host) string {
	switch {
	case h.Driver.Version != "" && len(h.DeviceNodes) > 0:
		return fmt.Sprintf("driver %s from %s, %d /dev/nvidia* node(s)", h.Driver.Version, orUnknown(h.Driver.Source), len(h.DeviceNodes))
	case h.Driver.Version != "":
		return fmt.Sprintf("driver %s from %s", h.Driver.Version, orUnknown(h.Driver.Source))
	}
	return fmt.Sprintf("%d /dev/nvidia* node(s)", len(h.DeviceNodes))
}
