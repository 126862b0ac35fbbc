// Package check turns facts into findings. Every check is a pure function:
// it reads an Input and returns one Finding, never touching the file system,
// the environment or the clock, so each rule is proved by a table test.
package check

import (
	"fmt"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// Status is a finding's outcome, from best to worst.
type Status string

// Statuses, in increasing severity (skip sorts with pass).
const (
	Pass  Status = "pass"
	Skip  Status = "skip"
	Info  Status = "info"
	Warn  Status = "warn"
	Error Status = "error"
)

// Severity orders statuses: pass and skip 0, info 1, warn 2, error 3.
func (s Status) Severity() int {
	switch s {
	case Info:
		return 1
	case Warn:
		return 2
	case Error:
		return 3
	}
	return 0
}

// Finding is one check's verdict. Remedy is empty only when Status is pass
// or skip.
type Finding struct {
	ID      string `json:"id"`
	Status  Status `json:"status"`
	Message string `json:"message"`
	Remedy  string `json:"remedy"`
	// NodeFault marks a finding about the node's health, not the image's fit:
	// blocking, it exits with PREFLIGHT_NODE_FAULT_EXIT_CODE so the job is retried elsewhere.
	NodeFault bool `json:"nodeFault,omitempty"`
}

// Options are the user's settings that change what a check demands.
type Options struct {
	// RequireGPU turns "no GPU" into an error instead of a warning.
	RequireGPU bool
	MinGPUs    int
	// ExtraRequire is PREFLIGHT_REQUIRE, ANDed with the image's NVIDIA_REQUIRE_*.
	ExtraRequire string
}

// Input is everything a check may read.
type Input struct {
	Facts facts.Facts
	// Visible are the GPUs this container may use, after
	// NVIDIA_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES.
	Visible []facts.GPU
	Options Options
	// Now is when the run started; checks never read the clock.
	Now time.Time
}

// Check is one rule: a stable id, stated only here, and the pure function that applies it.
type Check struct {
	ID   string
	rule func(Input) Finding
}

// Run applies the check to in and returns its finding, carrying c.ID.
func (c Check) Run(in Input) Finding {
	f := c.rule(in)
	f.ID = c.ID
	return f
}

// TimeoutID is the id of the finding that stands in for every check when
// the preflight misses PREFLIGHT_TIMEOUT.
const TimeoutID = "preflight"

// TimedOut is the finding reported instead of all checks when gathering did
// not finish within timeout; pending says what had not ("" when unknown).
// A preflight that cannot finish is the node's fault, never the image's.
func TimedOut(timeout time.Duration, pending string) Finding {
	msg := fmt.Sprintf("preflight did not finish within PREFLIGHT_TIMEOUT=%s", timeout)
	if pending != "" {
		msg += ": " + pending + " had not finished; the record holds the facts gathered before it"
	}
	return Finding{ID: TimeoutID, Status: Error, NodeFault: true, Message: msg,
		Remedy: "the node is hung or too slow (a wedged driver, a hung or lazily pulled mount under PREFLIGHT_ROOT): " +
			"run the job on another node and look at this one, or raise PREFLIGHT_TIMEOUT if the node is only slow"}
}

// All is every check, in the order findings are reported.
var All = []Check{Driver, NVML, GPUCount, CUDARequirement, CUDADriver, FrameworkCUDA, GPUArch, GPUHealth, Shm,
	CUDAStack, CPUBuild, DriverLifecycle, ImagePinned, CUDA,
	RowRemap,
	NVLinkFabric,
	GPUInUse,
	GPUDegraded,
	DriverLibrary,
	RanksPerNode,
	NCCLTransport,
	GPUDirectRDMA,
	RDMAMemlock,
	GPUP2P,
}

// IDs returns every id a finding may carry: those of All, then TimeoutID.
// PREFLIGHT_IGNORE accepts exactly these.
func IDs() []string {
	ids := make([]string, 0, len(All)+1)
	for _, c := range All {
		ids = append(ids, c.ID)
	}
	return append(ids, TimeoutID)
}

// Run applies every check to in.
func Run(in Input) []Finding {
	out := make([]Finding, 0, len(All))
	for _, c := range All {
		out = append(out, c.Run(in))
	}
	return out
}
