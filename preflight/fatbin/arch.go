package fatbin

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

// archFromSM splits a fatbin header's decimal arch (90, 120) into major and
// minor: the last decimal digit is the minor (docs/fatbin.md "Layout", arch field).
func archFromSM(sm uint32) Arch {
	return Arch{Major: int(sm / 10), Minor: int(sm % 10)}
}

// validSM reports whether a header's arch number can name a real target:
// two or three decimal digits (sm_10 to sm_999), the range nvcc spells.
func validSM(sm uint32) bool { return sm >= 10 && sm <= 999 }

var errArchSyntax = errors.New("want sm_XY, compute_XY, XY or X.Y with an optional a/f suffix, or X.Y+PTX")

// ParseArch reads one target as frameworks and nvcc write it:
//
//	"sm_90", "sm_90a", "sm_100f"        real architecture (cubin)
//	"compute_80", "compute_100f"        virtual architecture (PTX)
//	"90", "90a", "9.0", "9.0a"          real architecture, as in Paddle's
//	                                    compiled_cuda_archs and TORCH_CUDA_ARCH_LIST
//	"8.6+PTX", "86+PTX"                 the PTX part of a TORCH_CUDA_ARCH_LIST
//	                                    entry: compute_86
//
// TORCH_CUDA_ARCH_LIST's "8.6+PTX" builds both sm_86 and compute_86; ParseArch
// returns only compute_86, ParseArchList returns both. Case and surrounding
// space are ignored.
func ParseArch(s string) (Arch, error) {
	in := s
	s = strings.ToLower(strings.TrimSpace(s))
	var a Arch
	if rest, ok := strings.CutSuffix(s, "+ptx"); ok {
		s, a.PTX = rest, true
		if strings.HasPrefix(s, "compute_") {
			return Arch{}, fmt.Errorf("fatbin: arch %q: +PTX goes with a number, not compute_: %w", in, errArchSyntax)
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
		return Arch{}, fmt.Errorf("fatbin: arch %q: %w", in, errArchSyntax)
	}
	a.Major, _ = strconv.Atoi(major)
	a.Minor, _ = strconv.Atoi(minor)
	if a.Major == 0 {
		return Arch{}, fmt.Errorf("fatbin: arch %q: major version 0 does not exist: %w", in, errArchSyntax)
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
