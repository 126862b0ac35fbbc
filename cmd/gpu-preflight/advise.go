package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/advise"
	"github.com/gpu-preflight/gpu-preflight/preflight/releases"
)

// cmdAdvise prints what a driver runs and which framework builds fit it:
// for --driver (and --gpu, --brand) anywhere, or for this node's driver
// and first visible GPU. Exit 0, or 64 on a usage error.
func cmdAdvise(args, environ []string, stdout, stderr io.Writer) int {
	overrides := map[string]string{}
	fs := newFlagSet("advise", stderr, overrides)
	driver := fs.String("driver", "", "driver version to advise for, e.g. 525.60.13 (default: this node's)")
	cuda := fs.String("cuda", "", "the driver's CUDA version, when the branch table does not know it")
	gpu := fs.String("gpu", "", "compute capability of the GPU, e.g. 8.0")
	brand := fs.String("brand", "", "NVML brand of the GPU: tesla, nvidia, geforcertx, ...")
	asJSON := fs.Bool("json", false, "print the advice as JSON")
	if err := fs.Parse(args); err != nil {
		return usageExit(stderr, err)
	}
	if fs.NArg() > 0 {
		return usageExit(stderr, usagef("advise takes no arguments (did you mean --driver %s?)", fs.Arg(0)))
	}
	n := advise.Node{Driver: *driver, CUDA: *cuda, GPU: *gpu, Brand: *brand}
	if n.Driver == "" {
		cfg, err := loadConfig(overrides)
		if err != nil {
			return usageExit(stderr, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
		defer cancel()
		in, _ := cfg.checkInput(ctx, cfg.gatherOptions(environ))
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
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(a); err != nil {
			fmt.Fprintf(stderr, "gpu-preflight advise: %v\n", err)
			return 1
		}
		return exitOK
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
			if v.Route == advise.Fails || v.Route == advise.Forward {
				if reason := v.Why(); reason != "" {
					fmt.Fprintf(w, "      why: %s\n", reason)
				}
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
