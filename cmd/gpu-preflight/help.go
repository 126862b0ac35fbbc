package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/app"
	"github.com/gpu-preflight/gpu-preflight/internal/suggest"
)

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
		msg := fmt.Sprintf("help: no command %q", args[0])
		if m, ok := suggest.Closest(args[0], subcommandNames()); ok {
			msg += fmt.Sprintf(" (did you mean %q?)", m)
		}
		return usageExit(stderr, usagef("%s", msg))
	}
	return sub.run([]string{"-h"}, nil, nil, stdout, stderr) // what its -h prints
}

// item writes a help entry on two lines, so that help fits 80 columns.
func item(b *strings.Builder, name, what string) {
	fmt.Fprintf(b, "  %s\n        %s\n", name, what)
}

// help is what -h prints: the program's (fs nil, or the top-level set), or
// a subcommand's, with its flags and the configuration it reads.
func help(fs *flag.FlagSet) string {
	if fs == nil || fs.Name() == "gpu-preflight" {
		return programHelp()
	}
	var b strings.Builder
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

func programHelp() string {
	var b strings.Builder
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
	b.WriteString("\n" + configHelp(app.AllParts))
	return b.String()
}

func configHelp(parts []string) string {
	var b strings.Builder
	b.WriteString("Configuration (environment; the flag of the same name wins; values in any case):\n")
	for _, s := range app.SettingsOf(parts) {
		def := s.Default
		if def == "" {
			def = "(empty)"
		}
		fmt.Fprintf(&b, "  %s, --%s (default %s)\n        %s\n", s.Key, s.Flag, def, s.Meaning())
	}
	return b.String()
}
