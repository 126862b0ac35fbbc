// Package gpuarch reads and names GPU compilation targets as nvcc and the
// frameworks write them: a real architecture, whose cubin runs on GPUs of
// that compute capability ("sm_90"), or a virtual one, whose PTX the driver
// compiles ("compute_90"). It is pure: the fatbin scanner, the image scan and
// the checks share it.
package gpuarch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Arch is one GPU compilation target: a real architecture (a cubin, "sm_90")
// or a virtual one (PTX, "compute_90").
type Arch struct {
	// Major and Minor are the compute capability, 9 and 0 for sm_90.
	Major, Minor int
	// Suffix is 0, 'a' (architecture-specific: runs only on exactly this
	// compute capability) or 'f' (family-specific: runs on this major with an
	// equal or higher minor). Source: docs/fatbin.md "Loading rules".
	Suffix byte
	// PTX is true for a virtual architecture (compute_XY), which the driver
	// JIT-compiles; false for a real one (sm_XY).
	PTX bool
}

// String returns the nvcc spelling: "sm_90a", "compute_80", "sm_100".
func (a Arch) String() string {
	prefix := "sm_"
	if a.PTX {
		prefix = "compute_"
	}
	s := prefix + strconv.Itoa(a.Major) + strconv.Itoa(a.Minor)
	if a.Suffix != 0 {
		s += string(rune(a.Suffix))
	}
	return s
}

// SM returns the architecture number as nvcc and the fatbin header write it:
// 90 for sm_90, 120 for sm_120.
func (a Arch) SM() int { return a.Major*10 + a.Minor }

var errSyntax = errors.New("want sm_XY, compute_XY, XY or X.Y with an optional a/f suffix, or X.Y+PTX")

// Parse reads one target as frameworks and nvcc write it:
//
//	"sm_90", "sm_90a", "sm_100f"        real architecture (cubin)
//	"compute_80", "compute_100f"        virtual architecture (PTX)
//	"90", "90a", "9.0", "9.0a"          real architecture, as in Paddle's
//	                                    compiled_cuda_archs and TORCH_CUDA_ARCH_LIST
//	"8.6+PTX", "86+PTX"                 the PTX part of a TORCH_CUDA_ARCH_LIST
//	                                    entry: compute_86
//
// TORCH_CUDA_ARCH_LIST's "8.6+PTX" builds both sm_86 and compute_86; Parse
// returns only compute_86. Case and surrounding space are ignored.
func Parse(s string) (Arch, error) {
	in := s
	s = strings.ToLower(strings.TrimSpace(s))
	var a Arch
	if rest, ok := strings.CutSuffix(s, "+ptx"); ok {
		s, a.PTX = rest, true
		if strings.HasPrefix(s, "compute_") {
			return Arch{}, fmt.Errorf("GPU target %q: +PTX goes with a number, not compute_: %w", in, errSyntax)
		}
		s = strings.TrimPrefix(s, "sm_")
	} else if rest, ok := strings.CutPrefix(s, "sm_"); ok {
		s = rest
	} else if rest, ok := strings.CutPrefix(s, "compute_"); ok {
		s, a.PTX = rest, true
	}
	if n := len(s); n > 0 && (s[n-1] == 'a' || s[n-1] == 'f') {
		a.Suffix = s[n-1]
		s = s[:n-1]
	}
	var major, minor string
	if m, n, dotted := strings.Cut(s, "."); dotted {
		major, minor = m, n
	} else if len(s) >= 2 {
		major, minor = s[:len(s)-1], s[len(s)-1:]
	}
	if !digits(major, 1, 2) || !digits(minor, 1, 1) {
		return Arch{}, fmt.Errorf("GPU target %q: %w", in, errSyntax)
	}
	a.Major, _ = strconv.Atoi(major)
	a.Minor, _ = strconv.Atoi(minor)
	if a.Major == 0 {
		return Arch{}, fmt.Errorf("GPU target %q: major version 0 does not exist: %w", in, errSyntax)
	}
	return a, nil
}

// digits reports whether s is between min and max ASCII decimal digits.
func digits(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
