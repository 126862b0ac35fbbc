//go:build cgo

// Command gpu-preflight-nvml asks NVML about the driver and the GPUs and
// prints one JSON document (preflight/nvml.Document). gpu-preflight runs it
// as a child with a deadline: go-nvml needs the dynamic linker, and a hung
// NVML call can only be stopped by killing the process. Every failure is a
// fact in the document; the exit status is 0 whenever it was written.
// `cuda MODE` runs the CUDA smoke test instead, `rdma MODE` the RDMA tier.
// It needs cgo, so CGO_ENABLED=0 leaves it out.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpu-preflight/gpu-preflight/preflight/cuda"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/rdmaprobe"
)

// defaultLibrary is the soname the NVIDIA Container Toolkit injects.
const defaultLibrary = "libnvidia-ml.so.1"

func main() {
	if err := dropCapabilities(); err != nil {
		// Not fatal, though a library may then create a missing device node.
		fmt.Fprintf(os.Stderr, "gpu-preflight-nvml: dropping CAP_MKNOD and CAP_SYS_MODULE: %v\n", err)
	}
	if len(os.Args) > 1 && os.Args[1] == cuda.ProbeArg {
		os.Exit(cudaMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == rdmaprobe.ProbeArg {
		os.Exit(rdmaMain(os.Args[2:]))
	}
	lib := os.Getenv("PREFLIGHT_NVML_LIBRARY")
	if lib == "" {
		lib = defaultLibrary
	}
	doc := gather(gonvml.New(gonvml.WithLibraryPath(lib)), lib)
	os.Exit(write(doc))
}

// cudaMain is `gpu-preflight-nvml cuda MODE [LIBRARY]`.
func cudaMain(args []string) int {
	if len(args) < 1 || len(args) > 2 || (args[0] != facts.CUDAModeInit && args[0] != facts.CUDAModeKernel) {
		fmt.Fprintln(os.Stderr, "usage: gpu-preflight-nvml cuda init|kernel [FRAMEWORK-LIBRARY]")
		return 2
	}
	lib := ""
	if len(args) == 2 {
		lib = args[1]
	}
	return write(smoke(args[0], lib))
}

// write prints doc as the one JSON document on stdout: 0 when written.
func write(doc any) int {
	if err := json.NewEncoder(os.Stdout).Encode(doc); err != nil {
		fmt.Fprintf(os.Stderr, "gpu-preflight-nvml: writing the document: %v\n", err)
		return 1
	}
	return 0
}
