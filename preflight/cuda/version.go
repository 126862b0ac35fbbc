package cuda

import "fmt"

// Version formats a CUDA version integer, nvmlSystemGetCudaDriverVersion's
// or cuDriverGetVersion's (12040), as "major.minor" (12.4) with NVML's own
// macros: NVML_CUDA_DRIVER_VERSION_MAJOR is v/1000 and _MINOR is
// (v%1000)/10 (nvml.h; docs/sources.md, "NVML"). This is not
// libnvidia-container's v%100/10, which would render 13100 as "13.0"
// (docs/sources.md, "Requirement facts of the host"). It returns "" for a
// version that is not positive.
func Version(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}
