package store

import (
	"errors"
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
)

// MaxFileBytes bounds a record file: a record is at most about 2.5 MiB
// (512 variables of 4 KiB, findings cut at 4 KiB each).
const MaxFileBytes = 4 << 20

// limits bound a record's shape as MaxFileBytes its size: 4 MiB of
// one-letter members would decode into a map of 44 MiB.
var limits = jsonbound.Limits{Bytes: MaxFileBytes, Depth: 32, Values: 200_000}

// Stored is a record read back, and where from.
type Stored struct {
	Path    string
	Record  report.Record
	Started time.Time
}

// ReadFile reads the record at path. Every error names the file.
func ReadFile(path string) (Stored, error) {
	b, err := OpenBounded(path)
	if err != nil {
		return Stored{}, fmt.Errorf("cannot read %s: %w", path, err)
	}
	r, started, err := Decode(b)
	if err != nil {
		return Stored{}, fmt.Errorf("%s %w", path, err)
	}
	return Stored{Path: path, Record: r, Started: started}, nil
}

// ErrOtherSchema wraps the error for a record of another schemaVersion.
var ErrOtherSchema = errors.New("use the gpu-preflight that wrote it")

// Decode decodes one record within bounds and checks that this
// gpu-preflight reads it. Its errors read after the record's name.
func Decode(b []byte) (report.Record, time.Time, error) {
	var r report.Record
	if err := jsonbound.Unmarshal(b, &r, limits); err != nil {
		return r, time.Time{}, fmt.Errorf("is not a provenance record: %w", err)
	}
	if r.SchemaVersion == "" || r.RunID == "" {
		return r, time.Time{}, errors.New("is not a provenance record: it has no schemaVersion or runId")
	}
	if r.SchemaVersion != report.SchemaVersion {
		return r, time.Time{}, fmt.Errorf("has schemaVersion %.40q; this gpu-preflight reads version %q (%w)",
			r.SchemaVersion, report.SchemaVersion, ErrOtherSchema)
	}
	started, err := time.Parse(time.RFC3339Nano, r.StartedAt)
	if err != nil {
		return r, time.Time{}, fmt.Errorf("is not a provenance record: startedAt %.40q is not an RFC 3339 time", r.StartedAt)
	}
	return r, started, nil
}

// OpenBounded reads a regular file of at most MaxFileBytes. It never
// blocks on a FIFO and never reads a device (a link to /dev/zero).
func OpenBounded(path string) ([]byte, error) {
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
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("larger than %d bytes, which no provenance record is", MaxFileBytes)
	}
	return b, nil
}

// EachName calls f with every record name in dir (*.json, not hidden),
// reading the directory in batches.
func EachName(dir string, f func(name string)) error {
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

// newestCandidates is how many of the newest names NewestTwo keeps while
// it lists a directory.
const newestCandidates = 64

// NewestTwo returns the two records in dir with the latest startedAt, the
// older first; a file that is no record goes to skip. Write's names sort
// by time, so only the newest are kept while listing and read until one
// is older than the second found; names of another form are all read.
func NewestTwo(dir string, skip func(error)) (old, new Stored, err error) {
	var timed, other []string // timed: the newest newestCandidates, newest first
	more := false
	err = EachName(dir, func(name string) {
		if !timedName(name) {
			other = append(other, name)
			return
		}
		i, _ := slices.BinarySearchFunc(timed, name, func(a, b string) int { return strings.Compare(b, a) })
		if i >= newestCandidates {
			more = true
			return
		}
		timed = slices.Insert(timed, i, name)
		if len(timed) > newestCandidates {
			timed, more = timed[:newestCandidates], true
		}
	})
	if err != nil {
		return old, new, fmt.Errorf("cannot read directory %s: %w", dir, err)
	}
	var best []Stored // the newest two so far, newest first
	consider := func(name string) {
		r, err := ReadFile(filepath.Join(dir, name))
		if err != nil {
			skip(err)
			return
		}
		best = append(best, r)
		slices.SortStableFunc(best, func(a, b Stored) int {
			if c := b.Started.Compare(a.Started); c != 0 {
				return c
			}
			return strings.Compare(b.Path, a.Path)
		})
		best = best[:min(len(best), 2)]
	}
	for _, name := range timed {
		if at, _ := time.Parse(FileTimeLayout, name[:len(FileTimeLayout)]); len(best) == 2 && at.Before(best[1].Started) {
			break
		}
		consider(name)
	}
	for _, name := range other {
		consider(name)
	}
	if len(best) < 2 && more {
		best = best[:0]
		if err := EachName(dir, func(name string) {
			if timedName(name) {
				consider(name)
			}
		}); err != nil {
			return old, new, fmt.Errorf("cannot read directory %s: %w", dir, err)
		}
		for _, name := range other {
			consider(name)
		}
	}
	if len(best) < 2 {
		return old, new, fmt.Errorf("%s holds %d provenance record(s); need two to compare", dir, len(best))
	}
	return best[1], best[0], nil
}

// timedName reports whether name starts with a time in FileTimeLayout.
func timedName(name string) bool {
	if len(name) <= len(FileTimeLayout) {
		return false
	}
	_, err := time.Parse(FileTimeLayout, name[:len(FileTimeLayout)])
	return err == nil
}
