package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report/store"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
	"github.com/gpu-preflight/gpu-preflight/report/trace"
)

// Exit codes of `gpu-preflight trace`: 0 when no job's ranks differ in a
// fact that matters (trace.Facts), 1 when one does; usage errors are 64.
const (
	exitTraceNoDrift = 0
	exitTraceDrift   = 1
)

// cmdTrace is `gpu-preflight trace [--json] [--job ID] [--image REF|DIGEST]
// [--since T] [--until T] SOURCE...`: it reads every source in one pass
// (package trace) and prints the jobs whose ranks differ, the boundaries
// where runs started failing, and the nodes.
func cmdTrace(args, _ []string, stdout, stderr io.Writer) int {
	// What trace keeps is bounded by the distinct jobs, images and nodes
	// it has seen; each record it decodes is garbage once counted. A soft
	// limit has the collector return that garbage before the heap doubles
	// (GOGC's default), so the process stays near what it keeps: the
	// promise of docs/PERFORMANCE.md. GOMEMLIMIT, when set, wins.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(traceMemoryLimit)
	}
	return cmdTraceAt(args, stdout, stderr, os.Stdin, time.Now())
}

// traceMemoryLimit is trace's soft memory limit (runtime/debug).
const traceMemoryLimit = 20 << 20

func cmdTraceAt(args []string, stdout, stderr io.Writer, stdin io.Reader, now time.Time) int {
	fs := flag.NewFlagSet("trace", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	asJSON := fs.Bool("json", false, "print the answers as JSON (docs/schema/trace.v1.schema.json)")
	job := fs.String("job", "", "only the records of this job id or job name")
	image := fs.String("image", "", "only the records of this image digest or reference")
	since := fs.String("since", "", "only records started at or after T: RFC 3339, a date (2026-11-24), or a duration ago (36h, 7d)")
	until := fs.String("until", "", "only records started before T (as --since)")
	operands, err := parseOperands(fs, args, stdout)
	if err != nil {
		return usageExit(stderr, err)
	}
	if len(operands) == 0 {
		return usageExit(stderr, usagef("trace wants at least one source: a records directory, a ledger, an export of a log pipeline, or - for standard input"))
	}
	o := trace.Options{Job: *job, Image: *image}
	if o.Since, err = traceTime("--since", *since, now); err != nil {
		return usageExit(stderr, err)
	}
	if o.Until, err = traceTime("--until", *until, now); err != nil {
		return usageExit(stderr, err)
	}
	// Every source must be there before any is read: a typo must not cost
	// an hour-long read of the others.
	for _, s := range operands {
		if s == "-" {
			continue
		}
		if _, err := os.Stat(s); err != nil {
			return usageExit(stderr, usagef("trace: cannot read %s: %v", s, err))
		}
	}
	// The sources are read at once (trace.Merge): one message at a time.
	var mu sync.Mutex
	warn := func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, "gpu-preflight: trace: %s\n", termsafe.String(msg))
	}
	o.Problem = func(p trace.Problem) { warn(p.String()) }
	tr := trace.New(o)
	sources := make([]trace.Source, len(operands))
	for i, name := range operands {
		sources[i] = traceSource(name, stdin, warn)
	}
	for _, err := range tr.Merge(sources) {
		if err != nil {
			warn(err.Error())
		}
	}
	// The answer may hold every job and history of a fleet: --json streams
	// it (WriteJSON); the human output needs the first few (Summary).
	res := tr.Summary(trace.MaxShown)
	if *asJSON {
		err = tr.WriteJSON(stdout)
	} else {
		err = trace.Render(stdout, res)
	}
	if err != nil {
		fmt.Fprintf(stderr, "gpu-preflight: trace: writing the answers: %v\n", err)
		return exitTraceDrift
	}
	if res.DriftMatters {
		return exitTraceDrift
	}
	return exitTraceNoDrift
}

// traceTime parses a --since or --until value.
func traceTime(flagName, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseFloat(days, 64); err == nil && n >= 0 {
			return now.Add(-time.Duration(n * 24 * float64(time.Hour))), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, usagef("invalid value %q for flag %s: want an RFC 3339 time (2026-11-24T08:00:00Z), a date (2026-11-24) or a duration ago (36h, 7d)", s, flagName)
}

// traceSource is one operand: - (standard input), a directory of record
// files, or a file (a ledger, an export; gzip or not; a pipe too).
func traceSource(name string, stdin io.Reader, warn func(string)) trace.Source {
	return trace.Source{Name: name, Each: func(read func(part string, r io.Reader) error) error {
		if name == "-" {
			return read("-", stdin)
		}
		st, err := os.Stat(name)
		if err != nil {
			return err
		}
		if st.IsDir() {
			return eachTraceRecordFile(name, read, warn)
		}
		// A FIFO is welcome (trace <(logcli query ...)); a device is not.
		if !st.Mode().IsRegular() && st.Mode()&os.ModeNamedPipe == 0 {
			return fmt.Errorf("%s: not a regular file or a pipe (%s)", name, st.Mode().Type())
		}
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		return read(name, f)
	}}
}

// eachTraceRecordFile reads every record file in dir (the *.json names
// gpu-preflight writes there, each one record of at most maxRecordFile
// bytes), in listing order, one at a time; a file that cannot be read is
// reported and skipped.
func eachTraceRecordFile(dir string, read func(part string, r io.Reader) error, warn func(string)) error {
	err := store.EachName(dir, func(name string) {
		path := filepath.Join(dir, name)
		b, err := store.OpenBounded(path)
		if err == nil {
			err = read(path, bytes.NewReader(b))
		} else {
			err = fmt.Errorf("%s: skipped: %w", path, err)
		}
		if err != nil {
			warn(err.Error())
		}
	})
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return nil
}
