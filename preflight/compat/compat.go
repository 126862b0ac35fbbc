package compat

import (
	"fmt"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// MinDriver returns the minimum driver for CUDA toolkit cuda's major.minor.
func MinDriver(cuda string) (string, bool) {
	row, ok := rowOf(toolkitDriver, func(r toolkitDriverRow) string { return r.CUDA }, cuda)
	return row.Driver, ok
}

// rowOf returns the row whose major.minor key is v's major.minor.
func rowOf[R any](rows []R, key func(R) string, v string) (R, bool) {
	mm := version.Prefix(v, 2)
	for _, row := range rows {
		if c, err := version.Compare(key(row), mm); err == nil && c == 0 {
			return row, true
		}
	}
	var none R
	return none, false
}

// DriverCUDA is LookupDriverCUDA without saying whether the version is assumed.
func DriverCUDA(driver string) (string, bool) {
	cuda, _, ok := LookupDriverCUDA(driver)
	return cuda, ok
}

// LookupDriverCUDA returns the highest CUDA version a driver supports and
// whether it is assumed: a branch missing from the table (600) is taken to
// support what the branch below does.
func LookupDriverCUDA(driver string) (cuda string, assumed, ok bool) {
	major := version.Major(driver)
	if major < branchCUDA[0].Branch {
		return "", false, false
	}
	for _, row := range branchCUDA {
		if row.Branch > major {
			break
		}
		cuda, assumed = row.CUDA, row.Branch != major
	}
	// A branch well beyond the table is newer than anything known: its CUDA
	// is at least the last row's, but what exactly is not known.
	if major > branchCUDA[len(branchCUDA)-1].Branch+9 {
		return "", false, false
	}
	return cuda, assumed, true
}

// MVCFloor returns the lowest driver for minor-version compatibility within cudaMajor.
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
	row, ok := rowOf(ptxISA, func(r ptxISARow) string { return r.ISA }, isa)
	return row.CUDA, ok
}

// PTXISABeyond reports whether isa is newer than every ISA in the table, and
// returns the newest row's CUDA, which a driver must exceed to JIT it.
func PTXISABeyond(isa string) (newestCUDA string, beyond bool) {
	last := ptxISA[len(ptxISA)-1]
	c, err := version.Compare(version.Prefix(isa, 2), last.ISA)
	return last.CUDA, err == nil && c > 0
}

// ToolkitTargets returns the compute capabilities CUDA toolkit cuda compiles for, oldest first.
func ToolkitTargets(cuda string) ([]string, bool) {
	mm := version.Prefix(cuda, 2)
	if mm == "" {
		return nil, false
	}
	for i := len(toolkitTargets) - 1; i >= 0; i-- {
		if version.AtLeast(mm, toolkitTargets[i].From) {
			out := make([]string, len(toolkitTargets[i].SMs))
			for j, sm := range toolkitTargets[i].SMs {
				out[j] = fmt.Sprintf("%d.%d", sm/10, sm%10)
			}
			return out, true
		}
	}
	return nil, false
}

// Support says whether a GPU brand is covered by CUDA forward compatibility.
type Support int

// Forward-compatibility support of a brand.
const (
	Unsupported Support = iota
	Maybe               // professional brands: only select SKUs; unknown brands
	Supported
)

// ForwardCompat says whether forward compatibility supports brand (any case); unlisted is Maybe.
func ForwardCompat(brand string) Support {
	for _, b := range forwardCompatBrands {
		if strings.EqualFold(b.brand, brand) {
			return b.support
		}
	}
	return Maybe
}
