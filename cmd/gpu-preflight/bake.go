package main

import (
	"io"

	"github.com/gpu-preflight/gpu-preflight/app"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
)

func cmdBake(args []string, given map[string]string, environ []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bake", given, args)
	out := fs.String("out", "", "where to write the manifest (default: PREFLIGHT_MANIFEST inside the root)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return usageExit(stderr, err)
	}
	if fs.NArg() > 0 {
		return usageExit(stderr, usagef("bake takes no arguments"))
	}
	env := envvars.Parse(environ)
	cfg, err := app.Load(env, given)
	if err != nil {
		return usageExit(stderr, err)
	}
	return app.Bake(cfg, env, *out, stdout, stderr)
}
