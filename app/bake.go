package app

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/gpu-preflight/gpu-preflight/internal/buildinfo"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/gather"
	"github.com/gpu-preflight/gpu-preflight/preflight/image"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// Bake scans the image (at build time) and writes the manifest the run
// reads instead of scanning again: to out, a path on this machine, or by
// default to PREFLIGHT_MANIFEST inside the root. Exit 0, or 1.
func Bake(cfg Config, env envvars.Env, out string, stdout, stderr io.Writer) int {
	stdout, stderr = termsafe.NewWriter(stdout), termsafe.NewWriter(stderr) // paths and names come from the image
	cfg.PrintWarnings(stderr)
	if out == "" {
		out = fsroot.Root(cfg.Root).Path(cfg.Manifest)
	}
	m, warnings, err := gather.Bake(cfg.gatherOptions(env), image.BuildInfo{Version: buildinfo.Version, Commit: buildinfo.Commit})
	for _, w := range warnings {
		fmt.Fprintf(stderr, "gpu-preflight bake: warning: %s\n", w)
	}
	if err == nil {
		err = image.WriteManifest(out, m)
	}
	if err != nil {
		fmt.Fprintf(stderr, "gpu-preflight bake: %v\n", err)
		return 1
	}
	for _, w := range m.Warnings {
		fmt.Fprintf(stderr, "gpu-preflight bake: warning: %s\n", w)
	}
	fmt.Fprintf(stdout, "gpu-preflight bake: wrote %s: cuDNN %s, %d framework(s), %d kernel librar(ies), archs %v\n",
		filepath.Clean(out), orDash(m.Stack.CuDNN.Version), len(m.Frameworks), len(m.Libraries), m.Archs)
	return ExitOK
}
