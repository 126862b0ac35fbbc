package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"

	"github.com/gpu-preflight/gpu-preflight/internal/buildinfo"
	"github.com/gpu-preflight/gpu-preflight/preflight/nvml"
)

// cmdVersion says whether the NVML probe is embedded: `go install` builds
// without it.
func cmdVersion(args, _ []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := parseFlags(fs, args, stdout); err != nil {
		return usageExit(stderr, err)
	}
	if fs.NArg() > 0 {
		return usageExit(stderr, usagef("version takes no arguments"))
	}
	probe := "NVML probe embedded"
	if !nvml.Embedded() {
		probe = "no NVML probe embedded"
	}
	fmt.Fprintf(stdout, "gpu-preflight %s (commit %s, %s, %s/%s, %s)\n", buildinfo.Version, buildinfo.Commit,
		runtime.Version(), runtime.GOOS, runtime.GOARCH, probe)
	return exitOK
}
