// Go's cgroup-aware GOMAXPROCS keeps the cgroup's files open, and in
// supervise mode they count against the command's descriptor limit.
//go:debug containermaxprocs=0

// Command gpu-preflight checks a GPU container's host and image before the
// training command starts, records what ran, and then execs the command:
//
//	ENTRYPOINT ["/usr/local/bin/gpu-preflight", "--"]
//	CMD ["python", "train.py"]
//
// This package reads the command line; package app does the work.
package main

import (
	"io"
	"os"
	"path/filepath"

	"github.com/gpu-preflight/gpu-preflight/app"
	"github.com/gpu-preflight/gpu-preflight/internal/suggest"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
)

// Exit codes (README "Exit codes").
const (
	exitOK       = app.ExitOK
	exitUsage    = app.ExitUsage
	exitNotFound = app.ExitNotFound
)

// subcommand is one first argument gpu-preflight answers itself.
type subcommand struct {
	name     string
	synopsis string // the arguments, after "gpu-preflight NAME"
	summary  string
	reads    []string // the parts of the configuration it reads: its flags and the settings its -h lists
	run      func(args []string, given map[string]string, environ []string, stdout, stderr io.Writer) int
}

// subcommands dispatch, and help lists them in this order; init fills the
// table, since the handlers print help, which reads it.
var subcommands []subcommand

func init() {
	gathers := []string{app.PartImage, app.PartHost, app.PartChecks}
	decides := []string{app.PartImage, app.PartHost, app.PartChecks, app.PartDecision}
	subcommands = []subcommand{
		{"check", "[--json] [flags]", "checks only: a human report on stdout (--json: the provenance record); exits 0 or the abort code",
			[]string{app.PartImage, app.PartHost, app.PartChecks, app.PartDecision, app.PartRecord}, cmdCheck},
		{"explain", "[flags] [REQUIREMENT...]", "evaluate requirements (default: the image's) factor by factor; exit 1 when one does not hold",
			gathers, cmdExplain},
		{"bake", "[--out FILE] [flags]", "scan the image and write its manifest (at build time)", []string{app.PartImage}, cmdBake},
		{"diff", "[--json] OLD.json NEW.json | DIR", "what changed between two provenance records; exit 1 when something that matters changed", nil, readsNoConfig(cmdDiff)},
		{"trace", "[--json] [--job ID] [--image REF|DIGEST] [--since T] [--until T] SOURCE...", "fleet questions over many records: ranks that differ, where runs started failing, nodes to drain; exit 1 on drift that matters", nil, readsNoConfig(cmdTrace)},
		{"advise", "[--driver V] [--gpu CC] [--brand B] | --root DIR", "which CUDA versions and framework builds a driver runs; with --root, the minimum driver per branch and the GPUs an image runs on",
			decides, cmdAdvise},
		{"affinity", "[--root DIR]", "Kubernetes nodeAffinity for the image over GPU Feature Discovery labels", decides, cmdAffinity},
		{"version", "", "version, commit, Go version (also --version)", nil, readsNoConfig(cmdVersion)},
		{"help", "[COMMAND]", "this help, or a command's", nil, nil},
	}
}

func readsNoConfig(f func(args, environ []string, stdout, stderr io.Writer) int) func([]string, map[string]string, []string, io.Writer, io.Writer) int {
	return func(args []string, _ map[string]string, environ []string, stdout, stderr io.Writer) int {
		return f(args, environ, stdout, stderr)
	}
}

func findSubcommand(name string) (subcommand, bool) {
	for _, s := range subcommands {
		if s.name == name {
			return s, true
		}
	}
	return subcommand{}, false
}

func subcommandNames() []string {
	names := make([]string, len(subcommands))
	for i, s := range subcommands {
		names[i] = s.name
	}
	return names
}

func main() {
	os.Exit(run(os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}

// run dispatches. given holds the configuration flags' values by variable;
// those before a subcommand apply to it too.
func run(args, environ []string, stdout, stderr io.Writer) int {
	given := map[string]string{}
	rest, sawDashes := args, false
	switch {
	case len(args) > 0 && args[0] == "--":
		rest, sawDashes = args[1:], true
	case len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-':
		// Only a flag first needs the flag set; the ENTRYPOINT form starts with --.
		fs := newFlagSet("gpu-preflight", given, args)
		version := fs.Bool("version", false, "print the version and exit")
		if err := parseFlags(fs, args, stdout); err != nil {
			return usageExit(stderr, err)
		}
		if *version {
			return cmdVersion(nil, environ, stdout, stderr)
		}
		rest = fs.Args()
		consumed := len(args) - len(rest)
		sawDashes = consumed > 0 && args[consumed-1] == "--"
	}
	if len(rest) == 0 {
		if sawDashes {
			return usageExit(stderr, usagef("no command after --"))
		}
		return runCheck(given, envvars.Parse(environ), false, stdout, stderr)
	}
	if !sawDashes {
		if rest[0] == "help" {
			return cmdHelp(rest[1:], stdout, stderr)
		}
		if sub, ok := findSubcommand(rest[0]); ok {
			return sub.run(rest[1:], given, environ, stdout, stderr)
		}
	}
	// Parsed once, for the typo check, the configuration, the facts and PATH.
	env := envvars.Parse(environ)
	if !sawDashes {
		if err := typoOfSubcommand(rest[0], env); err != nil {
			return usageExit(stderr, err)
		}
	}
	cfg, err := app.Load(env, given)
	if err != nil {
		return usageExit(stderr, err)
	}
	code, err := app.Run(cfg, env, rest, subcommandNames(), stderr)
	if err != nil {
		return usageExit(stderr, err)
	}
	return code
}

// typoOfSubcommand refuses a misspelt subcommand ("chek") that is no
// program on PATH: a typo must not cost a run, a record and an exit 127.
func typoOfSubcommand(arg string, env envvars.Env) error {
	if _, err := app.LookPath(arg, env); err == nil || filepath.Base(arg) != arg {
		return nil
	}
	m, ok := suggest.Closest(arg, subcommandNames())
	if !ok {
		return nil
	}
	return usagef("unknown command %q: did you mean %q? (to run a program named %s, put it after --: gpu-preflight -- %s)",
		arg, m, arg, arg)
}
