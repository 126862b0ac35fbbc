package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
	"github.com/gpu-preflight/gpu-preflight/preflight/advise"
	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/nodeclass"
	"github.com/gpu-preflight/gpu-preflight/preflight/releases"
)

// cmdAdvise prints what a driver runs and which framework builds fit it:
// for --driver (and --gpu, --brand) anywhere, or for this node's driver
// and first visible GPU. With --root and no --driver it answers for the
// image at that root instead: the lowest driver per branch and the GPUs its
// kernels run on. Exit 0, or 64 on a usage error.
func cmdAdvise(args, environ []string, stdout, stderr io.Writer) int {
	overrides := map[string]string{}
	fs := newFlagSet("advise", stderr, overrides, args)
	driver := fs.String("driver", "", "driver version to advise for, e.g. 525.60.13 (default: this node's)")
	cuda := fs.String("cuda", "", "the driver's CUDA version, when the branch table does not know it")
	gpu := fs.String("gpu", "", "compute capability of the GPU, e.g. 8.0")
	brand := fs.String("brand", "", "NVML brand of the GPU: tesla, nvidia, geforcertx, ...")
	asJSON := fs.Bool("json", false, "print the advice as JSON")
	if err := parseFlags(fs, args, stdout); err != nil {
		return usageExit(stderr, err)
	}
	if fs.NArg() > 0 {
		return usageExit(stderr, usagef("advise takes no arguments (did you mean --driver %s?)", fs.Arg(0)))
	}
	n := advise.Node{Driver: *driver, CUDA: *cuda, GPU: *gpu, Brand: *brand}
	if _, image := overrides["PREFLIGHT_ROOT"]; image && n.Driver == "" {
		return adviseImage(overrides, environ, *asJSON, stdout, stderr)
	}
	if n.Driver == "" {
		in, _, err := gatherFor(overrides, environ)
		if err != nil {
			return usageExit(stderr, err)
		}
		d := in.Facts.Host.Driver
		if !d.Present() {
			return usageExit(stderr, usagef("no NVIDIA driver found on this node: give the driver to advise for with --driver, e.g. --driver 525.60.13"))
		}
		n.Driver, n.CUDA = d.Version, d.CUDAVersion
		if len(in.Visible) > 0 {
			g := in.Visible[0]
			if n.GPU == "" {
				n.GPU = g.ComputeCapability
			}
			if n.Brand == "" {
				n.Brand = g.Brand
			}
		}
	}
	a, err := advise.ForDriver(n, time.Now())
	if err != nil {
		return usageExit(stderr, usagef("%v", err))
	}
	if *asJSON {
		return writeJSON(a, stdout, stderr)
	}
	writeAdvice(stdout, a)
	return exitOK
}

// writeAdvice prints the advice for a person: the driver, the CUDA
// versions by route, then each framework's builds best first.
func writeAdvice(w io.Writer, a advise.Advice) {
	n := a.Node
	branch := fmt.Sprintf("R%s, not in the lifecycle table", strings.SplitN(n.Driver, ".", 2)[0])
	if a.BranchKnown {
		branch = fmt.Sprintf("%s, %s", a.Branch.Name(), a.Branch.Kind)
		if e := a.Branch.EndOfLifeText(); e != "" {
			branch += ", end of life " + e
		}
	}
	fmt.Fprintf(w, "driver %s (%s) supports CUDA %s", n.Driver, branch, n.CUDA)
	if n.GPU != "" {
		fmt.Fprintf(w, "; GPU compute capability %s", n.GPU)
	}
	if n.Brand != "" {
		fmt.Fprintf(w, ", brand %s", n.Brand)
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "\nCUDA versions it runs")
	byRoute := map[advise.Route][]string{}
	why := map[advise.Route]string{}
	for _, c := range a.CUDA {
		byRoute[c.Route] = append(byRoute[c.Route], c.CUDA)
		if _, ok := why[c.Route]; !ok {
			why[c.Route] = c.Why
		}
	}
	fmt.Fprintf(w, "  natively: CUDA %s\n", orNone(byRoute[advise.Native]))
	if v := byRoute[advise.MinorVersion]; len(v) > 0 {
		_, limits, ok := strings.Cut(why[advise.MinorVersion], "with limits: ")
		if !ok {
			limits = why[advise.MinorVersion]
		}
		// The message names the newest such version; the limits hold for each.
		limits = strings.ReplaceAll(limits, "CUDA "+v[0], "a newer CUDA")
		fmt.Fprintf(w, "  through minor-version compatibility only: CUDA %s\n    limits: %s\n", strings.Join(v, ", "), limits)
	} else {
		fmt.Fprintln(w, "  through minor-version compatibility: none")
	}
	if v := byRoute[advise.Forward]; len(v) > 0 {
		fmt.Fprintf(w, "  through forward compatibility: CUDA %s\n    %s\n", strings.Join(v, ", "), a.Forward.Why)
	} else {
		fmt.Fprintf(w, "  through forward compatibility: %s\n", a.Forward.Why)
	}
	if v := byRoute[advise.Fails]; len(v) > 0 {
		fmt.Fprintf(w, "  not at all: CUDA %s\n", strings.Join(v, ", "))
	}

	for _, fw := range releases.Frameworks {
		fmt.Fprintf(w, "\n%s builds\n", fw)
		last := advise.Route(-1)
		for _, v := range a.Builds {
			if v.Build.Framework != fw {
				continue
			}
			if v.Route != last {
				fmt.Fprintf(w, "  %s:\n", routeHeading(v.Route))
				last = v.Route
			}
			mark := ""
			if !v.Build.Verified {
				mark = " [unverified row]"
			}
			fmt.Fprintf(w, "    %-40s %s%s\n", v.Build.Name(), v.Build.Install, mark)
			// The minor-version limits were given once above; a native
			// build's only notes are the GPU's (PTX JIT at first launch).
			if reason := v.Why(); reason != "" && v.Route != advise.MinorVersion {
				label := "why"
				if v.Route == advise.Native {
					label = "note"
				}
				fmt.Fprintf(w, "      %s: %s\n", label, reason)
			}
		}
	}
	fmt.Fprintln(w, "\nRows marked [unverified row] could not be confirmed on the framework's own pages (preflight/releases/tables.go says where each row was read).")
}

func routeHeading(r advise.Route) string {
	switch r {
	case advise.Native:
		return "run natively (best first)"
	case advise.MinorVersion:
		return "run only through minor-version compatibility, with its limits"
	case advise.Forward:
		return "run only through forward compatibility"
	}
	return "would fail"
}

func orNone(v []string) string {
	if len(v) == 0 {
		return "none"
	}
	return strings.Join(v, ", ")
}

// adviseImage is advise --root: the image's facts (scanned, or from its
// baked manifest) judged on every driver branch and GPU generation.
func adviseImage(overrides map[string]string, environ []string, asJSON bool, stdout, stderr io.Writer) int {
	in, cfg, err := gatherFor(overrides, environ)
	if err != nil {
		return usageExit(stderr, err)
	}
	c := in.Facts.Container
	a := advise.ForImage(nodeclass.Image{Container: c, Options: in.Options, Policy: cfg.policy, Ignore: cfg.ignore})
	if asJSON {
		return writeJSON(a, stdout, stderr)
	}
	fmt.Fprintf(stdout, "image at %s: CUDA %s", cfg.Root, orDash(c.CUDA.Version))
	if c.ScanSource != "" {
		fmt.Fprintf(stdout, " (%s)", c.ScanSource)
	}
	fmt.Fprintln(stdout)
	for _, r := range check.Requirements(in) {
		fmt.Fprintf(stdout, "  %s=%s\n", r.Var, truncate.Quote(r.Value, truncate.MessageBytes))
	}
	for _, fw := range c.Frameworks {
		fmt.Fprintf(stdout, "  %s %s (CUDA %s)\n", fw.Name, fw.Version, orDash(fw.CUDAVersion))
	}
	for _, cuda := range a.CUDA {
		if min, ok := compat.MinDriver(cuda); ok {
			fmt.Fprintf(stdout, "  CUDA %s runs natively from driver %s\n", cuda, min)
		}
	}
	fmt.Fprintln(stdout, "\nMinimum driver per branch")
	for _, b := range a.Branches {
		name := fmt.Sprintf("R%d", b.Branch)
		if b.LifecycleKnown {
			name += " (" + b.Lifecycle.Kind.Short()
			if e := b.Lifecycle.EndOfLifeText(); e != "" {
				name += ", end of life " + e
			}
			name += ")"
		}
		switch {
		case b.MinDriver == "":
			fmt.Fprintf(stdout, "  %-36s none: %s\n", name, b.Why)
		default:
			min := ">= " + b.MinDriver
			if b.AnyDriver {
				min = fmt.Sprintf("any %d.x", b.Branch)
			}
			fmt.Fprintf(stdout, "  %-36s %s", name, min)
			if len(b.FailsOnBrands) > 0 {
				fmt.Fprintf(stdout, " (not on brand %s)", strings.Join(b.FailsOnBrands, ", "))
			}
			if b.Status != check.Pass {
				fmt.Fprintf(stdout, " [%s] %s", b.Status, b.Why)
			}
			fmt.Fprintln(stdout)
		}
	}
	fmt.Fprintln(stdout, "\nGPUs (compute capabilities) its kernels run on, with the newest driver")
	if !a.GPUsKnown {
		fmt.Fprintln(stdout, "  unknown: no CUDA toolkit and no framework kernels found in the image (run gpu-preflight bake in it, or scan it with --root)")
		return exitOK
	}
	groups := map[check.Status][]string{}
	whys := map[check.Status][]string{}
	for _, g := range a.GPUs {
		groups[g.Status] = append(groups[g.Status], g.ComputeCapability)
		whys[g.Status] = append(whys[g.Status], g.ComputeCapability+": "+g.Why)
	}
	fmt.Fprintf(stdout, "  natively (cubins): %s\n", orNone(groups[check.Pass]))
	if v := groups[check.Warn]; len(v) > 0 {
		fmt.Fprintf(stdout, "  only through PTX JIT or past the toolkit's range: %s\n", strings.Join(v, ", "))
		for _, w := range whys[check.Warn] {
			fmt.Fprintf(stdout, "    %s\n", w)
		}
	}
	if v := groups[check.Error]; len(v) > 0 {
		fmt.Fprintf(stdout, "  not at all: %s\n    e.g. %s\n", strings.Join(v, ", "), whys[check.Error][0])
	}
	return exitOK
}

// gatherFor loads the configuration and gathers what the checks read: the
// facts advise and affinity start from.
func gatherFor(overrides map[string]string, environ []string) (check.Input, Config, error) {
	cfg, err := loadConfig(overrides)
	if err != nil {
		return check.Input{}, cfg, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	in, _ := cfg.checkInput(ctx, cfg.gatherOptions(envvars.Parse(environ)))
	return in, cfg, nil
}

// writeJSON prints v indented: exit 0, or 1 when it cannot be written.
func writeJSON(v any, stdout, stderr io.Writer) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "gpu-preflight: writing JSON: %v\n", err)
		return 1
	}
	return exitOK
}
