package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/require"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// cmdExplain evaluates requirement strings (default: the image's
// NVIDIA_REQUIRE_* and PREFLIGHT_REQUIRE) against this host, per visible
// GPU, factor by factor. It exits 0 when all hold, 1 when one does not, 64
// on a syntax error.
func cmdExplain(args, environ []string, stdout, stderr io.Writer) int {
	overrides := map[string]string{}
	fs := newFlagSet("explain", stderr, overrides)
	if err := fs.Parse(args); err != nil {
		return usageExit(stderr, err)
	}
	cfg, err := loadConfig(overrides)
	if err != nil {
		return usageExit(stderr, err)
	}
	var reqs []facts.Requirement
	for i, v := range fs.Args() {
		if err := require.Validate(v); err != nil {
			return usageExit(stderr, usagef("requirement %d %q: %v", i+1, v, err))
		}
		reqs = append(reqs, facts.Requirement{Var: fmt.Sprintf("argument %d", i+1), Value: v})
	}

	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	in, _ := cfg.checkInput(ctx, cfg.gatherOptions(environ))
	f, visible := in.Facts, in.Visible
	if len(reqs) == 0 {
		if f.Container.RequireDisabled {
			fmt.Fprintln(stdout, "NVIDIA_DISABLE_REQUIRE is set: the toolkit would skip the image's requirements; explaining them anyway.")
		}
		reqs = check.Requirements(in)
	}
	h := check.RequireHost(in)
	fmt.Fprintln(stdout, termsafe.String(fmt.Sprintf("host: driver %s, CUDA %s (%s), %d visible GPU(s)",
		orDash(h.Driver), orDash(h.CUDA), orDash(f.Host.Driver.Source), len(visible))))
	if len(reqs) == 0 {
		fmt.Fprintln(stdout, "the image declares no NVIDIA_REQUIRE_* and no CUDA_VERSION: nothing to explain")
		return exitOK
	}
	code := exitOK
	for _, r := range require.EvaluateAll(reqs, h, check.RequireDevices(in)) {
		fmt.Fprintln(stdout)
		// The requirement's text is escaped for the terminal (termsafe)
		// before it is laid out, so a control character, an escape
		// sequence or a newline in it cannot act or forge a line.
		termsafe.All(&r)
		fmt.Fprintln(stdout, strings.TrimRight(r.Explain(), "\n"))
		if r.Err != nil || !r.Satisfied {
			code = 1
		}
	}
	return code
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
