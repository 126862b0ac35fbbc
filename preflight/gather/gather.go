// Package gather collects every fact for one run and the GPUs the training
// process will see. It alone composes the gatherers; each fails soft, so
// Gather always returns facts, with warnings for what could not be read.
package gather

import (
	"context"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/container"
	"github.com/gpu-preflight/gpu-preflight/preflight/cuda"
	"github.com/gpu-preflight/gpu-preflight/preflight/cudaprobe"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/host"
	"github.com/gpu-preflight/gpu-preflight/preflight/image"
	"github.com/gpu-preflight/gpu-preflight/preflight/launcher"
	"github.com/gpu-preflight/gpu-preflight/preflight/nvml"
	"github.com/gpu-preflight/gpu-preflight/preflight/orchestrator"
	"github.com/gpu-preflight/gpu-preflight/preflight/rdma"
	"github.com/gpu-preflight/gpu-preflight/preflight/rdmaprobe"
	"github.com/gpu-preflight/gpu-preflight/preflight/require"
	"github.com/gpu-preflight/gpu-preflight/preflight/transport"
)

// Options say where and how to gather.
type Options struct {
	// Root is where the image's files are; HostRoot the host's (procfs,
	// sysfs, /dev, cgroup), Root when empty. Both are "/" in a container.
	Root, HostRoot fsroot.Root
	// ImageEnviron, when set, is the image config's Env, in place of Environ.
	ImageEnviron *envvars.Env
	// Environ is the process environment; the probes get their share (nvml.ProbeEnviron).
	Environ     envvars.Env
	NVMLLibrary string
	ForceProbe  bool // run the probe without driver evidence (a library was named)
	NVMLTimeout time.Duration
	CUDAMode    string // PREFLIGHT_CUDA_CHECK: off or "" starts nothing
	CUDATimeout time.Duration
	RDMAMode    string // PREFLIGHT_RDMA_CHECK: off or "" starts nothing
	RDMATimeout time.Duration
	Manifest    string // the baked manifest's path inside Root
	// Command is the training argv, nil when not known; CommandFrom, where
	// it came from when not the preflight's own argv.
	Command     []string
	CommandFrom string
	WorkDir     string // the command's working directory in an unpacked Root
	// ProbeStderr receives a probe's stderr and which probe ("nvml", "cuda").
	ProbeStderr func(probe, stderr string)
	// Progress follows Gather for a caller that stops waiting at the deadline.
	Progress *Progress
}

// Result is what the checks read of one run, besides the user's options.
type Result struct {
	Facts facts.Facts
	// Visible are the host's GPUs the training process will see.
	Visible []facts.GPU
}

// Gather returns this run's facts, the GPUs it will see, and warnings.
func Gather(ctx context.Context, o Options) (Result, []string) {
	var f facts.Facts
	var warnings []string

	if o.HostRoot == "" {
		o.HostRoot = o.Root
	}
	p := o.Progress
	defer p.finish(ctx)
	f.Orchestrator = orchestrator.FromEnv(o.Environ)
	p.begin(f.Orchestrator)
	var h facts.Host
	var c facts.Container
	p.enter(ctx, step{"reading the host's driver and GPUs under " + o.HostRoot.Path("/"), true}, h, c)
	h, w := host.Gather(o.HostRoot)
	warnings = append(warnings, w...)
	p.enter(ctx, step{"reading the image's environment and CUDA files under " + o.Root.Path("/"), true}, h, c)
	environ, w := imageEnviron(o)
	warnings = append(warnings, w...)
	c, w = container.Gather(o.Root, environ)
	warnings = append(warnings, w...)

	c.Ranks = launcher.Ranks(o.Command, f.Orchestrator)
	c.Nodes, c.NodesSource = launcher.Nodes(o.Command)

	reqs, disabled, err := require.Collect(c.Env)
	c.Requirements, c.RequireDisabled = reqs, disabled
	if err != nil {
		c.RequireError = err.Error()
	}

	if host.DriverEvidence(h) || o.ForceProbe {
		p.enter(ctx, step{"the NVML probe (" + o.NVMLLibrary + ")", false}, h, c)
		res := nvml.Probe(ctx, nvml.Options{Library: o.NVMLLibrary, Timeout: o.NVMLTimeout})
		nvml.Apply(&h, res)
		if res.Stderr != "" && o.ProbeStderr != nil {
			o.ProbeStderr("nvml", res.Stderr)
		}
	} else {
		h.NVML = facts.NVML{Outcome: facts.ProbeNotRun, Error: "no driver evidence (/proc/driver/nvidia, /dev/nvidia*)"}
	}
	completeDriver(&h, time.Now())

	p.enter(ctx, step{"the image scan under " + o.Root.Path("/"), true}, h, c)
	scanEnv := withWorkDir(c.Env, o)
	scan, source, w := image.LoadWithin(o.Root, scanEnv, o.Manifest, scanBudget(ctx, time.Now()), o.Command...)
	warnings = append(warnings, w...)
	c.Stack, c.ScanSource = scan.Stack, source
	c.Frameworks, c.Python = image.Judge(o.Root, scanEnv, scan, o.Command)
	if c.Python != nil && o.CommandFrom != "" {
		c.Python.How += "; the command is " + o.CommandFrom
	}
	c.CUDALibraries = scan.CUDALibraries
	c.CUDA = image.ImageCUDA(c.Judged(), scan.CUDASources, c.CUDA, c.Env)

	h.CUDA = facts.CUDACheck{Mode: facts.CUDAModeOff, Outcome: facts.CUDANotRun}
	if o.CUDAMode != "" && o.CUDAMode != facts.CUDAModeOff {
		p.enter(ctx, step{"the CUDA smoke test (PREFLIGHT_CUDA_CHECK=" + o.CUDAMode + ")", false}, h, c)
		h.CUDA = smokeTest(ctx, o, c.Frameworks)
	}

	visible, note := container.VisibleGPUs(h.GPUs, c.Env)
	if note != "" {
		warnings = append(warnings, note)
	}
	p.enter(ctx, step{"reading the RDMA devices, the network and NCCL's settings under " + o.HostRoot.Path("/"), true}, h, c)
	h.Transport, w = transportFacts(o, h, c, visible)
	warnings = append(warnings, w...)
	h.Transport.Active = facts.RDMACheck{Mode: facts.RDMAModeOff, Outcome: facts.RDMANotRun}
	if o.RDMAMode != "" && o.RDMAMode != facts.RDMAModeOff {
		p.enter(ctx, step{"the RDMA active tier (PREFLIGHT_RDMA_CHECK=" + o.RDMAMode + ")", false}, h, c)
		h.Transport.Active = activeTier(ctx, o, h.Transport)
		h.Transport.Prediction = transport.Predict(h.Transport)
	}
	f.Host, f.Container = h, c
	return Result{Facts: f, Visible: visible}, warnings
}

// transportFacts gathers what this rank sees of NCCL's network, for the
// libnccl the judged framework loads, and completes the prediction.
func transportFacts(o Options, h facts.Host, c facts.Container, visible []facts.GPU) (facts.Transport, []string) {
	ro := rdma.Options{Host: o.HostRoot, Image: o.Root, Env: o.Environ.Lookup,
		NCCLVersion: c.Stack.NCCL.Version, KernelRelease: h.Kernel,
		DriverVersion: h.Driver.Version, OpenModule: h.Driver.OpenKernelModule}
	for _, g := range visible {
		ro.GPUs = append(ro.GPUs, g.PCIBusID)
	}
	judged := c.Judged()
	for _, l := range c.CUDALibraries {
		if l.Library == "libnccl" && l.Loaded.Path != "" && slices.ContainsFunc(judged, func(f facts.Framework) bool { return f.Name == l.Framework }) {
			ro.NCCL = l.Loaded.Path
			if l.Loaded.Version != "" {
				ro.NCCLVersion = l.Loaded.Version
			}
			break
		}
	}
	t, warnings := rdma.Gather(ro)
	t.Prediction = transport.Predict(t)
	return t, warnings
}

// activeTier runs the RDMA active tier through the image's libibverbs.
func activeTier(ctx context.Context, o Options, t facts.Transport) facts.RDMACheck {
	c := facts.RDMACheck{Mode: o.RDMAMode, Outcome: facts.RDMANotRun}
	targets := transport.Targets(t)
	switch {
	case t.Image.NCCL == "":
		c.Error = "no NCCL in the image: nothing uses an HCA"
		return c
	case len(targets) == 0:
		c.Error = "no HCA NCCL would use"
		return c
	case !t.Image.Verbs.Found():
		c.Error = "the image has no libibverbs that loads (" + t.Image.Verbs.Name + ")"
		return c
	}
	lib, err := o.Root.Resolve(t.Image.Verbs.Path)
	if err != nil {
		c.Error = err.Error()
		return c
	}
	opts := rdmaprobe.Options{Mode: o.RDMAMode, Library: lib, Targets: targets,
		Probe: nvml.Options{Timeout: probeBudget(ctx, o.RDMATimeout, rdmaprobe.DefaultTimeout, time.Now())}}
	if l := o.Environ.List(); l != nil {
		opts.Probe.Env = l
	}
	res, stderr := rdmaprobe.Run(ctx, opts)
	if stderr != "" && o.ProbeStderr != nil {
		o.ProbeStderr("rdma", stderr)
	}
	return res
}

// completeDriver fills the driver's Source, CUDA version and branch.
func completeDriver(h *facts.Host, now time.Time) {
	if h.Driver.Source == "" {
		h.Driver.Source = facts.DriverFromNone
		if h.Driver.Present() {
			h.Driver.Source = facts.DriverFromProcfs
		}
	}
	if h.Driver.CUDAVersion == "" && h.Driver.Present() {
		if cuda, assumed, ok := compat.LookupDriverCUDA(h.Driver.Version); ok {
			h.Driver.CUDAVersion, h.Driver.CUDAVersionSource = cuda, facts.CUDAFromBranchTable
			if assumed {
				h.Driver.CUDAVersionSource = facts.CUDAAssumed
			}
		}
	}
	h.Driver.Branch = compat.DriverBranchOn(h.Driver.Version, now)
}

// smokeTest runs the CUDA smoke test within what is left of ctx's deadline.
func smokeTest(ctx context.Context, o Options, frameworks []facts.Framework) facts.CUDACheck {
	opts := cudaprobe.Options{Mode: o.CUDAMode, Probe: nvml.Options{Timeout: probeBudget(ctx, o.CUDATimeout, cudaprobe.DefaultTimeout, time.Now())}}
	if l := o.Environ.List(); l != nil {
		opts.Probe.Env = l
	}
	var fb *facts.CUDAFatbin
	if o.CUDAMode == facts.CUDAModeKernel {
		if name, lib, ok := cuda.FatbinLibrary(frameworks); ok {
			fb = &facts.CUDAFatbin{Library: lib, Framework: name}
			host, err := o.Root.Resolve(lib)
			if err != nil {
				fb.Error = err.Error()
			} else {
				opts.FatbinLibrary = host
			}
		}
	}
	res := cudaprobe.Run(ctx, opts)
	if res.Stderr != "" && o.ProbeStderr != nil {
		o.ProbeStderr("cuda", res.Stderr)
	}
	c := res.CUDA
	if fb != nil {
		// The record names the library inside the root, as the image facts do.
		if c.Fatbin != nil {
			c.Fatbin.Library, c.Fatbin.Framework = fb.Library, fb.Framework
		} else if fb.Error != "" {
			c.Fatbin = fb
		}
	}
	return c
}

// probeBudget is a probe's deadline (configured, else def), or less when
// ctx's is nearer, so the probe ends with its own timeout; at least 1 ms.
func probeBudget(ctx context.Context, configured, def time.Duration, now time.Time) time.Duration {
	if configured <= 0 {
		configured = def
	}
	if deadline, ok := ctx.Deadline(); ok {
		configured = min(configured, deadline.Sub(now)-scanMargin)
	}
	return max(configured, time.Millisecond)
}

// scanMargin is what the scan leaves of the deadline for the checks, record and log.
const scanMargin = 500 * time.Millisecond

// scanBudget is image.RuntimeScanBudget, or less when ctx's deadline is
// nearer, so a slow scan is cut with a warning, not the preflight's timeout.
func scanBudget(ctx context.Context, now time.Time) time.Duration {
	deadline, ok := ctx.Deadline()
	if !ok {
		return image.RuntimeScanBudget
	}
	return min(image.RuntimeScanBudget, deadline.Sub(now)-scanMargin)
}

// Bake scans the image under o.Root for its manifest, with the image's
// environment as Gather reads it; the warnings are about that environment.
func Bake(o Options, bi image.BuildInfo) (image.Manifest, []string, error) {
	environ, warnings := imageEnviron(o)
	m, err := image.Bake(o.Root, withWorkDir(container.Env(environ), o), bi)
	return m, warnings, err
}

// withWorkDir sets PWD, unless a shell did, to the command's working
// directory: o.WorkDir, or in the host's root this process's, which it inherits.
func withWorkDir(env map[string]string, o Options) map[string]string {
	if _, ok := env["PWD"]; ok {
		return env
	}
	wd := o.WorkDir
	if o.Root.IsHost() {
		wd, _ = os.Getwd()
	}
	if wd == "" {
		return env
	}
	out := maps.Clone(env)
	out["PWD"] = wd
	return out
}

// imageEnviron is the image config's Env when given, else this process's
// (the same inside the container; for an unpacked image, a warning says so).
func imageEnviron(o Options) (envvars.Env, []string) {
	switch {
	case o.ImageEnviron != nil:
		return *o.ImageEnviron, nil
	case o.Root.IsHost() || o.Root == o.HostRoot:
		return o.Environ, nil
	}
	return o.Environ, []string{"the image's environment (NVIDIA_REQUIRE_*, CUDA_VERSION) is taken from this process, not the image: pass --image-config with the image's config, or point --root at an OCI bundle"}
}
