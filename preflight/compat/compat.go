package compat

import (
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// MinDriver returns the minimum driver for CUDA toolkit cuda ("11.8",
// "11.8.0" or "11.8.20220929": only major.minor is used).
func MinDriver(cuda string) (string, bool) {
	mm := version.Prefix(cuda, 2)
	for _, row := range toolkitDriver {
		if c, err := version.Compare(row.CUDA, mm); err == nil && c == 0 {
			return row.Driver, true
		}
	}
	return "", false
}

// DriverCUDA returns the highest CUDA version a driver supports, from its
// branch.
func DriverCUDA(driver string) (string, bool) {
	major := version.Major(driver)
	if major < branchCUDA[0].Branch {
		return "", false
	}
	cuda := ""
	for _, row := range branchCUDA {
		if row.Branch > major {
			break
		}
		cuda = row.CUDA
	}
	// A branch beyond the table is newer than anything known: its CUDA
	// version is at least the last row's, but exactly what is not known.
	if major > branchCUDA[len(branchCUDA)-1].Branch+9 {
		return "", false
	}
	return cuda, true
}

// BranchForCUDA returns the first driver branch whose CUDA version is at
// least cuda, e.g. "12.8" -> 570.
func BranchForCUDA(cuda string) (int, bool) {
	mm := version.Prefix(cuda, 2)
	for _, row := range branchCUDA {
		if version.AtLeast(row.CUDA, mm) {
			return row.Branch, true
		}
	}
	return 0, false
}

// MVCFloor returns the lowest driver with which CUDA minor-version
// compatibility works for toolkits of the given major version.
func MVCFloor(cudaMajor int) (string, bool) {
	for _, row := range mvcFloor {
		if row.Major == cudaMajor {
			return row.Driver, true
		}
	}
	return "", false
}

// PTXISACUDA returns the first CUDA release that supports PTX ISA isa ("8.4").
func PTXISACUDA(isa string) (string, bool) {
	mm := version.Prefix(isa, 2)
	for _, row := range ptxISA {
		if c, err := version.Compare(row.ISA, mm); err == nil && c == 0 {
			return row.CUDA, true
		}
	}
	return "", false
}

// ToolkitArchs returns the lowest and highest compute capability that CUDA
// toolkit cuda compiles for.
func ToolkitArchs(cuda string) (min, max string, ok bool) {
	mm := version.Prefix(cuda, 2)
	if mm == "" {
		return "", "", false
	}
	for i := len(toolkitArchs) - 1; i >= 0; i-- {
		if version.AtLeast(mm, toolkitArchs[i].From) {
			return toolkitArchs[i].Min, toolkitArchs[i].Max, true
		}
	}
	return "", "", false
}

// Support says whether a GPU brand is covered by CUDA forward compatibility.
type Support int

// Forward-compatibility support of a brand.
const (
	Unsupported Support = iota
	Maybe               // professional brands: only select SKUs; unknown brands
	Supported
)

// ForwardCompat reports whether CUDA forward compatibility supports GPUs of
// brand (NVML brand string, any case). An empty or unlisted brand is Maybe.
func ForwardCompat(brand string) Support {
	if s, ok := forwardCompatBrands[strings.ToLower(brand)]; ok {
		return s
	}
	return Maybe
}
