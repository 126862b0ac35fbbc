package check

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// closureLib is a library the load closure found: soname, version, and
// fatbins each carrying the given targets.
func closureLib(soname, version string, lazy bool, fatbins ...[]string) facts.KernelLibrary {
	l := facts.KernelLibrary{Path: "/usr/lib/x86_64-linux-gnu/" + soname, Soname: soname, Version: version, Lazy: lazy}
	seen := map[string]bool{}
	for _, targets := range fatbins {
		g := lib("", targets...)
		l.Fatbins = append(l.Fatbins, facts.FatbinGroup{Images: g.Images, Count: 1})
		for _, im := range g.Images {
			if !seen[im.Arch] {
				seen[im.Arch] = true
				l.Images = append(l.Images, im)
			}
		}
	}
	return l
}

// Each rule of libraryVerdict, on the libraries Debian's torch loads.
func TestGPUArchJudgesClosureLibrariesByWhatTheyAreFor(t *testing.T) {
	torch := fw("torch", "2.6.0+debian", "12.4")
	nccl := closureLib("libnccl.so.2", "2.22.3", false, []string{"sm_80", "sm_90"})
	b200x2 := []facts.GPU{b200, {Index: 1, Name: "NVIDIA B200", ComputeCapability: "10.0"}}
	tests := []struct {
		name     string
		lib      facts.KernelLibrary
		gpus     []facts.GPU
		status   Status
		contains []string
	}{
		{"NCCL without an image on several GPUs is an error", nccl, b200x2, Error,
			[]string{"libnccl.so.2 2.22.3 has no sm_100 image and no PTX", "collectives", "fail on GPU 0,1 (NVIDIA B200"}},
		{"NCCL without an image on one GPU is a warning: no collective runs", nccl, []facts.GPU{b200}, Warn,
			[]string{"libnccl.so.2 2.22.3 has no sm_100 image"}},
		{"a library loaded on first use without an image is a warning",
			closureLib("libtorch_cuda_linalg.so", "", true, []string{"sm_80"}), []facts.GPU{h100}, Warn,
			[]string{"torch 2.6.0+debian (libtorch_cuda_linalg.so)", "loaded on first use"}},
		{"cuBLASLt's fatbins for other GPUs are not blamed",
			closureLib("libcublasLt.so.12", "12.4.5.8", false, []string{"sm_80", "sm_90"}, []string{"sm_90"}, []string{"sm_75"}), []facts.GPU{a100}, Pass,
			[]string{"2 of its 3 fatbins carry only other GPUs' kernels"}},
		{"a narrow fatbin in another library is a warning",
			closureLib("libgloo_cuda.so.0", "", false, []string{"sm_80"}, []string{"sm_90"}), []facts.GPU{a100}, Warn,
			[]string{"1 of 2 fatbins of libgloo_cuda.so.0 have no sm_80 image"}},
		{"an on-demand library reached only by JIT is no finding",
			closureLib("libcufft.so.11", "11.2.1.3", false, []string{"sm_80", "compute_80@8.4"}), []facts.GPU{h100}, Pass,
			[]string{"only through PTX JIT of compute_80"}},
		{"a core library reached only by JIT is a warning with its cost",
			closureLib("libtorch_cuda.so.2.6", "2.6.0", false, []string{"sm_90", "compute_90@8.4"}), []facts.GPU{b200}, Warn,
			[]string{"torch 2.6.0+debian (libtorch_cuda.so.2.6 2.6.0) has no sm_100 cubin", "JIT-compile compute_90 PTX at first launch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := archInput("580.95.05", "13.0", "", []facts.Framework{withKernels(torch, tt.lib)}, tt.gpus...)
			expectFinding(t, GPUArch.Run(in), "gpu-arch", tt.status, tt.contains...)
		})
	}
}
