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
	// NodeFault marks a finding about the node's health (a hung NVML, a
	// driver present but not loaded, an unhealthy GPU) rather than about
	// whether this image fits this driver: another node may well run the
	// job. When such a finding blocks, the run exits with the node-fault
	// code (PREFLIGHT_NODE_FAULT_EXIT_CODE) so schedulers retry elsewhere.
	NodeFault bool `json:"nodeFault,omitempty"`
}

// Options are the user's settings that change what a check demands.
type Options struct {
	// RequireGPU turns "no GPU" into an error instead of a warning.
	RequireGPU bool
	// MinGPUs is the number of visible GPUs the job needs.
	MinGPUs int
	// ExtraRequire is PREFLIGHT_REQUIRE: a requirement in the
	// NVIDIA_REQUIRE_* language, ANDed with the image's.
	ExtraRequire string
}

// Input is everything a check may read.
type Input struct {
	Facts facts.Facts
	// Visible are the GPUs this container may use, after
	// NVIDIA_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES.
	Visible []facts.GPU
	Options Options
	// Now is when the run started: the day the driver lifecycle is judged
	// on. Checks never read the clock themselves.
	Now time.Time
}

// Check is one rule: a stable id and the pure function that applies it.
// The id is stated here only; Run stamps it on the finding, so a rule never
// repeats it.
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
// the preflight as a whole misses its deadline (PREFLIGHT_TIMEOUT): it is no
// rule over facts, but users see it, may ignore it and find it in the table.
const TimeoutID = "preflight"

// TimedOut is the finding reported instead of all checks when gathering the
// facts did not finish within timeout; pending says what had not finished
// ("the NVML probe (libnvidia-ml.so.1)", "the image scan under /, reading
// /usr/lib/x86_64-linux-gnu/libcudnn.so.9"), "" when unknown. A preflight
// that cannot finish in time is the node's fault (a wedged driver, a hung
// or lazily pulled mount, a node too loaded to read its own files), never
// the image's: the job may run on another node.
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
