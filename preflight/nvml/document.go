// Package nvml runs the NVML probe (cmd/gpu-preflight-nvml) and turns its
// JSON document into facts. go-nvml cannot run in the static shim (go-nvml
// issue 62) and a hung NVML call cannot be cancelled in-process, so the
// probe is a cgo program of its own, killed with its group at a deadline.
package nvml

import (
	"encoding/json"
	"fmt"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// Document is the one JSON document the probe prints on stdout.
type Document struct {
	Outcome       string `json:"outcome"`         // facts.ProbeOK, ProbeLibraryNotFound, ProbeDriverNotLoaded or ProbeInitFailed
	Error         string `json:"error,omitempty"` // NVML's string for a failed nvmlInit
	Library       string `json:"library"`         // as the probe was told to load it
	NVMLVersion   string `json:"nvmlVersion,omitempty"`
	DriverVersion string `json:"driverVersion,omitempty"`
	// CUDAVersion is "12.4"; CUDAVersionRaw is NVML's integer (12040) and
	// CUDAVersionCall the call that answered: "v2" (nvmlSystemGetCudaDriverVersion_v2) or "v1".
	CUDAVersion     string `json:"cudaVersion,omitempty"`
	CUDAVersionRaw  int    `json:"cudaVersionRaw,omitempty"`
	CUDAVersionCall string `json:"cudaVersionCall,omitempty"`
	// GPUs in index order; per-device NVML errors are in each GPU's Errors.
	GPUs []facts.GPU `json:"gpus"`
	// DriverLibrary is the libnvidia-ml file that loaded, whatever nvmlInit said.
	DriverLibrary *facts.DriverLibrary `json:"driverLibrary,omitempty"`
	// Errors maps a system-level field ("driverVersion") to the NVML error that left it empty.
	Errors map[string]string `json:"errors,omitempty"`
}

// maxGPUs bounds what a document may claim: far more than a node's few dozen is garbage.
const maxGPUs = 1024

// Decode parses and validates a probe document; anything else is an error, never a panic.
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
