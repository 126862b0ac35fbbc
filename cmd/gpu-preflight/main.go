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
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/cmd/gpu-preflight/internal/buildinfo"
	"github.com/gpu-preflight/gpu-preflight/internal/initproc"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/nvml"
)

// Exit codes (README "Exit codes").
const (
	exitOK         = 0
	exitUsage      = 64                  // usage or configuration error
	exitNotExec    = 126                 // command found but not executable
	exitNotFound   = 127                 // command not found
	exitSignalBase = initproc.SignalBase // + signal number
)

// subcommand is one first argument gpu-preflight answers itself.
type subcommand struct {
	name     string
	synopsis string // the arguments, after "gpu-preflight NAME"
	summary  string
	// reads are the parts of the configuration the command reads: its
	// configuration flags and the settings its -h lists.
	reads []string
	run   func(args, environ []string, stdout, stderr io.Writer) int
}

// subcommands are listed in this order by help; the same table dispatches.
// It is filled in init: the handlers print help, which reads the table.
var subcommands []subcommand

func init() {
	gathers := []string{partImage, partHost, partChecks}
	decides := []string{partImage, partHost, partChecks, partDecision}
	subcommands = []subcommand{
		{"check", "[--json] [flags]", "checks only: a human report on stdout (--json: the provenance record); exits 0 or the abort code",
			[]string{partImage, partHost, partChecks, partDecision, partRecord}, cmdCheck},
		{"explain", "[flags] [REQUIREMENT...]", "evaluate requirements (default: the image's) factor by factor; exit 1 when one does not hold",
			gathers, cmdExplain},
		{"bake", "[--out FILE] [flags]", "scan the image and write its manifest (at build time)", []string{partImage}, cmdBake},
		{"diff", "[--json] OLD.json NEW.json | DIR", "what changed between two provenance records; exit 1 when something that matters changed", nil, cmdDiff},
		{"trace", "[--json] [--job ID] [--image REF|DIGEST] [--since T] [--until T] SOURCE...", "fleet questions over many records: ranks that differ, where runs started failing, nodes to drain; exit 1 on drift that matters", nil, cmdTrace},
		{"advise", "[--driver V] [--gpu CC] [--brand B] | --root DIR", "which CUDA versions and framework builds a driver runs; with --root, the minimum driver per branch and the GPUs an image runs on",
			decides, cmdAdvise},
		{"affinity", "[--root DIR]", "Kubernetes nodeAffinity for the image over GPU Feature Discovery labels", decides, cmdAffinity},
		{"version", "", "version, commit, Go version (also --version)", nil, cmdVersion},
		{"help", "[COMMAND]", "this help, or a command's", nil, nil},
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

func main() {
	// The environment as it was when we started: the command gets exactly
	// this, whatever configuration flags route through the environment.
	environ := os.Environ()
	os.Exit(run(os.Args[1:], environ, os.Stdout, os.Stderr))
}

func run(args, environ []string, stdout, stderr io.Writer) int {
	overrides := map[string]string{}
	rest, sawDashes := args, false
	switch {
	case len(args) > 0 && args[0] == "--":
		rest, sawDashes = args[1:], true
	case len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-':
		// flag reads flags up to the first argument that is none (or
		// "-", or after "--"), so only a command line that starts with
		// one needs the flag set: the ENTRYPOINT form ends in "--", and
		// building the set is an allocation per setting at every start.
		fs := newFlagSet("gpu-preflight", stderr, overrides, args)
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
		return checkMain(overrides, false, envvars.Parse(environ), stdout, stderr)
	}
	if !sawDashes {
		if rest[0] == "help" {
			return cmdHelp(rest[1:], stdout, stderr)
		}
		if sub, ok := findSubcommand(rest[0]); ok {
			// Global flags before the subcommand apply to it too.
			for name, v := range overrides {
				os.Setenv(name, v)
			}
			return sub.run(rest[1:], environ, stdout, stderr)
		}
	}
	// The ENTRYPOINT form: the environment is parsed here once, for the
	// typo check, the facts, the record and the command's PATH lookup.
	env := envvars.Parse(environ)
	if !sawDashes {
		if err := typoOfSubcommand(rest[0], env); err != nil {
			return usageExit(stderr, err)
		}
	}
	return preflightAndExec(overrides, rest, env, stdout, stderr)
}

// typoOfSubcommand refuses a first argument that is no command on PATH but
// looks like a misspelt subcommand ("chek"), before any preflight runs: a
// typo must not cost a run, a record and a confusing exit 127.
func typoOfSubcommand(arg string, env envvars.Env) error {
	if _, err := lookPath(arg, env); err == nil || filepath.Base(arg) != arg {
		return nil
	}
	var names []string
	for _, s := range subcommands {
		names = append(names, s.name)
	}
	m, ok := closest(arg, names)
	if !ok {
		return nil
	}
	return usagef("unknown command %q: did you mean %q? (to run a program named %s, put it after --: gpu-preflight -- %s)",
		arg, m, arg, arg)
}

// newFlagSet returns a flag set with the configuration flags of the parts
// the command name reads (all of them for the ENTRYPOINT form), whose help
// and errors are printed by usageExit (through parseFlags). args are what
// it will parse: only the flags they name are registered (flagsNamed).
func newFlagSet(name string, stderr io.Writer, overrides map[string]string, args []string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	settings := settingsOf(readsOf(name))
	addConfigFlags(fs, settings, overrides, flagsNamed(args, settings))
	fs.Usage = func() {}
	return fs
}

// flagsNamed are the flags of settings that args can name, or nil (all of
// them) when an argument that looks like a flag names none: -h, a
// command's own flag, a typo, whose help or error lists every flag.
// Registering a flag is an allocation or two per setting, 25 in all at
// every start; a command line names a few. Every argument before "--"
// that starts with "-" counts, values and words after the command too:
// the flag package parses fewer, so no flag it meets can be missing, and
// an extra one registered changes nothing.
func flagsNamed(args []string, settings []setting) []string {
	var names []string
	for _, a := range args {
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if !slices.ContainsFunc(settings, func(s setting) bool { return s.Flag == name }) {
			return nil
		}
		names = append(names, name)
	}
	if names == nil {
		names = []string{}
	}
	return names
}

// readsOf is the parts of the configuration the command name reads: a
// subcommand's, or everything for the ENTRYPOINT form.
func readsOf(name string) []string {
	if sub, ok := findSubcommand(name); ok {
		return sub.reads
	}
	return allParts
}

// helpRequest is -h or --help: usageExit prints fs's help to w.
type helpRequest struct {
	fs *flag.FlagSet
	w  io.Writer
}

func (h helpRequest) Error() string        { return flag.ErrHelp.Error() }
func (h helpRequest) Is(target error) bool { return target == flag.ErrHelp }

// parseFlags parses args into fs. -h and --help become a helpRequest
// printed to stdout; an unknown flag names the one it looks like.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		return helpRequest{fs, stdout}
	}
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		msg := fmt.Sprintf("unknown flag --%s", name)
		if m, ok := closest(name, names); ok {
			msg += fmt.Sprintf(" (did you mean --%s?)", m)
		}
		return usagef("%s", msg)
	}
	if name, rest, ok := strings.Cut(strings.TrimPrefix(err.Error(), "invalid value "), " for flag -"); ok {
		// flag's own parsing failed (a --json=maybe): say it with --.
		return usagef("invalid value %s for flag --%s", name, rest)
	}
	return usagef("%v", err)
}

// usageExit prints err and returns 64, or for -h prints the help and
// returns 0.
func usageExit(stderr io.Writer, err error) int {
	var h helpRequest
	if errors.As(err, &h) {
		fmt.Fprint(h.w, help(h.fs))
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stderr, help(nil))
		return exitOK
	}
	fmt.Fprintf(stderr, "gpu-preflight: %v\n(run gpu-preflight -h for usage)\n", err)
	return exitUsage
}

// cmdHelp is `gpu-preflight help [COMMAND]`.
func cmdHelp(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		fmt.Fprint(stdout, help(nil))
		return exitOK
	case len(args) > 1:
		return usageExit(stderr, usagef("help takes at most one command"))
	}
	sub, ok := findSubcommand(args[0])
	if !ok || sub.run == nil {
		var names []string
		for _, s := range subcommands {
			names = append(names, s.name)
		}
		msg := fmt.Sprintf("help: no command %q", args[0])
		if m, ok := closest(args[0], names); ok {
			msg += fmt.Sprintf(" (did you mean %q?)", m)
		}
		return usageExit(stderr, usagef("%s", msg))
	}
	// A command's help is what its -h prints.
	return sub.run([]string{"-h"}, nil, stdout, stderr)
}

// item writes one entry of a help list: the name, then what it does,
// indented on the next line, so that help fits 80 columns.
func item(b *strings.Builder, name, what string) {
	fmt.Fprintf(b, "  %s\n        %s\n", name, what)
}

// help is the text -h prints: for the whole program (fs nil, or the
// top-level set), or for one subcommand, its own flags and, when it takes
// them, the configuration.
func help(fs *flag.FlagSet) string {
	var b strings.Builder
	if fs == nil || fs.Name() == "gpu-preflight" {
		b.WriteString("gpu-preflight checks a GPU container's host and image, records what ran, then execs the command.\n\nUsage:\n")
		item(&b, "gpu-preflight [flags] [--] CMD [ARG...]", "check, log, record, then exec CMD (the ENTRYPOINT form)")
		item(&b, "gpu-preflight [flags]", "the same as check")
		for _, s := range subcommands {
			item(&b, strings.TrimSpace("gpu-preflight "+s.name+" "+s.synopsis), s.summary)
		}
		b.WriteString("\nIn an image whose ENTRYPOINT is [\"gpu-preflight\", \"--\"], run a subcommand with\n" +
			"  docker run --entrypoint gpu-preflight IMAGE check\n" +
			"since everything after -- is the command to run.\n\nFlags:\n")
		item(&b, "--version", "print the version and exit")
		item(&b, "-h, --help", "this help; gpu-preflight help COMMAND (or COMMAND -h) for a command's")
		b.WriteString("\n")
		b.WriteString(configHelp(allParts))
		return b.String()
	}
	sub, _ := findSubcommand(fs.Name())
	fmt.Fprintf(&b, "Usage: %s\n\n  %s\n", strings.TrimSpace("gpu-preflight "+sub.name+" "+sub.synopsis), sub.summary)
	var own []string
	fs.VisitAll(func(f *flag.Flag) {
		if !isConfigFlag(f.Name) {
			own = append(own, f.Name)
		}
	})
	if len(own) > 0 {
		b.WriteString("\nFlags:\n")
		for _, name := range own {
			item(&b, "--"+name, fs.Lookup(name).Usage)
		}
	}
	if len(sub.reads) > 0 {
		b.WriteString("\n" + configHelp(sub.reads))
	}
	return b.String()
}

func cmdVersion(args, _ []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := parseFlags(fs, args, stdout); err != nil {
		return usageExit(stderr, err)
	}
	if fs.NArg() > 0 {
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
