package main

import (
	"io"

	"github.com/gpu-preflight/gpu-preflight/app"
	"github.com/gpu-preflight/gpu-preflight/preflight/advise"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
)

func cmdAdvise(args []string, given map[string]string, environ []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("advise", given, args)
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
	env := envvars.Parse(environ)
	cfg, err := app.Load(env, given)
	if err != nil {
		return usageExit(stderr, err)
	}
	_, forImage := given["PREFLIGHT_ROOT"] // --root: advise for the image there
	code, err := app.Advise(cfg, env, advise.Node{Driver: *driver, CUDA: *cuda, GPU: *gpu, Brand: *brand}, forImage, *asJSON, stdout, stderr)
	if err != nil {
		return usageExit(stderr, err)
	}
	return code
}
