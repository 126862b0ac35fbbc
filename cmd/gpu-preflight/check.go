package main

import (
	"io"

	"github.com/gpu-preflight/gpu-preflight/app"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
)

func cmdCheck(args []string, given map[string]string, environ []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("check", given, args)
	asJSON := fs.Bool("json", false, "print the provenance record as JSON")
	if err := parseFlags(fs, args, stdout); err != nil {
		return usageExit(stderr, err)
	}
	if fs.NArg() > 0 {
		return usageExit(stderr, usagef("check takes no arguments (to run a command: gpu-preflight -- %s)", fs.Arg(0)))
	}
	return runCheck(given, envvars.Parse(environ), *asJSON, stdout, stderr)
}

// runCheck is `gpu-preflight check` and the form without arguments.
func runCheck(given map[string]string, env envvars.Env, asJSON bool, stdout, stderr io.Writer) int {
	cfg, err := app.Load(env, given)
	if err != nil {
		return usageExit(stderr, err)
	}
	code, err := app.Check(cfg, env, asJSON, stdout, stderr)
	if err != nil {
		return usageExit(stderr, err)
	}
	return code
}
