package check

import (
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// What a library missing its kernels breaks, and how much that weighs
// (docs/fatbin.md "Which libraries are scanned" and "When a library
// without an image is an error").
type libraryUse int

const (
	// useCore: every training step launches its kernels (the framework's
	// own, cuBLAS, cuDNN): nothing for the GPU is an error.
	useCore libraryUse = iota
	// useCollectives: NCCL; every multi-GPU job launches its kernels, so
	// nothing for the GPU is an error when more than one GPU is visible.
	useCollectives
	// useOnDemand: only the operations that need it launch its kernels
	// (FFTs, sparse algebra, solvers, image primitives): nothing for the
	// GPU is a warning naming what fails, and PTX JIT is no finding.
	useOnDemand
)

// libraryRole is one row of libraryRoles.
type libraryRole struct {
	lib   string // soname up to ".so": "libnccl"; a trailing * matches a prefix
	fails string // what fails without kernels, as a sentence's subject and verb
	use   libraryUse
	// archDispatch: the library picks kernels by the GPU's architecture and
	// ships fatbins that carry other GPUs' targets only, on purpose (the
	// fatbin counts of NVIDIA's libraries in docs/fatbin.md): a fatbin
	// without an image for this GPU is one it never launches here.
	archDispatch bool
	// known is set on the rows of libraryRoles, false for the default.
	known bool
}

// libraryRoles are the CUDA libraries the frameworks load, as NVIDIA
// documents each (the CUDA Toolkit documentation of each library; NCCL's
// user guide) and as Debian trixie's and bookworm's builds of them carry
// their kernels (test/debiancuda/testdata/listings).
var libraryRoles = []libraryRole{
	{"libnccl", "collectives (all-reduce, broadcast, all-gather) fail", useCollectives, false, false},
	{"libcublas", "matrix multiplications (cuBLAS) fail", useCore, true, false},
	{"libcublasLt", "matrix multiplications (cuBLASLt) fail", useCore, true, false},
	{"libcudnn*", "convolutions and the other cuDNN operations fail", useCore, true, false},
	{"libcufft*", "FFTs (cuFFT) fail", useOnDemand, true, false},
	{"libcusparse*", "sparse operations (cuSPARSE) fail", useOnDemand, true, false},
	{"libcusolver*", "linear-algebra solvers (cuSOLVER) fail", useOnDemand, true, false},
	{"libcurand", "cuRAND random number generation fails", useOnDemand, true, false},
	{"libnpp*", "NPP image and signal primitives fail", useOnDemand, true, false},
	{"libnvjpeg", "GPU JPEG decoding (nvJPEG) fails", useOnDemand, true, false},
	{"libmagma*", "MAGMA linear algebra fails", useOnDemand, false, false},
	{"libgloo_cuda", "gloo collectives on CUDA tensors fail", useOnDemand, false, false},
	{"libnvinfer*", "TensorRT engines fail", useCore, true, false},
}

// roleOf returns the row for a kernel library; a library not in the table
// (the framework's own, an extension's) is core: its kernels are what the
// job runs.
func roleOf(k facts.KernelLibrary) libraryRole {
	lib, _, _ := strings.Cut(k.Soname, ".so")
	for _, r := range libraryRoles {
		if p, ok := strings.CutSuffix(r.lib, "*"); ok && strings.HasPrefix(lib, p) || lib == r.lib {
			r.known = true
			return r
		}
	}
	return libraryRole{lib: lib, fails: "its kernels fail", use: useCore}
}
