package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report/store"
	"github.com/gpu-preflight/gpu-preflight/report/trace"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
	"github.com/gpu-preflight/gpu-preflight/test/tracetest"
)

var traceT0 = time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)

// traceJob is one 4-rank Slurm job; rank 2 runs on another driver when
// drift is set.
func traceJob(id string, drift bool) []tracetest.Run {
	var runs []tracetest.Run
	for rank := range 4 {
		drv := "535.161.08"
		if drift && rank == 2 {
			drv = "550.54.15"
		}
		runs = append(runs, tracetest.Run{RunID: tracetest.RunID(len(id)*100 + rank), At: traceT0.Add(time.Duration(rank) * time.Second),
			Node: fmt.Sprintf("node-%d", rank), Job: id, Slurm: true, Rank: rank, Driver: drv, DriverCUDA: "12.2",
			Digest: "sha256:" + strings.Repeat("a", 64)})
	}
	return runs
}

func writeLedger(t *testing.T, path string, runs []tracetest.Run, gz bool) {
	t.Helper()
	var b bytes.Buffer
	for _, r := range runs {
		line, err := json.Marshal(tracetest.Record(r))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	data := b.Bytes()
	if gz {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(data)
		w.Close()
		data = z.Bytes()
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func runTrace(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cmdTraceAt(args, &out, &errOut, strings.NewReader(stdin), traceT0.Add(48*time.Hour))
	return code, out.String(), errOut.String()
}

func TestTraceExitsOneOnDriftThatMatters(t *testing.T) {
	dir := t.TempDir()
	ledger := filepath.Join(dir, "runs.jsonl.gz")
	writeLedger(t, ledger, traceJob("77", true), true)
	code, out, stderr := runTrace(t, "", ledger)
	if code != exitTraceDrift {
		t.Fatalf("exit %d, want %d:\n%s%s", code, exitTraceDrift, out, stderr)
	}
	if !strings.Contains(out, "550.54.15: 1 rank (2) on node-2") {
		t.Errorf("output does not name the drifting rank:\n%s", out)
	}
	writeLedger(t, ledger, traceJob("77", false), false)
	if code, out, _ := runTrace(t, "", ledger); code != exitTraceNoDrift {
		t.Errorf("no drift: exit %d\n%s", code, out)
	}
}

func TestTraceReadsADirectoryALedgerAndStandardInputInOnePass(t *testing.T) {
	dir := t.TempDir()
	recs := filepath.Join(dir, "records")
	if err := os.Mkdir(recs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, r := range traceJob("12", true)[:2] {
		if _, err := store.Write(recs, tracetest.Record(r)); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(recs, "stray.json"), []byte(`{"not":"a record"}`), 0o644)
	ledger := filepath.Join(dir, "runs.jsonl")
	writeLedger(t, ledger, traceJob("12", true)[2:3], false)
	var stdin bytes.Buffer
	line, _ := json.Marshal(tracetest.Record(traceJob("12", true)[3]))
	fmt.Fprintf(&stdin, "not json\n%s\n", line)

	code, out, stderr := runTrace(t, stdin.String(), "--json", recs, ledger, "-")
	if err := schematest.CheckTrace([]byte(out)); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var res trace.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if code != exitTraceDrift || res.Totals.Records != 4 || res.Totals.Skipped != 2 || len(res.Sources) != 3 {
		t.Fatalf("exit %d, totals %+v, %d sources\nstderr: %s", code, res.Totals, len(res.Sources), stderr)
	}
	if len(res.Jobs) != 1 || res.Jobs[0].Ranks != 4 {
		t.Errorf("jobs %+v", res.Jobs)
	}
}

func TestTraceUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"/no/such/ledger"},
		{"--since", "last tuesday", "-"},
		{"--bogus", "-"},
	} {
		if code, _, stderr := runTrace(t, "", args...); code != exitUsage || stderr == "" {
			t.Errorf("trace %q: exit %d, want %d with a message", args, code, exitUsage)
		}
	}
}

func TestTraceTimeAcceptsADateATimeAndADurationAgo(t *testing.T) {
	now := traceT0
	for in, want := range map[string]time.Time{
		"2026-11-20":           time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC),
		"2026-11-20T10:00:00Z": time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC),
		"36h":                  now.Add(-36 * time.Hour),
		"7d":                   now.Add(-7 * 24 * time.Hour),
	} {
		got, err := traceTime("--since", in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("%s: %v, %v; want %v", in, got, err, want)
		}
	}
}
