package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gpu-preflight/gpu-preflight/report/diff"
	"github.com/gpu-preflight/gpu-preflight/report/store"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// Exit codes of `gpu-preflight diff`, as diff(1)'s.
const (
	exitDiffSame    = 0
	exitDiffChanged = 1
)

// cmdDiff is `gpu-preflight diff [--json] OLD.json NEW.json | DIR`.
func cmdDiff(args, _ []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	asJSON := fs.Bool("json", false, "print the changes as JSON")
	operands, err := parseOperands(fs, args, stdout)
	if err != nil {
		return usageExit(stderr, err)
	}
	var old, new store.Stored
	switch len(operands) {
	case 1:
		old, new, err = newestTwo(operands[0], stderr)
	case 2:
		if old, err = store.ReadFile(operands[0]); err == nil {
			new, err = store.ReadFile(operands[1])
		}
	default:
		err = fmt.Errorf("diff wants two records (diff OLD.json NEW.json) or a directory of records (diff DIR), got %d arguments", len(operands))
	}
	if err != nil {
		return usageExit(stderr, usagef("diff: %v", err))
	}
	changes := diff.Diff(old.Record, new.Record)
	if changes == nil {
		changes = []diff.Change{}
	}
	matters := diff.AnyMatters(changes)
	if *asJSON {
		var b []byte
		if b, err = json.Marshal(diffJSON{Old: refOf(old), New: refOf(new), Matters: matters, Changes: changes}); err == nil {
			_, err = stdout.Write(termsafe.JSON(append(b, '\n')))
		}
	} else {
		termsafe.All(&changes)
		_, err = fmt.Fprintf(stdout, "old: %s\nnew: %s\n", termsafe.String(describeStored(old)), termsafe.String(describeStored(new)))
		if err == nil {
			err = diff.Render(stdout, changes)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "gpu-preflight: diff: writing the changes: %v\n", err)
	}
	if matters || err != nil {
		return exitDiffChanged
	}
	return exitDiffSame
}

func newestTwo(dir string, stderr io.Writer) (old, new store.Stored, err error) {
	st, err := os.Stat(dir)
	if err != nil {
		return old, new, fmt.Errorf("cannot read %s: %w", dir, err)
	}
	if !st.IsDir() {
		return old, new, fmt.Errorf("%s is not a directory; give two records (diff OLD.json NEW.json) or a directory of records (diff DIR)", dir)
	}
	return store.NewestTwo(dir, func(err error) { fmt.Fprintf(stderr, "gpu-preflight: skipping %s\n", termsafe.String(err.Error())) })
}

// diffJSON is the --json output.
type diffJSON struct {
	Old     recordRef     `json:"old"`
	New     recordRef     `json:"new"`
	Matters bool          `json:"matters"`
	Changes []diff.Change `json:"changes"`
}

type recordRef struct {
	Path      string `json:"path"`
	RunID     string `json:"runId"`
	StartedAt string `json:"startedAt"`
}

func refOf(s store.Stored) recordRef {
	return recordRef{Path: s.Path, RunID: s.Record.RunID, StartedAt: s.Record.StartedAt}
}

func describeStored(s store.Stored) string {
	return fmt.Sprintf("%s (run %s, started %s)", s.Path, s.Record.RunID, s.Record.StartedAt)
}
