// Command gpu-preflight checks a GPU container's host and image before the
// training command starts, records what ran, and then execs the command:
//
//	ENTRYPOINT ["/usr/local/bin/gpu-preflight", "--"]
//	CMD ["python", "train.py"]
//
// See the README for commands, configuration and exit codes.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/gpu-preflight/gpu-preflight/cmd/gpu-preflight/internal/buildinfo"
	"github.com/gpu-preflight/gpu-preflight/preflight/nvml"
)

// Exit codes (README "Exit codes").
const (
	exitOK         = 0
	exitUsage      = 64  // usage or configuration error
	exitNotExec    = 126 // command found but not executable
	exitNotFound   = 127 // command not found
	exitSignalBase = 128 // + signal number
)

const usageText = `Usage:
  gpu-preflight [flags] [--] CMD [ARG...]   check, log, record, then exec CMD
  gpu-preflight [flags]                     same as check
  gpu-preflight check [--json] [flags]      checks only; --json prints the provenance record
  gpu-preflight explain [REQUIREMENT...]    evaluate requirements factor by factor
  gpu-preflight bake [--out FILE] [flags]   scan the image and write its manifest (at build time)
  gpu-preflight diff OLD.json NEW.json|DIR  what changed between two provenance records
  gpu-preflight advise [--driver V] [--gpu CC] [--brand B]
                                            which CUDA versions and framework builds a driver runs
  gpu-preflight advise --root DIR           the minimum driver per branch and the GPUs an image runs on
  gpu-preflight affinity [--root DIR]       Kubernetes nodeAffinity for the image over GPU Feature Discovery labels
  gpu-preflight version                     version, commit, Go version

`

func main() {
	// The environment as it was when we started: the command gets exactly
	// this, whatever configuration flags route through the environment.
	environ := os.Environ()
	os.Exit(run(os.Args[1:], environ, os.Stdout, os.Stderr))
}

// subcommands maps a first argument to its handler.
var subcommands = map[string]func(args, environ []string, stdout, stderr io.Writer) int{
	"check":    cmdCheck,
	"explain":  cmdExplain,
	"bake":     cmdBake,
	"diff":     cmdDiff,
	"advise":   cmdAdvise,
	"affinity": cmdAffinity,
	"version":  cmdVersion,
}

func run(args, environ []string, stdout, stderr io.Writer) int {
	overrides := map[string]string{}
	fs := newFlagSet("gpu-preflight", stderr, overrides)
	if err := fs.Parse(args); err != nil {
		return usageExit(stderr, err)
	}
	rest := fs.Args()
	consumed := len(args) - len(rest)
	sawDashes := consumed > 0 && args[consumed-1] == "--"
	if len(rest) == 0 {
		if sawDashes {
			return usageExit(stderr, usagef("no command after --"))
		}
		return checkMain(overrides, false, environ, stdout, stderr)
	}
	if sub, ok := subcommands[rest[0]]; ok && !sawDashes {
		if len(overrides) > 0 {
			// Global flags before the subcommand apply to it too.
			for name, v := range overrides {
				os.Setenv(name, v)
			}
		}
		return sub(rest[1:], environ, stdout, stderr)
	}
	return preflightAndExec(overrides, rest, environ, stdout, stderr)
}

func newFlagSet(name string, stderr io.Writer, overrides map[string]string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addConfigFlags(fs, overrides)
	fs.Usage = func() {}
	return fs
}

// usageExit prints err (and, for -h, the usage) and returns 64, or 0 for -h.
func usageExit(stderr io.Writer, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stderr, usageText+configHelp())
		return exitOK
	}
	fmt.Fprintf(stderr, "gpu-preflight: %v\n(run gpu-preflight -h for usage)\n", err)
	return exitUsage
}

func cmdVersion(args, _ []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		return usageExit(stderr, usagef("version takes no arguments"))
	}
	// The probe decides whether NVML can be asked at all, and `go install`
	// builds without it, so say which kind of binary this is.
	probe := "NVML probe embedded"
	if !nvml.Embedded() {
		probe = "no NVML probe embedded"
	}
	fmt.Fprintf(stdout, "gpu-preflight %s (commit %s, %s, %s/%s, %s)\n", buildinfo.Version, buildinfo.Commit,
		runtime.Version(), runtime.GOOS, runtime.GOARCH, probe)
	return exitOK
}
