package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
	"github.com/gpu-preflight/gpu-preflight/report/trace"
)

// Exit codes of `gpu-preflight trace` (README "Exit codes").
const (
	exitTraceNoDrift   = 0
	exitTraceDrift     = 1  // a job's ranks differ in a fact that matters
	exitTraceNoRecords = 65 // sysexits' EX_DATAERR: no run in the input
)

// traceMemoryLimit is trace's soft memory limit: what it keeps is bounded,
// and each record it decodes is garbage once counted, so the collector
// returns it before the heap doubles. GOMEMLIMIT, when set, wins.
const traceMemoryLimit = 24 << 20

// cmdTrace is `gpu-preflight trace [--json] [--job ID] [--image REF]
// [--since T] [--until T] SOURCE...`.
func cmdTrace(args, _ []string, stdout, stderr io.Writer) int {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(traceMemoryLimit)
	}
	return cmdTraceAt(args, stdout, stderr, os.Stdin, time.Now())
}

func cmdTraceAt(args []string, stdout, stderr io.Writer, stdin io.Reader, now time.Time) int {
	fs := flag.NewFlagSet("trace", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	asJSON := fs.Bool("json", false, "print the answers as JSON (docs/schema/trace.v2.schema.json)")
	job := fs.String("job", "", "only the records of this job id or job name")
	image := fs.String("image", "", "only the records of this image: digest, reference or repository")
	since := fs.String("since", "", "only records started at or after T: RFC 3339, a date (2026-11-24), or a duration ago (36h, 7d)")
	until := fs.String("until", "", "only records started before T (as --since)")
	operands, err := parseOperands(fs, args, stdout)
	if err != nil {
		return usageExit(stderr, err)
	}
	if len(operands) == 0 {
		return usageExit(stderr, usagef("trace wants at least one source: a records directory, a ledger, a node's log directory, an export of a log pipeline, or - for standard input"))
	}
	o := trace.Options{Job: *job, Image: *image, Now: now}
	if o.Since, err = traceTime("--since", *since, now); err != nil {
		return usageExit(stderr, err)
	}
	if o.Until, err = traceTime("--until", *until, now); err != nil {
		return usageExit(stderr, err)
	}
	sources, err := trace.Sources(operands, stdin)
	if err != nil {
		return usageExit(stderr, usagef("trace: %v", err))
	}
	var mu sync.Mutex
	warn := func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, "gpu-preflight: trace: %s\n", termsafe.String(msg))
	}
	o.Problem = func(p trace.Problem) { warn(p.String()) }
	tr := trace.New(o)
	for _, err := range tr.Read(sources) {
		if err != nil {
			warn(err.Error())
		}
	}
	res := tr.Summary(trace.MaxShown)
	if *asJSON {
		err = tr.WriteJSON(stdout)
	} else {
		err = trace.Render(stdout, res)
	}
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "gpu-preflight: trace: writing the answers: %v\n", err)
		return exitTraceDrift
	case res.Totals.Records == 0:
		return exitTraceNoRecords
	case res.DriftMatters:
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
