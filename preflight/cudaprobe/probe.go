// Package cudaprobe runs the opt-in CUDA smoke test (PREFLIGHT_CUDA_CHECK):
// it starts the probe's cuda mode with a deadline, as the NVML probe is
// started (preflight/nvml), and decodes and validates the document it
// prints. What the probe and the checks share about the test (the kernel,
// the CUresult table) is the pure package preflight/cuda.
package cudaprobe

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/cuda"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/nvml"
)

// DefaultTimeout is PREFLIGHT_CUDA_TIMEOUT's default: cuInit on eight
// GPUs without persistence mode takes seconds; JIT and a launch add tens
// of milliseconds per device.
const DefaultTimeout = 15 * time.Second

// Options say how to run the smoke test.
type Options struct {
	// Mode is facts.CUDAModeInit or facts.CUDAModeKernel.
	Mode string
	// FatbinLibrary, in kernel mode, is the framework library (its path on
	// this machine) whose fatbin is loaded; "" loads none.
	FatbinLibrary string
	// Probe says how to start the probe program: its Timeout (0 means
	// DefaultTimeout), Env (nil: this process's, which is what the job
	// will have), and where to find it.
	Probe nvml.Options
}

// Result is what one smoke test produced.
type Result struct {
	CUDA facts.CUDACheck
	// Stderr is the start of what the probe wrote on stderr, for the log.
	Stderr string
}

// Run runs the probe's cuda mode: `gpu-preflight-nvml cuda MODE
// [LIBRARY]`, bounded like the NVML probe (its own process group, killed
// with it at the deadline or when ctx ends).
func Run(ctx context.Context, opts Options) Result {
	if opts.Probe.Timeout <= 0 {
		opts.Probe.Timeout = DefaultTimeout
	}
	args := []string{cuda.ProbeArg, opts.Mode}
	if opts.Mode == facts.CUDAModeKernel && opts.FatbinLibrary != "" {
		args = append(args, opts.FatbinLibrary)
	}
	x := nvml.Execute(ctx, args, opts.Probe)
	res := Result{Stderr: x.Stderr}
	c := facts.CUDACheck{Mode: opts.Mode, Via: x.Via, DurationMillis: float64(x.Duration.Microseconds()) / 1000}
	switch {
	case !x.Started():
		c.Outcome = facts.CUDAUnavailable
		c.Error = "no probe could be started for the CUDA check: " + strings.Join(x.Tried, "; ")
	case x.Canceled != nil:
		c.Outcome = facts.CUDAProbeFailed
		c.Error = "CUDA check stopped: " + x.Canceled.Error()
	case x.TimedOut:
		c.Outcome = facts.CUDATimeout
		c.Error = fmt.Sprintf("the CUDA check gave no answer within PREFLIGHT_CUDA_TIMEOUT=%s; killed it and its process group", x.Timeout)
	default:
		doc, err := Decode(x.Stdout)
		if err != nil {
			c.Outcome = facts.CUDAProbeFailed
			c.Error = nvml.Failure("CUDA check", x.WaitErr, err, x.Stderr)
			break
		}
		if doc.Mode != opts.Mode {
			c.Outcome = facts.CUDAProbeFailed
			c.Error = fmt.Sprintf("CUDA check answered for mode %q, asked for %q", doc.Mode, opts.Mode)
			break
		}
		doc.Via, doc.DurationMillis = c.Via, c.DurationMillis
		c = *doc
	}
	res.CUDA = c
	return res
}

// Bounds a document must keep.
const (
	maxSteps       = 32
	maxStringBytes = 16 << 10
)

// Decode parses and validates the probe's cuda document. It never panics;
// anything that is not a document this package understands is an error.
func Decode(data []byte) (*facts.CUDACheck, error) {
	var d facts.CUDACheck
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("CUDA check output is not its JSON document: %w", err)
	}
	switch d.Mode {
	case facts.CUDAModeInit, facts.CUDAModeKernel:
	default:
		return nil, fmt.Errorf("CUDA check document has unknown mode %q", d.Mode)
	}
	switch d.Outcome {
	case facts.CUDAOK, facts.CUDAFailed, facts.CUDALibraryNotFound, facts.CUDALibraryIncomplete:
	default:
		return nil, fmt.Errorf("CUDA check document has unknown outcome %q", d.Outcome)
	}
	if len(d.Devices) > cuda.MaxDevices {
		return nil, fmt.Errorf("CUDA check document lists %d devices, more than %d", len(d.Devices), cuda.MaxDevices)
	}
	if d.Outcome == facts.CUDAOK && (d.Init == nil || d.Init.Failed()) {
		return nil, fmt.Errorf("CUDA check document says ok without a successful cuInit")
	}
	long := len(d.Error) > maxStringBytes || len(d.Library) > maxStringBytes
	for _, dev := range d.Devices {
		if len(dev.Steps) > maxSteps {
			return nil, fmt.Errorf("CUDA check document lists %d steps for device %d, more than %d", len(dev.Steps), dev.Ordinal, maxSteps)
		}
		if d.Outcome == facts.CUDAOK && dev.Failed() != nil {
			return nil, fmt.Errorf("CUDA check document says ok, but device %d failed", dev.Ordinal)
		}
		for _, s := range dev.Steps {
			long = long || len(s.Message) > maxStringBytes
		}
		long = long || len(dev.Name) > maxStringBytes
	}
	if long {
		return nil, fmt.Errorf("CUDA check document holds a string longer than %d bytes", maxStringBytes)
	}
	for i := range d.Devices {
		d.Devices[i].Result = result(d.Devices[i])
	}
	return &d, nil
}

// result is "ok", or the device's first failed step and CUDA's name for
// its error.
func result(d facts.CUDADevice) string {
	s := d.Failed()
	if s == nil {
		return "ok"
	}
	return strings.TrimSpace(s.Step + ": " + s.Error)
}
