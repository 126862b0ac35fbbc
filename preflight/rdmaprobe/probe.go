// Package rdmaprobe runs the opt-in RDMA active tier: the probe's rdma
// mode, started with a deadline as the NVML probe is, which opens each
// HCA NCCL would use through the image's libibverbs, queries its ports
// and registers 1 MiB, without network traffic; and its document decoded
// and validated.
package rdmaprobe

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/nvml"
	"github.com/gpu-preflight/gpu-preflight/preflight/transport"
)

// ProbeArg is the probe's first argument for its rdma mode.
const ProbeArg = "rdma"

// DefaultTimeout is PREFLIGHT_RDMA_TIMEOUT's default: opening a device
// and pinning 1 MiB take milliseconds; a wedged HCA takes forever.
const DefaultTimeout = 10 * time.Second

// MaxDevices bounds the devices a document lists (NCCL takes at most 32
// ports, a node has a few dozen RDMA devices with its VFs).
const MaxDevices = 64

// Options say how to run the tier.
type Options struct {
	Mode    string // facts.RDMAModeOpen or facts.RDMAModeRegister
	Library string // the image's libibverbs, a path here
	Targets []transport.Target
	Probe   nvml.Options
}

// Run runs `gpu-preflight-nvml rdma MODE LIBRARY TARGET...`.
func Run(ctx context.Context, opts Options) (facts.RDMACheck, string) {
	if opts.Probe.Timeout <= 0 {
		opts.Probe.Timeout = DefaultTimeout
	}
	args := []string{ProbeArg, opts.Mode, opts.Library}
	for _, t := range opts.Targets {
		args = append(args, t.String())
	}
	x := nvml.Execute(ctx, args, opts.Probe)
	c := facts.RDMACheck{Mode: opts.Mode, Via: x.Via, Library: opts.Library, DurationMillis: float64(x.Duration.Microseconds()) / 1000}
	ending, why := x.Ended("the RDMA check", "PREFLIGHT_RDMA_TIMEOUT")
	c.Error = why
	switch ending {
	case nvml.Unstarted:
		c.Outcome = facts.RDMAUnavailable
	case nvml.Stopped:
		c.Outcome = facts.RDMAProbeFailed
	case nvml.TimedOut:
		c.Outcome = facts.RDMATimeout
	default:
		doc, err := Decode(x.Stdout, opts.Mode)
		if err != nil {
			c.Outcome, c.Error = facts.RDMAProbeFailed, nvml.Failure("the RDMA check", x.WaitErr, err, x.Stderr)
			break
		}
		doc.Via, doc.DurationMillis = c.Via, c.DurationMillis
		c = *doc
	}
	return c, x.Stderr
}

// Bounds a document must keep.
const (
	maxSteps       = 32
	maxStringBytes = 4 << 10
)

// Decode parses and validates the probe's rdma document for mode;
// anything else is an error, never a panic.
func Decode(data []byte, mode string) (*facts.RDMACheck, error) {
	var d facts.RDMACheck
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("RDMA check output is not its JSON document: %w", err)
	}
	if d.Mode != mode {
		return nil, fmt.Errorf("RDMA check answered for mode %q, asked for %q", d.Mode, mode)
	}
	switch d.Outcome {
	case facts.RDMAOK, facts.RDMAFailed, facts.RDMALibraryFailed:
	default:
		return nil, fmt.Errorf("RDMA check document has unknown outcome %q", d.Outcome)
	}
	if len(d.Devices) > MaxDevices || len(d.Listed) > MaxDevices {
		return nil, fmt.Errorf("RDMA check document lists more than %d devices", MaxDevices)
	}
	long := len(d.Error) > maxStringBytes || len(d.Library) > maxStringBytes
	steps := d.Devices
	if d.List != nil {
		steps = append(steps[:len(steps):len(steps)], facts.RDMADevice{Steps: []facts.RDMAStep{*d.List}})
	}
	failed := false
	for _, dev := range steps {
		if len(dev.Steps) > maxSteps || len(dev.Ports) > maxSteps {
			return nil, fmt.Errorf("RDMA check document lists more than %d steps or ports for %q", maxSteps, dev.Name)
		}
		failed = failed || dev.Failed() != nil
		long = long || len(dev.Name) > maxStringBytes
		for _, s := range dev.Steps {
			long = long || len(s.Message) > maxStringBytes || len(s.Errno) > maxStringBytes || len(s.Step) > maxStringBytes
		}
	}
	for _, n := range d.Listed {
		long = long || len(n) > maxStringBytes
	}
	if long {
		return nil, fmt.Errorf("RDMA check document holds a string longer than %d bytes", maxStringBytes)
	}
	if d.Outcome == facts.RDMAOK && failed {
		return nil, fmt.Errorf("RDMA check document says ok, but a step failed")
	}
	return &d, nil
}

// PortState names enum ibv_port_state's values as sysfs does.
func PortState(v int) string {
	names := []string{"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"}
	if v >= 0 && v < len(names) {
		return names[v]
	}
	return fmt.Sprintf("state %d", v)
}

// LinkLayer names IBV_LINK_LAYER_*'s values: UNSPECIFIED (what EFA
// answers), INFINIBAND, ETHERNET.
func LinkLayer(v int) string {
	names := []string{"Unspecified", facts.LinkInfiniBand, facts.LinkEthernet}
	if v >= 0 && v < len(names) {
		return names[v]
	}
	return fmt.Sprintf("link layer %d", v)
}
