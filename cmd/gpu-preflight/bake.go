package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/gpu-preflight/gpu-preflight/cmd/gpu-preflight/internal/buildinfo"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/gather"
	"github.com/gpu-preflight/gpu-preflight/preflight/image"
)

// cmdBake scans the image (at build time, in a Dockerfile RUN step) and
// writes the manifest the runtime reads instead of rescanning. --out is a
// path on this machine; by default the manifest goes inside the root at
// PREFLIGHT_MANIFEST.
func cmdBake(args, environ []string, stdout, stderr io.Writer) int {
	overrides := map[string]string{}
	fs := newFlagSet("bake", stderr, overrides, args)
	out := fs.String("out", "", "where to write the manifest (default: PREFLIGHT_MANIFEST inside the root)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return usageExit(stderr, err)
	}
	if fs.NArg() > 0 {
		return usageExit(stderr, usagef("bake takes no arguments"))
	}
	cfg, err := loadConfig(overrides)
	if err != nil {
		return usageExit(stderr, err)
	}
	cfg.printWarnings(stderr)
	root := fsroot.Root(cfg.Root)
	path := *out
	if path == "" {
		path = root.Path(cfg.Manifest)
	}
	m, warnings, err := gather.Bake(cfg.gatherOptions(envvars.Parse(environ)), image.BuildInfo{Version: buildinfo.Version, Commit: buildinfo.Commit})
	for _, w := range warnings {
		fmt.Fprintf(stderr, "gpu-preflight bake: warning: %s\n", w)
	}
	if err != nil {
		fmt.Fprintf(stderr, "gpu-preflight bake: %v\n", err)
		return 1
	}
	if err := image.WriteManifest(path, m); err != nil {
		fmt.Fprintf(stderr, "gpu-preflight bake: %v\n", err)
		return 1
	}
	for _, w := range m.Warnings {
		fmt.Fprintf(stderr, "gpu-preflight bake: warning: %s\n", w)
	}
	fmt.Fprintf(stdout, "gpu-preflight bake: wrote %s: cuDNN %s, %d framework(s), %d kernel librar(ies), archs %v\n",
		filepath.Clean(path), orDash(m.Stack.CuDNN.Version), len(m.Frameworks), len(m.Libraries), m.Archs)
	return 0
}
