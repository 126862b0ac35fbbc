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
	useCore        libraryUse = iota // every step launches its kernels: nothing for the GPU is an error
	useCollectives                   // NCCL: an error when more than one GPU is visible
	useOnDemand                      // some operations only: a warning, and PTX JIT is no finding
)

type libraryRole struct {
	lib   string // soname up to ".so": "libnccl"; a trailing * matches a prefix
	fails string // what fails without kernels, as a sentence's subject and verb
	use   libraryUse
	// archDispatch: the library picks kernels by architecture and ships
	// fatbins for other GPUs only, on purpose (docs/fatbin.md's counts).
	archDispatch bool
	known        bool // a row of libraryRoles, not the default
}

// libraryRoles: the CUDA Toolkit documentation of each library, NCCL's user
// guide, and Debian's builds (test/debiancuda/testdata/listings).
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

// roleOf returns the row for a kernel library; one not in the table (the
// framework's own, an extension's) is core.
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
