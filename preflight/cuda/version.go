package cuda

import "fmt"

// Version formats a CUDA version integer (12040) as "12.4" with NVML's own
// macros, major v/1000 and minor (v%1000)/10 (nvml.h), not
// libnvidia-container's v%100/10, which renders 13100 as "13.0"
// (docs/sources.md). "" for a version that is not positive.
func Version(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}
