package app

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/require"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// Explain evaluates requirements (by default the image's) on this host,
// factor by factor as libnvidia-container's dsl.c does, and exits as the
// cuda-requirement check judges: 0, or 1; 64 for an invalid factor.
func Explain(cfg Config, env envvars.Env, requirements []string, stdout, stderr io.Writer) int {
	cfg.PrintWarnings(stderr)
	in := checkInput(cfg, env)
	c := &in.Facts.Container
	if len(requirements) > 0 {
		c.Requirements, c.RequireError, c.RequireDisabled = nil, "", false
		in.Options.ExtraRequire = ""
		for i, v := range requirements {
			c.Requirements = append(c.Requirements, facts.Requirement{Var: fmt.Sprintf("argument %d", i+1), Value: v})
		}
	} else if c.RequireDisabled {
		fmt.Fprintln(stdout, "NVIDIA_DISABLE_REQUIRE is set: the toolkit would skip the image's requirements; explaining them anyway.")
		c.RequireDisabled = false
	}
	h := check.RequireHost(in)
	driver := in.Facts.Host.Driver
	fmt.Fprintln(stdout, termsafe.String(fmt.Sprintf("host: driver %s, CUDA %s (%s), %d visible GPU(s)",
		orDash(h.Driver), orDash(h.CUDA), orDash(cmp.Or(driver.CUDAVersionSource, driver.Source)), len(in.Visible))))
	if c.RequireError != "" {
		fmt.Fprintln(stdout, termsafe.String("the image's requirements cannot be collected: "+c.RequireError))
		return 1
	}
	reqs := check.Requirements(in)
	if len(reqs) == 0 {
		fmt.Fprintln(stdout, "the image declares no NVIDIA_REQUIRE_* and no CUDA_VERSION: nothing to explain")
		return ExitOK
	}
	if !driver.Present() {
		// "Satisfied" without a driver would pass a node no container starts on.
		fmt.Fprintf(stdout, "no NVIDIA driver on this host: %s cannot be evaluated (the cuda-requirement check skips them)\n", termsafe.String(requirementNames(reqs)))
		return 1
	}
	return explainEach(in, reqs, h, stdout)
}

// explainEach prints each evaluation, escaped before it is laid out.
func explainEach(in check.Input, reqs []facts.Requirement, h require.Host, stdout io.Writer) int {
	invalid := false
	for _, r := range require.EvaluateAll(reqs, h, check.RequireDevices(in)) {
		fmt.Fprintln(stdout)
		termsafe.All(&r)
		fmt.Fprintln(stdout, strings.TrimRight(r.Explain(), "\n"))
		invalid = invalid || r.Err != nil
	}
	f := check.CUDARequirement.Run(in)
	fmt.Fprintf(stdout, "\ncuda-requirement: %s: %s\n", f.Status, termsafe.String(f.Message))
	switch {
	case invalid:
		return ExitUsage
	case f.Status == check.Error:
		return 1
	}
	return ExitOK
}

func requirementNames(reqs []facts.Requirement) string {
	names := make([]string, len(reqs))
	for i, r := range reqs {
		names[i] = r.Var
	}
	return strings.Join(names, ", ")
}
