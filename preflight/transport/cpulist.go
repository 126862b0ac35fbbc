package transport

import (
	"strconv"
	"strings"
)

// maxCPU bounds the CPU numbers a list may name: the kernel's NR_CPUS is
// at most 8192 on the distributions' kernels.
const maxCPU = 1 << 13

// CPUSet is a set of CPU numbers.
type CPUSet map[int]bool

// ParseCPUList reads a list in the kernel's format (Cpus_allowed_list,
// local_cpulist: "0-23,48-71", "" for none); ok is false when it is not
// one, or names a CPU past maxCPU.
func ParseCPUList(s string) (set CPUSet, ok bool) {
	set = CPUSet{}
	s = strings.TrimSpace(s)
	if s == "" {
		return set, true
	}
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, ranged := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a >= maxCPU {
			return nil, false
		}
		b := a
		if ranged {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b >= maxCPU {
				return nil, false
			}
		}
		for c := a; c <= b; c++ {
			set[c] = true
		}
	}
	return set, true
}

// Meets reports whether the sets share a CPU.
func (s CPUSet) Meets(t CPUSet) bool {
	for c := range s {
		if t[c] {
			return true
		}
	}
	return false
}
