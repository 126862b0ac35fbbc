package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/app"
	"github.com/gpu-preflight/gpu-preflight/internal/suggest"
)

// newFlagSet returns a flag set for the command name with the
// configuration flags of the parts it reads (all of them for the
// ENTRYPOINT form), writing their values into given by variable. Only the
// flags args can name are registered (flagsNamed).
func newFlagSet(name string, given map[string]string, args []string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	settings := app.SettingsOf(readsOf(name))
	addConfigFlags(fs, settings, given, flagsNamed(args, settings))
	return fs
}

// readsOf is the parts of the configuration the command name reads.
func readsOf(name string) []string {
	if sub, ok := findSubcommand(name); ok {
		return sub.reads
	}
	return app.AllParts
}

// flagsNamed are the flags of settings that args can name, or nil (all)
// when an argument that looks like a flag names none (-h, a command's own
// flag, a typo), whose help or error lists every flag. Registering a flag
// costs an allocation or two at every start, and a command line names few.
// Every argument before "--" that starts with "-" counts: the flag package
// parses fewer, and an extra one registered changes nothing.
func flagsNamed(args []string, settings []app.Setting) []string {
	names := []string{}
	for _, a := range args {
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if !slices.ContainsFunc(settings, func(s app.Setting) bool { return s.Flag == name }) {
			return nil
		}
		names = append(names, name)
	}
	return names
}

// addConfigFlags registers the flag of each setting (of those only names,
// unless nil). A boolean one needs no value: --supervise, and still
// --supervise=auto. -h prints configHelp, never the flag's own usage.
func addConfigFlags(fs *flag.FlagSet, settings []app.Setting, given map[string]string, only []string) {
	for _, s := range settings {
		if only != nil && !slices.Contains(only, s.Flag) {
			continue
		}
		key := s.Key
		set := func(v string) error {
			given[key] = v
			return nil
		}
		if s.Bool {
			fs.BoolFunc(s.Flag, "", set)
		} else {
			fs.Func(s.Flag, "", set)
		}
	}
}

func isConfigFlag(name string) bool {
	return slices.ContainsFunc(app.Settings(), func(s app.Setting) bool { return s.Flag == name })
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
		if m, ok := suggest.Closest(name, names); ok {
			msg += fmt.Sprintf(" (did you mean --%s?)", m)
		}
		return usagef("%s", msg)
	}
	if value, name, ok := strings.Cut(strings.TrimPrefix(err.Error(), "invalid value "), " for flag -"); ok {
		return usagef("invalid value %s for flag --%s", value, name) // a --json=maybe, said with --
	}
	return usagef("%v", err)
}

// parseOperands parses args into fs, flags before or after the operands
// (`diff a.json b.json --json`), and returns the operands; everything after
// -- is an operand.
func parseOperands(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	var operands []string
	for {
		if err := parseFlags(fs, args, stdout); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return operands, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(operands, rest...), nil
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}

func usagef(format string, args ...any) error { return fmt.Errorf(format, args...) }

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
