package main

import (
	"io"

	"github.com/gpu-preflight/gpu-preflight/app"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
)

func cmdExplain(args []string, given map[string]string, environ []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("explain", given, args)
	if err := parseFlags(fs, args, stdout); err != nil {
		return usageExit(stderr, err)
	}
	env := envvars.Parse(environ)
	cfg, err := app.Load(env, given)
	if err != nil {
		return usageExit(stderr, err)
	}
	return app.Explain(cfg, env, fs.Args(), stdout, stderr)
}
