package main

import (
	"fmt"
	"io"

	"github.com/gpu-preflight/gpu-preflight/app"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
)

func cmdAffinity(args []string, given map[string]string, environ []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("affinity", given, args)
	deprecated := fs.Bool("deprecated-labels", false, "match on GFD's older cuda.driver.* labels (GFD before v0.15.0)")
	slurm := fs.Bool("slurm", false, "say what Slurm offers instead")
	if err := parseFlags(fs, args, stdout); err != nil {
		return usageExit(stderr, err)
	}
	if fs.NArg() > 0 {
		return usageExit(stderr, usagef("affinity takes no arguments (the image is --root DIR)"))
	}
	if *slurm {
		fmt.Fprintln(stdout, app.SlurmNote)
		return exitOK
	}
	env := envvars.Parse(environ)
	cfg, err := app.Load(env, given)
	if err != nil {
		return usageExit(stderr, err)
	}
	return app.Affinity(cfg, env, *deprecated, stdout, stderr)
}
