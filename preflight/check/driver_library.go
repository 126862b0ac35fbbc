package check

import (
	"fmt"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// DriverLibrary is the `driver-library` check: the NVML library the job's
// processes load is the version of the kernel module that runs
// (/proc/driver/nvidia/version), or NVML fails with "Driver/library
// version mismatch" and CUDA with error 803. The library's file name
// carries its version; NVML's own NVML_ERROR_LIB_RM_VERSION_MISMATCH says
// it too. When the NVIDIA Container Toolkit injected the library (a bind
// mount), the host's driver was upgraded without reloading its module: a
// node fault, fixed by a reboot. A library of the image's own files is
// the image's: the mismatch code (docs/node-health.md, "Driver and
// library").
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
