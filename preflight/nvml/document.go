// Package nvml runs the NVML probe (cmd/gpu-preflight-nvml) as a child process
// and turns its answer into facts.
//
// The shim is a static binary, and go-nvml cannot run in one: it resolves the
// nvml* symbols through the dynamic linker and crashes at nvmlInit in a static
// build (go-nvml issue 62). A hung NVML call cannot be cancelled in-process
// either. So NVML is asked in a separate cgo program, started from a memfd
// holding a copy embedded at build time (or from a file), killed with its
// whole process group at a deadline. This package holds the JSON document that
// program prints, the tables it maps NVML's enums with, and the runner. It
// does not use cgo, so it builds in the static shim.
package nvml

import (
	"encoding/json"
	"fmt"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// Document is the one JSON document the probe prints on stdout.
type Document struct {
	// Outcome is facts.ProbeOK, ProbeLibraryNotFound, ProbeDriverNotLoaded
	// or ProbeInitFailed.
	Outcome string `json:"outcome"`
	// Error is NVML's string for a failed nvmlInit, e.g. "Driver Not Loaded".
	Error string `json:"error,omitempty"`
	// Library is the NVML library the probe loaded, as it was named.
	Library string `json:"library"`
	// NVMLVersion is nvmlSystemGetNVMLVersion, "12.550.54.15".
	NVMLVersion string `json:"nvmlVersion,omitempty"`
	// DriverVersion is nvmlSystemGetDriverVersion, "550.54.15".
	DriverVersion string `json:"driverVersion,omitempty"`
	// CUDAVersion is the driver's CUDA version as "major.minor", "12.4";
	// CUDAVersionRaw is NVML's integer (12040) and CUDAVersionCall says which
	// call answered: "v2" (nvmlSystemGetCudaDriverVersion_v2) or "v1".
	CUDAVersion     string `json:"cudaVersion,omitempty"`
	CUDAVersionRaw  int    `json:"cudaVersionRaw,omitempty"`
	CUDAVersionCall string `json:"cudaVersionCall,omitempty"`
	// GPUs are the devices NVML enumerates, in index order. Per-device NVML
	// errors are in each GPU's Errors, keyed by JSON field name.
	GPUs []facts.GPU `json:"gpus"`
	// DriverLibrary is the libnvidia-ml file that loaded, whatever nvmlInit said.
	DriverLibrary *facts.DriverLibrary `json:"driverLibrary,omitempty"`
	// Errors maps a system-level field ("driverVersion", "cudaVersion",
	// "nvmlVersion", "gpus") to the NVML error that left it empty.
	Errors map[string]string `json:"errors,omitempty"`
}

// maxGPUs bounds what a document may claim: a node has at most a few dozen
// GPUs, so far more means the output is garbage.
const maxGPUs = 1024

// Decode parses and validates a probe document. It never panics; anything
// that is not a document this package understands is an error.
func Decode(data []byte) (*Document, error) {
	var d Document
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("probe output is not its JSON document: %w", err)
	}
	switch d.Outcome {
	case facts.ProbeOK, facts.ProbeLibraryNotFound, facts.ProbeDriverNotLoaded, facts.ProbeInitFailed:
	default:
		return nil, fmt.Errorf("probe document has unknown outcome %q", d.Outcome)
	}
	if len(d.GPUs) > maxGPUs {
		return nil, fmt.Errorf("probe document lists %d GPUs, more than %d", len(d.GPUs), maxGPUs)
	}
	if d.Outcome != facts.ProbeOK && len(d.GPUs) > 0 {
		return nil, fmt.Errorf("probe document has outcome %q but lists GPUs", d.Outcome)
	}
	return &d, nil
}
