//go:build cgo

// Command gpu-preflight-nvml asks NVML about the driver and the GPUs and
// prints one JSON document (preflight/nvml.Document) on stdout. It does
// nothing else: gpu-preflight runs it as a child process with a deadline,
// because go-nvml needs the dynamic linker (the static shim cannot load it)
// and a hung NVML call can only be stopped by killing the process.
//
// The library is PREFLIGHT_NVML_LIBRARY, default libnvidia-ml.so.1. Every
// NVML failure is a fact in the document, never a crash: the exit status is 0
// whenever the document was written.
//
// It needs cgo (go-nvml calls NVML through the dynamic linker), so it is
// excluded when CGO_ENABLED=0 and `go build ./...` still works then.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// defaultLibrary is the soname the NVIDIA Container Toolkit injects.
const defaultLibrary = "libnvidia-ml.so.1"

func main() {
	lib := os.Getenv("PREFLIGHT_NVML_LIBRARY")
	if lib == "" {
		lib = defaultLibrary
	}
	doc := gather(gonvml.New(gonvml.WithLibraryPath(lib)), lib)
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(doc); err != nil {
		fmt.Fprintf(os.Stderr, "gpu-preflight-nvml: writing the document: %v\n", err)
		os.Exit(1)
	}
}
