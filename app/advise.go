package app

import (
	"cmp"
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
	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
	"github.com/gpu-preflight/gpu-preflight/preflight/releases"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// Advise prints what n's driver (else this node's) runs and the framework
// builds that fit; with forImage and no driver, what the image at the root
// needs. An error is a usage error.
func Advise(cfg Config, env envvars.Env, n advise.Node, forImage, asJSON bool, stdout, stderr io.Writer) (int, error) {
	if forImage && n.Driver == "" {
		return adviseImage(cfg, env, asJSON, stdout, stderr), nil
	}
	if n.Driver == "" {
		in := checkInput(cfg, env)
		d := in.Facts.Host.Driver
		if !d.Present() {
			return ExitUsage, usagef("no NVIDIA driver found on this node: give the driver to advise for with --driver, e.g. --driver 525.60.13")
		}
		n.Driver, n.CUDA = d.Version, d.CUDAVersion
		if len(in.Visible) > 0 {
			n.GPU = cmp.Or(n.GPU, in.Visible[0].ComputeCapability)
			n.Brand = cmp.Or(n.Brand, in.Visible[0].Brand)
		}
	}
	a, err := advise.ForDriver(n, time.Now())
	if err != nil {
		return ExitUsage, usagef("%v", err)
	}
	if asJSON {
		return writeJSON(a, stdout, stderr), nil
	}
	writeAdvice(termsafe.NewWriter(stdout), a)
	return ExitOK, nil
}

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
	writeCUDARoutes(w, a)
	for _, fw := range releases.Frameworks {
		writeBuilds(w, a, fw)
	}
	fmt.Fprintln(w, "\nRows marked [unverified row] could not be confirmed on the framework's own pages (preflight/releases/tables.go says where each row was read).")
}

func writeCUDARoutes(w io.Writer, a advise.Advice) {
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
}

// writeBuilds prints fw's builds, best first; the minor-version limits were
// said once above.
func writeBuilds(w io.Writer, a advise.Advice, fw string) {
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
		if reason := v.Why(); reason != "" && v.Route != advise.MinorVersion {
			label := "why"
			if v.Route == advise.Native {
				label = "note"
			}
			fmt.Fprintf(w, "      %s: %s\n", label, reason)
		}
	}
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

// adviseImage judges the image on every driver branch and GPU generation.
func adviseImage(cfg Config, env envvars.Env, asJSON bool, stdout, stderr io.Writer) int {
	in := checkInput(cfg, env)
	c := in.Facts.Container
	a := advise.ForImage(nodeclass.Image{Container: c, Options: in.Options, Policy: policy.Policy(cfg.Policy), Ignore: cfg.ignore})
	if asJSON {
		return writeJSON(a, stdout, stderr)
	}
	w := termsafe.NewWriter(stdout) // names and versions come from the image
	fmt.Fprintf(w, "image at %s: CUDA %s", cfg.Root, orDash(c.CUDA.Version))
	if c.ScanSource != "" {
		fmt.Fprintf(w, " (%s)", c.ScanSource)
	}
	fmt.Fprintln(w)
	for _, r := range check.Requirements(in) {
		fmt.Fprintf(w, "  %s=%s\n", r.Var, truncate.Quote(r.Value, truncate.MessageBytes))
	}
	for _, fw := range c.Frameworks {
		fmt.Fprintf(w, "  %s %s (CUDA %s)\n", fw.Name, fw.Version, orDash(fw.CUDAVersion))
	}
	for _, cuda := range a.CUDA {
		if min, ok := compat.MinDriver(cuda); ok {
			fmt.Fprintf(w, "  CUDA %s runs natively from driver %s\n", cuda, min)
		}
	}
	fmt.Fprintln(w, "\nMinimum driver per branch")
	for _, b := range a.Branches {
		writeBranch(w, b)
	}
	writeImageGPUs(w, a)
	return ExitOK
}

func writeBranch(w io.Writer, b advise.BranchFloor) {
	name := fmt.Sprintf("R%d", b.Branch)
	if b.LifecycleKnown {
		name += " (" + b.Lifecycle.Kind.Short()
		if e := b.Lifecycle.EndOfLifeText(); e != "" {
			name += ", end of life " + e
		}
		name += ")"
	}
	if b.MinDriver == "" {
		fmt.Fprintf(w, "  %-36s none: %s\n", name, b.Why)
		return
	}
	min := ">= " + b.MinDriver
	if b.AnyDriver {
		min = fmt.Sprintf("any %d.x", b.Branch)
	}
	fmt.Fprintf(w, "  %-36s %s", name, min)
	if len(b.FailsOnBrands) > 0 {
		fmt.Fprintf(w, " (not on brand %s)", strings.Join(b.FailsOnBrands, ", "))
	}
	if b.Status != check.Pass {
		fmt.Fprintf(w, " [%s] %s", b.Status, b.Why)
	}
	fmt.Fprintln(w)
}

func writeImageGPUs(w io.Writer, a advise.ImageAdvice) {
	fmt.Fprintln(w, "\nGPUs (compute capabilities) its kernels run on, with the newest driver")
	if !a.GPUsKnown {
		fmt.Fprintln(w, "  unknown: no CUDA toolkit and no framework kernels found in the image (run gpu-preflight bake in it, or scan it with --root)")
		return
	}
	groups := map[check.Status][]string{}
	whys := map[check.Status][]string{}
	for _, g := range a.GPUs {
		groups[g.Status] = append(groups[g.Status], g.ComputeCapability)
		whys[g.Status] = append(whys[g.Status], g.ComputeCapability+": "+g.Why)
	}
	fmt.Fprintf(w, "  natively (cubins): %s\n", orNone(groups[check.Pass]))
	if v := groups[check.Warn]; len(v) > 0 {
		fmt.Fprintf(w, "  only through PTX JIT or past the toolkit's range: %s\n", strings.Join(v, ", "))
		for _, why := range whys[check.Warn] {
			fmt.Fprintf(w, "    %s\n", why)
		}
	}
	if v := groups[check.Error]; len(v) > 0 {
		fmt.Fprintf(w, "  not at all: %s\n    e.g. %s\n", strings.Join(v, ", "), whys[check.Error][0])
	}
}

// writeJSON prints v indented, escaped for a terminal by termsafe.JSON.
func writeJSON(v any, stdout, stderr io.Writer) int {
	b, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		_, err = stdout.Write(termsafe.JSON(append(b, '\n')))
	}
	if err != nil {
		fmt.Fprintf(stderr, "gpu-preflight: writing JSON: %v\n", err)
		return 1
	}
	return ExitOK
}
