// Package cudaprobe runs the opt-in CUDA smoke test: the probe's cuda mode,
// started with a deadline as the NVML probe is, and its document decoded
// and validated. What the probe and the checks share is preflight/cuda.
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

// DefaultTimeout is PREFLIGHT_CUDA_TIMEOUT's default: cuInit on eight GPUs
// without persistence mode takes seconds.
const DefaultTimeout = 15 * time.Second

// Options say how to run the smoke test.
type Options struct {
	Mode          string       // facts.CUDAModeInit or facts.CUDAModeKernel
	FatbinLibrary string       // kernel mode: the library (its path here) whose fatbin is loaded; "" for none
	Probe         nvml.Options // how to start the probe; Env nil is this process's
}

// Result is what one smoke test produced.
type Result struct {
	CUDA facts.CUDACheck
	// Stderr is the start of the probe's stderr, for the log.
	Stderr string
}

// Run runs `gpu-preflight-nvml cuda MODE [LIBRARY]`, bounded like the NVML probe.
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
	ending, why := x.Ended("the CUDA check", "PREFLIGHT_CUDA_TIMEOUT")
	c.Error = why
	switch ending {
	case nvml.Unstarted:
		c.Outcome = facts.CUDAUnavailable
	case nvml.Stopped:
		c.Outcome = facts.CUDAProbeFailed
	case nvml.TimedOut:
		c.Outcome = facts.CUDATimeout
	default:
		doc, err := Decode(x.Stdout)
		if err != nil {
			c.Outcome = facts.CUDAProbeFailed
			c.Error = nvml.Failure("the CUDA check", x.WaitErr, err, x.Stderr)
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

// Decode parses and validates the probe's cuda document; anything else is
// an error, never a panic.
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
