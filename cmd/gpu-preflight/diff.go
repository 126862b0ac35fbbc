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
	"syscall"
	"time"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonbound"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/diff"
	"github.com/gpu-preflight/gpu-preflight/report/store"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
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
	operands, err := parseOperands(fs, args, stdout)
	if err != nil {
		return usageExit(stderr, err)
	}

	var old, new namedRecord
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
		var b []byte
		if b, err = json.Marshal(diffJSON{Old: old.ref(), New: new.ref(), Matters: matters, Changes: changes}); err == nil {
			_, err = stdout.Write(termsafe.JSON(append(b, '\n')))
		}
	} else {
		// The values come from records, so from images and environments:
		// escaped for the terminal (termsafe), as JSON escapes them.
		termsafe.All(&changes)
		_, err = fmt.Fprintf(stdout, "old: %s\nnew: %s\n", termsafe.String(old.describe()), termsafe.String(new.describe()))
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
	b, err := readRecordFile(path)
	if err != nil {
		return namedRecord{}, usagef("diff: cannot read %s: %v", path, err)
	}
	var r report.Record
	if err := jsonbound.Unmarshal(b, &r, recordLimits); err != nil {
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

// maxRecordFile bounds a record file diff reads. A record gpu-preflight
// writes is at most about 2.5 MiB (512 variables of 4 KiB, findings cut at
// 4 KiB each) and normally a few KiB.
const maxRecordFile = 4 << 20

// recordLimits bound a record's shape as maxRecordFile its size: 4 MiB of
// one-letter environment members would decode into a map of 44 MiB. A
// record holds some hundreds of values.
var recordLimits = jsonbound.Limits{Bytes: maxRecordFile, Depth: 32, Values: 200_000}

// readRecordFile reads a record file: a regular file of at most
// maxRecordFile bytes. It never blocks on a FIFO and never reads a device
// (a link to /dev/zero) or a file of any size to the end.
func readRecordFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRecordFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxRecordFile {
		return nil, fmt.Errorf("larger than %d bytes, which no provenance record is", maxRecordFile)
	}
	return b, nil
}

// newestTwo returns the two records in dir with the latest startedAt, older
// first. Files that are not records (a stray JSON file, another schema
// version, a FIFO) are skipped with a warning, so one odd file does not
// block the comparison; fewer than two records is a usage error.
//
// It reads as few records as it can, and holds at most two at a time:
// gpu-preflight names each record after its startedAt (store.FileName),
// and such names sort as their times do, so only the newest
// diffCandidates names are kept while the directory is listed, read newest
// first until the next name is older than the second record found. Names
// of another form are all read. Only when those candidates hold fewer than
// two records is every name read. A directory of 100 000 records so costs
// a listing, not 100 000 records.
func newestTwo(dir string, stderr io.Writer) (old, new namedRecord, err error) {
	st, err := os.Stat(dir)
	if err != nil {
		return old, new, usagef("diff: cannot read %s: %v", dir, err)
	}
	if !st.IsDir() {
		return old, new, usagef("diff: %s is not a directory; give two records (diff OLD.json NEW.json) or a directory of records (diff DIR)", dir)
	}
	var timed, other []string // timed: the newest diffCandidates, newest first
	more := false             // timed names were left out
	err = eachRecordName(dir, func(name string) {
		if !timedName(name) {
			other = append(other, name)
			return
		}
		i, _ := slices.BinarySearchFunc(timed, name, func(a, b string) int { return strings.Compare(b, a) })
		if i >= diffCandidates {
			more = true
			return
		}
		timed = slices.Insert(timed, i, name)
		if len(timed) > diffCandidates {
			timed, more = timed[:diffCandidates], true
		}
	})
	if err != nil {
		return old, new, usagef("diff: cannot read directory %s: %v", dir, err)
	}
	var best []namedRecord // the newest two so far, newest first
	consider := func(name string) {
		r, err := readRecord(filepath.Join(dir, name))
		if err != nil {
			fmt.Fprintf(stderr, "gpu-preflight: skipping %v\n", strings.TrimPrefix(err.Error(), "diff: "))
			return
		}
		best = append(best, r)
		slices.SortStableFunc(best, func(a, b namedRecord) int {
			if c := b.started.Compare(a.started); c != 0 {
				return c
			}
			return strings.Compare(b.path, a.path)
		})
		best = best[:min(len(best), 2)]
	}
	for _, name := range timed {
		if at, _ := time.Parse(store.FileTimeLayout, name[:len(store.FileTimeLayout)]); len(best) == 2 && at.Before(best[1].started) {
			break
		}
		consider(name)
	}
	for _, name := range other {
		consider(name)
	}
	if len(best) < 2 && more {
		// The newest names held too few records: read them all.
		best = best[:0]
		if err := eachRecordName(dir, func(name string) {
			if timedName(name) {
				consider(name)
			}
		}); err != nil {
			return old, new, usagef("diff: cannot read directory %s: %v", dir, err)
		}
		for _, name := range other {
			consider(name)
		}
	}
	if len(best) < 2 {
		return old, new, usagef("diff: %s holds %d provenance record(s); need two to compare", dir, len(best))
	}
	return best[1], best[0], nil
}

// diffCandidates is how many of the newest record names newestTwo keeps
// while it lists a directory.
const diffCandidates = 64

// timedName reports whether name starts with a time in
// store.FileTimeLayout, as the names gpu-preflight writes do.
func timedName(name string) bool {
	if len(name) <= len(store.FileTimeLayout) {
		return false
	}
	_, err := time.Parse(store.FileTimeLayout, name[:len(store.FileTimeLayout)])
	return err == nil
}

// eachRecordName calls f with every *.json name in dir that is not hidden
// (those are the writer's temporary files), reading the directory in
// batches so that a large one is never held whole.
func eachRecordName(dir string, f func(name string)) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	for {
		batch, err := d.ReadDir(1024)
		for _, e := range batch {
			if n := e.Name(); !strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".json") && !e.IsDir() {
				f(n)
			}
		}
		if err == io.EOF || len(batch) == 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
