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
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// newFlagSet returns a flag set with the configuration flags of the parts
// the command name reads, which write into given; only those args can name
// are registered (flagsNamed).
func newFlagSet(name string, given map[string]string, args []string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	settings := app.SettingsOf(readsOf(name))
	addConfigFlags(fs, settings, given, flagsNamed(args, settings))
	return fs
}

func readsOf(name string) []string {
	if sub, ok := findSubcommand(name); ok {
		return sub.reads
	}
	return app.AllParts
}

// flagsNamed are the settings' flags that args can name (each allocates
// at every start), or nil (all) when one names none: -h, a command's own
// flag or a typo, whose help or error lists every flag.
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

// addConfigFlags registers the settings' flags (those in only, unless nil);
// a boolean one needs no value. -h prints configHelp, not their usage.
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

// parseFlags parses args into fs; an unknown flag names the one it looks
// like.
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

// parseOperands parses flags before and after the operands (`diff a b
// --json`) and returns the operands.
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

// usageExit prints err and returns 64, or the help for -h, and 0.
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
	fmt.Fprintf(stderr, "gpu-preflight: %s\n(run gpu-preflight -h for usage)\n", termsafe.Lines(err.Error()))
	return exitUsage
}
