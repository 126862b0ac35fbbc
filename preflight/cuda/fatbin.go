package cuda

import "github.com/gpu-preflight/gpu-preflight/preflight/facts"

// FatbinLibrary picks the library whose fatbin kernel mode loads: the first
// framework's own kernel library with the most targets (the larger on a tie),
// NVIDIA's and lazily loaded ones only when there is no other.
func FatbinLibrary(frameworks []facts.Framework) (framework, library string, ok bool) {
	for _, f := range frameworks {
		if lib, ok := bestKernelLibrary(f.Kernels, false); ok {
			return f.Name, lib, true
		}
		if lib, ok := bestKernelLibrary(f.Kernels, true); ok {
			return f.Name, lib, true
		}
	}
	return "", "", false
}

// bestKernelLibrary is FatbinLibrary's pick; others admits the CUDA and lazy ones.
func bestKernelLibrary(libs []facts.KernelLibrary, others bool) (string, bool) {
	var best *facts.KernelLibrary
	for i := range libs {
		k := &libs[i]
		if k.Error != "" || len(k.Images) == 0 || (!others && (k.CUDA || k.Lazy)) {
			continue
		}
		if best == nil || len(k.Images) > len(best.Images) ||
			(len(k.Images) == len(best.Images) && k.Size > best.Size) {
			best = k
		}
	}
	if best == nil {
		return "", false
	}
	return best.Path, true
}
