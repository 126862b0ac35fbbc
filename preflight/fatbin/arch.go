package fatbin

import "github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"

// archFromSM splits a fatbin header's decimal arch (90, 120) into major and
// minor: the last decimal digit is the minor (docs/fatbin.md "Layout", arch field).
func archFromSM(sm uint32) gpuarch.Arch {
	return gpuarch.Arch{Major: int(sm / 10), Minor: int(sm % 10)}
}

// validSM reports whether a header's arch number can name a real target:
// two or three decimal digits (sm_10 to sm_999), the range nvcc spells.
func validSM(sm uint32) bool { return sm >= 10 && sm <= 999 }
