package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
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

func TestTraceOfNoRecordExitsWithACodeOfItsOwn(t *testing.T) {
	for _, input := range []string{"", "plain text\n", `{"level":"info","message":"summary"}` + "\n"} {
		code, out, _ := runTrace(t, input, "-")
		if code != exitTraceNoRecords || !strings.Contains(out, "No run was found") {
			t.Errorf("%q: exit %d, want %d:\n%s", input, code, exitTraceNoRecords, out)
		}
	}
}

// hostileRecord is a record of run i with value put at path (host
// hostname, or GPU names) in place of the real one.
func hostileRecord(t *testing.T, i int, set func(rec map[string]any)) []byte {
	t.Helper()
	r := tracetest.Record(tracetest.Run{RunID: tracetest.RunID(i), At: traceT0.Add(time.Duration(i) * time.Minute),
		Node: fmt.Sprintf("node-%d", i), Job: "hostile", Rank: i, Driver: "535.161.08", DriverCUDA: "12.2",
		Digest: "sha256:" + strings.Repeat("a", 64), Exit: tracetest.Exit(0)})
	b, _ := r.AppendJSON(nil)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	set(m)
	out, _ := json.Marshal(m)
	return append(out, '\n')
}

func gzipFile(t *testing.T, path string, write func(w io.Writer)) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	write(z)
	z.Close()
	f.Close()
}

// TestTraceStaysUnder30MiBOnHostileInputs runs the built binary on the
// inputs that once took it far past the promise, each under maxPeakRSS.
func TestTraceStaysUnder30MiBOnHostileInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads hundreds of MiB")
	}
	dir := t.TempDir()
	big := strings.Repeat("h", 4<<20)
	cases := map[string]func(w io.Writer){
		"40 records with 4 MiB host names": func(w io.Writer) {
			for i := range 40 {
				w.Write(hostileRecord(t, i, func(m map[string]any) { m["host"].(map[string]any)["hostname"] = big + fmt.Sprint(i) }))
			}
		},
		"20 ranks with 4 MiB GPU names": func(w io.Writer) {
			for i := range 20 {
				w.Write(hostileRecord(t, i, func(m map[string]any) {
					for _, g := range m["host"].(map[string]any)["gpus"].([]any) {
						g.(map[string]any)["name"] = big + fmt.Sprint(i)
					}
				}))
			}
		},
		"ten records near 8 MiB": func(w io.Writer) {
			for i := range 10 {
				w.Write(hostileRecord(t, i, func(m map[string]any) {
					env := m["env"].(map[string]any)
					for j := range 2000 {
						env[fmt.Sprintf("NCCL_PAD_%04d", j)] = strings.Repeat("v", 4000)
					}
				}))
			}
		},
		"a CRI line of 256 MiB in parts": func(w io.Writer) {
			part := "2026-11-24T08:00:00.000000000Z stderr P " + `{"schemaVersion":"1","runId":"` + strings.Repeat("x", 16<<10) + "\n"
			for range (256 << 20) / len(part) {
				io.WriteString(w, part)
			}
			io.WriteString(w, "2026-11-24T08:00:00.000000000Z stderr F \"}\n")
		},
		"20 000 runs": func(w io.Writer) {
			line := hostileRecord(t, 0, func(map[string]any) {})
			id := []byte(tracetest.RunID(0))
			for i := range 20000 {
				w.Write(bytes.Replace(line, id, []byte(fmt.Sprintf("%032x", i)), 1))
			}
		},
	}
	for name, write := range cases {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".gz")
			gzipFile(t, path, write)
			m := runMeasured(t, nil, "trace", "--json", path)
			wantBounded(t, m, exitTraceNoDrift, exitTraceDrift, exitTraceNoRecords)
			os.Remove(path)
		})
	}
	// As many sources as are read at once, each a line in parts.
	var paths []string
	for i := range trace.MaxMerged {
		p := filepath.Join(dir, fmt.Sprintf("p%02d.log.gz", i))
		gzipFile(t, p, func(w io.Writer) {
			part := "2026-11-24T08:00:00.000000000Z stderr P " + `{"schemaVersion":"1",` + strings.Repeat(" ", 16<<10) + "\n"
			for range 200 {
				io.WriteString(w, part)
			}
		})
		paths = append(paths, p)
	}
	t.Run("sources_read_at_once_of_lines_in_parts", func(t *testing.T) {
		m := runMeasured(t, nil, append([]string{"trace", "--json"}, paths...)...)
		wantBounded(t, m, exitTraceNoRecords)
	})
}
