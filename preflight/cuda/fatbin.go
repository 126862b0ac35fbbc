package cuda

import "github.com/gpu-preflight/gpu-preflight/preflight/facts"

// FatbinLibrary picks the framework library whose fatbin kernel mode loads:
// of the first framework (in scan order) with a scanned kernel library that
// carries loadable images, the library with the most distinct targets, the
// larger on a tie (libtorch_cuda.so rather than libc10_cuda.so). It returns
// the framework's name and the library's path inside the root.
func FatbinLibrary(frameworks []facts.Framework) (framework, library string, ok bool) {
	for _, f := range frameworks {
		var best *facts.KernelLibrary
		for i := range f.Kernels {
			k := &f.Kernels[i]
			if k.Error != "" || len(k.Images) == 0 {
				continue
			}
			if best == nil || len(k.Images) > len(best.Images) ||
				(len(k.Images) == len(best.Images) && k.Size > best.Size) {
				best = k
			}
		}
		if best != nil {
			return f.Name, best.Path, true
		}
	}
	return "", "", false
}
