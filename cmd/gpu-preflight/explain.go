package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/require"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// cmdExplain evaluates requirement strings (default: the image's
// NVIDIA_REQUIRE_* and PREFLIGHT_REQUIRE) against this host, per visible
// GPU, factor by factor, as libnvidia-container's dsl.c does: a factor
// after the term that held, or after a false factor of its term, is never
// evaluated, so it cannot make the string invalid. Its verdict is the
// cuda-requirement check's on the same facts: it exits 0 when that check
// passes (or only warns, on a guessed driver CUDA version), 1 when it
// fails, when the image's requirements cannot be collected, or when there
// is no driver to evaluate them against, and 64 when a factor it reached
// is not a valid expression (the toolkit's "invalid expression").
func cmdExplain(args, environ []string, stdout, stderr io.Writer) int {
	overrides := map[string]string{}
	fs := newFlagSet("explain", stderr, overrides, args)
	if err := parseFlags(fs, args, stdout); err != nil {
		return usageExit(stderr, err)
	}
	cfg, err := loadConfig(overrides)
	if err != nil {
		return usageExit(stderr, err)
	}
	cfg.printWarnings(stderr)

	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	in, _ := cfg.checkInput(ctx, cfg.gatherOptions(envvars.Parse(environ)))
	c := &in.Facts.Container
	if fs.NArg() > 0 {
		// The arguments replace the image's requirements.
		c.Requirements, c.RequireError, c.RequireDisabled = nil, "", false
		in.Options.ExtraRequire = ""
		for i, v := range fs.Args() {
			c.Requirements = append(c.Requirements, facts.Requirement{Var: fmt.Sprintf("argument %d", i+1), Value: v})
		}
	} else if c.RequireDisabled {
		fmt.Fprintln(stdout, "NVIDIA_DISABLE_REQUIRE is set: the toolkit would skip the image's requirements; explaining them anyway.")
		c.RequireDisabled = false
	}

	h := check.RequireHost(in)
	cudaFrom := in.Facts.Host.Driver.CUDAVersionSource
	if cudaFrom == "" {
		cudaFrom = in.Facts.Host.Driver.Source
	}
	fmt.Fprintln(stdout, termsafe.String(fmt.Sprintf("host: driver %s, CUDA %s (%s), %d visible GPU(s)",
		orDash(h.Driver), orDash(h.CUDA), orDash(cudaFrom), len(in.Visible))))
	if c.RequireError != "" {
		fmt.Fprintln(stdout, termsafe.String("the image's requirements cannot be collected: "+c.RequireError))
		return 1
	}
	reqs := check.Requirements(in)
	if len(reqs) == 0 {
		fmt.Fprintln(stdout, "the image declares no NVIDIA_REQUIRE_* and no CUDA_VERSION: nothing to explain")
		return exitOK
	}
	if !in.Facts.Host.Driver.Present() {
		// libnvidia-container takes a missing driver property as
		// satisfied, but without a driver the toolkit does not start the
		// container at all: "satisfied" here would pass a gate on a node
		// that cannot run the image.
		fmt.Fprintf(stdout, "no NVIDIA driver on this host: %s cannot be evaluated (the cuda-requirement check skips them)\n", termsafe.String(requirementNames(reqs)))
		return 1
	}
	invalid := false
	for _, r := range require.EvaluateAll(reqs, h, check.RequireDevices(in)) {
		fmt.Fprintln(stdout)
		// The requirement's text is escaped for the terminal (termsafe)
		// before it is laid out, so a control character, an escape
		// sequence or a newline in it cannot act or forge a line.
		termsafe.All(&r)
		fmt.Fprintln(stdout, strings.TrimRight(r.Explain(), "\n"))
		invalid = invalid || r.Err != nil
	}
	f := check.CUDARequirement.Run(in)
	fmt.Fprintf(stdout, "\ncuda-requirement: %s: %s\n", f.Status, termsafe.String(f.Message))
	switch {
	case invalid:
		return exitUsage
	case f.Status == check.Error:
		return 1
	}
	return exitOK
}

// requirementNames is "NVIDIA_REQUIRE_CUDA and argument 1".
func requirementNames(reqs []facts.Requirement) string {
	names := make([]string, len(reqs))
	for i, r := range reqs {
		names[i] = r.Var
	}
	return strings.Join(names, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
