package cuda

import "github.com/gpu-preflight/gpu-preflight/preflight/facts"

// FatbinLibrary picks the framework library whose fatbin kernel mode loads:
// of the first framework (in scan order) with a scanned kernel library that
// carries loadable images, the library with the most distinct targets, the
// larger on a tie (libtorch_cuda.so rather than libc10_cuda.so). NVIDIA's
// CUDA libraries of its load closure (cuSOLVER, NCCL, ...) and those it
// loads only on first use are taken only when it has no other. It returns
// the framework's name and the library's path inside the root.
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

// bestKernelLibrary is FatbinLibrary's pick among libs, the CUDA and lazy
// ones included only when others is set.
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
