package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/diff"
)

// Exit codes of `gpu-preflight diff`, like diff(1): 0 when nothing that
// matters changed, 1 when something did; usage errors are 64 as elsewhere.
const (
	exitDiffSame    = 0
	exitDiffChanged = 1
)

// cmdDiff is `gpu-preflight diff [--json] OLD.json NEW.json` and
// `gpu-preflight diff [--json] DIR`, which compares the two newest records
// in DIR by their startedAt.
func cmdDiff(args, _ []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	asJSON := fs.Bool("json", false, "print the changes as JSON")
	// Flags may come before or after the operands: `diff a.json b.json --json`.
	var operands []string
	for {
		if err := parseFlags(fs, args, stdout); err != nil {
			return usageExit(stderr, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			operands = append(operands, rest...)
			break
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}

	var old, new namedRecord
	var err error
	switch len(operands) {
	case 1:
		old, new, err = newestTwo(operands[0], stderr)
	case 2:
		if old, err = readRecord(operands[0]); err == nil {
			new, err = readRecord(operands[1])
		}
	default:
		err = usagef("diff wants two records (diff OLD.json NEW.json) or a directory of records (diff DIR), got %d arguments", len(operands))
	}
	if err != nil {
		return usageExit(stderr, err)
	}

	changes := diff.Diff(old.rec, new.rec)
	if changes == nil {
		changes = []diff.Change{}
	}
	matters := diff.AnyMatters(changes)
	if *asJSON {
		err = json.NewEncoder(stdout).Encode(diffJSON{Old: old.ref(), New: new.ref(), Matters: matters, Changes: changes})
	} else {
		_, err = fmt.Fprintf(stdout, "old: %s\nnew: %s\n", old.describe(), new.describe())
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

// namedRecord is a record and the file it came from.
type namedRecord struct {
	path    string
	rec     report.Record
	started time.Time
}

func (n namedRecord) ref() recordRef {
	return recordRef{Path: n.path, RunID: n.rec.RunID, StartedAt: n.rec.StartedAt}
}

func (n namedRecord) describe() string {
	return fmt.Sprintf("%s (run %s, started %s)", n.path, n.rec.RunID, n.rec.StartedAt)
}

// readRecord reads one provenance record. A file that cannot be read or is
// not a record of this schema version is a usage error naming the file.
func readRecord(path string) (namedRecord, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return namedRecord{}, usagef("diff: cannot read %s: %v", path, err)
	}
	var r report.Record
	if err := json.Unmarshal(b, &r); err != nil {
		return namedRecord{}, usagef("diff: %s is not a provenance record: %v", path, err)
	}
	if r.SchemaVersion == "" || r.RunID == "" {
		return namedRecord{}, usagef("diff: %s is not a provenance record: it has no schemaVersion or runId", path)
	}
	if r.SchemaVersion != report.SchemaVersion {
		return namedRecord{}, usagef("diff: %s has schemaVersion %q; this gpu-preflight reads version %q (use the gpu-preflight that wrote it)",
			path, r.SchemaVersion, report.SchemaVersion)
	}
	started, err := time.Parse(time.RFC3339Nano, r.StartedAt)
	if err != nil {
		return namedRecord{}, usagef("diff: %s is not a provenance record: startedAt %q is not an RFC 3339 time", path, r.StartedAt)
	}
	return namedRecord{path: path, rec: r, started: started}, nil
}

// newestTwo reads every *.json record in dir and returns the two with the
// latest startedAt, older first. Files that are not records (a stray JSON
// file, another schema version) are skipped with a warning, so one odd file
// does not block the comparison; fewer than two records is a usage error.
func newestTwo(dir string, stderr io.Writer) (old, new namedRecord, err error) {
	st, err := os.Stat(dir)
	if err != nil {
		return old, new, usagef("diff: cannot read %s: %v", dir, err)
	}
	if !st.IsDir() {
		return old, new, usagef("diff: %s is not a directory; give two records (diff OLD.json NEW.json) or a directory of records (diff DIR)", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return old, new, usagef("diff: cannot read directory %s: %v", dir, err)
	}
	var recs []namedRecord
	for _, e := range entries {
		// Hidden names are the writer's temporary files.
		if strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".json") || e.IsDir() {
			continue
		}
		r, err := readRecord(filepath.Join(dir, e.Name()))
		if err != nil {
			fmt.Fprintf(stderr, "gpu-preflight: skipping %v\n", strings.TrimPrefix(err.Error(), "diff: "))
			continue
		}
		recs = append(recs, r)
	}
	if len(recs) < 2 {
		return old, new, usagef("diff: %s holds %d provenance record(s); need two to compare", dir, len(recs))
	}
	slices.SortStableFunc(recs, func(a, b namedRecord) int {
		if c := a.started.Compare(b.started); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	return recs[len(recs)-2], recs[len(recs)-1], nil
}
