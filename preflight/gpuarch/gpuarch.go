// Package gpuarch reads and names GPU compilation targets as nvcc and the
// frameworks write them: a real architecture ("sm_90", a cubin) or a virtual
// one ("compute_90", PTX the driver compiles). The fatbin scanner, the image
// scan and the checks share it.
package gpuarch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Arch is one GPU compilation target.
type Arch struct {
	Major, Minor int // the compute capability, 9 and 0 for sm_90
	// Suffix is 0, 'a' (architecture-specific: exactly this capability) or
	// 'f' (family-specific: this major, an equal or higher minor);
	// docs/fatbin.md "Loading rules".
	Suffix byte
	PTX    bool // a virtual architecture (compute_XY), which the driver JIT-compiles
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

// SM returns the architecture number as nvcc and the fatbin header write it: 90, 120.
func (a Arch) SM() int { return a.Major*10 + a.Minor }

var errSyntax = errors.New("want sm_XY, compute_XY, XY or X.Y with an optional a/f suffix, or X.Y+PTX")

// Parse reads one target as frameworks and nvcc write it, case and space
// ignored: "sm_90a", "compute_100f"; "90", "9.0a" (Paddle's
// compiled_cuda_archs, TORCH_CUDA_ARCH_LIST) as real; and "8.6+PTX", of
// which TORCH_CUDA_ARCH_LIST builds sm_86 and compute_86, as compute_86 only.
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
