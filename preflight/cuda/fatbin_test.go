package cuda

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

func kernelLib(path string, cuda, lazy bool, targets ...string) facts.KernelLibrary {
	k := facts.KernelLibrary{Path: path, CUDA: cuda, Lazy: lazy}
	for _, t := range targets {
		k.Images = append(k.Images, facts.KernelImage{Kind: "cubin", Arch: t, Count: 1})
	}
	return k
}

// Kernel mode loads the framework's own library, even where one of NVIDIA's
// libraries of its closure (cuSOLVER carries 12 targets in Debian's build,
// libtorch_cuda 9) or a lazily loaded one has more targets; with none of
// its own, the best of the others.
func TestFatbinLibraryPrefersTheFrameworksOwn(t *testing.T) {
	own := kernelLib("/usr/lib/x86_64-linux-gnu/libtorch_cuda.so.2.6", false, false, "sm_80", "sm_90")
	cusolver := kernelLib("/usr/lib/x86_64-linux-gnu/libcusolver.so.11", true, false, "sm_70", "sm_80", "sm_86", "sm_90")
	linalg := kernelLib("/usr/lib/x86_64-linux-gnu/libtorch_cuda_linalg.so", false, true, "sm_70", "sm_80", "sm_86")
	tests := []struct {
		libs []facts.KernelLibrary
		want string
	}{
		{[]facts.KernelLibrary{cusolver, linalg, own}, own.Path},
		{[]facts.KernelLibrary{linalg, cusolver}, cusolver.Path},
	}
	for _, tt := range tests {
		_, got, ok := FatbinLibrary([]facts.Framework{{Name: "torch", Kernels: tt.libs}})
		if !ok || got != tt.want {
			t.Errorf("picked %q (%v), want %q", got, ok, tt.want)
		}
	}
}
