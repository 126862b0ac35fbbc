package check

import (
	"fmt"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// DriverLibrary is the `driver-library` check: the NVML library is the
// kernel module's version. Injected by the toolkit (a bind mount), a
// mismatch is the node's, fixed by a reboot; shipped in the image, the
// image's (docs/node-health.md, "Driver and library").
var DriverLibrary = Check{ID: "driver-library", rule: driverLibrary}

func driverLibrary(in Input) Finding {
	lib := in.Facts.Host.NVML.Library
	if lib == nil {
		return Finding{Status: Skip, Message: "no NVML library loaded"}
	}
	module := in.Facts.Host.Driver.Version
	differ := lib.Version != "" && module != "" && lib.Version != module
	switch {
	case lib.RMVersionMismatch || differ:
	case lib.Version != "" && module != "":
		return Finding{Status: Pass, Message: fmt.Sprintf("NVML library %s and kernel module %s are both %s", lib.Path, module, module)}
	case in.Facts.Host.NVML.Outcome == facts.ProbeOK:
		return Finding{Status: Pass, Message: fmt.Sprintf("NVML library %s initialised against the kernel module", lib.Path)}
	default:
		return Finding{Status: Skip, Message: fmt.Sprintf("nothing to compare: NVML library %s (version %s), kernel module %s", lib.Path, orUnknown(lib.Version), orUnknown(module))}
	}
	what := fmt.Sprintf("the kernel module is %s, the NVML library %s is %s", orUnknown(module), lib.Path, orUnknown(lib.Version))
	if lib.RMVersionMismatch {
		what += ", and NVML says \"Driver/library version mismatch\""
	}
	if lib.Mounted != nil && *lib.Mounted {
		return Finding{Status: Error, NodeFault: true,
			Message: what + ": the NVIDIA Container Toolkit injected the host's driver libraries, upgraded without reloading the kernel module",
			Remedy:  "reboot the node (or stop every GPU process and reload the nvidia kernel modules) so the module matches the installed driver; run the job on another node meanwhile"}
	}
	return Finding{Status: Error,
		Message: what + ": the library is a file of the image, not one the NVIDIA Container Toolkit injected from the host",
		Remedy: "remove the NVIDIA driver's user-space libraries from the image (libnvidia-ml.so.*, libcuda.so.*; packages such as libnvidia-compute-*, nvidia-utils-*): " +
			"the toolkit injects the host's own at run time; outside a container, reboot the node so the module matches the installed driver"}
}
