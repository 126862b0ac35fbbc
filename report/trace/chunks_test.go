package trace_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report/trace"
	"github.com/gpu-preflight/gpu-preflight/test/tracetest"
)

// readAnswer is everything a read of data says, problems included, in
// JSON: with chunk bytes on two workers, or on one reader when chunk is 0.
func readAnswer(t testing.TB, data []byte, chunk int) []byte {
	t.Helper()
	workers := 2
	if chunk == 0 {
		workers = 1
	}
	on, ow := trace.SetChunkBytes(chunk, workers)
	defer trace.SetChunkBytes(on, ow)
	var problems []trace.Problem
	tr := trace.New(trace.Options{Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		Problem: func(p trace.Problem) { problems = append(problems, p) }})
	errs := tr.Read([]trace.Source{trace.Stream("s", bytes.NewReader(data))})
	var b bytes.Buffer
	if err := tr.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(struct {
		Problems []trace.Problem
		Err      string
	}{problems, errString(errs[0])})
	return append(b.Bytes(), out...)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// chunkInputs are streams whose lines are not each a value of their own:
// a pretty-printed document, CRI lines in parts, a torn line before a
// whole one, scalars after a record, a line longer than a chunk, and each
// generated form of the small fleet, plain and gzip'd.
func chunkInputs(fleet []tracetest.Run, long int, copies int) map[string][]byte {
	es := tracetest.Entries(fleet, long)
	rec, _ := json.Marshal(recordOf(fleet[0]))
	pretty, _ := json.MarshalIndent(recordOf(fleet[1]), "", "  ")
	in := map[string][]byte{
		"ledger": tracetest.Ledger(fleet),
		"pretty": append(append(append(rec, '\n'), pretty...), '\n'),
		"torn":   []byte("{\"schemaVersion\":\"1\",\"run\n" + string(rec) + "\n7\n\"x\"\n"),
		"parts":  []byte("2026-11-01T00:00:00Z stderr P " + string(rec[:40]) + "\n2026-11-01T00:00:00Z stderr F " + string(rec[40:]) + "\n"),
		"long":   []byte(string(rec) + "\n" + strings.Repeat("x", 9000) + "\n" + string(rec) + "\n"),
	}
	// A scalar's line says nothing of its own: the record before it, in
	// the chunk before, decides whether it was skipped.
	var scalars bytes.Buffer
	for i := range copies {
		scalars.WriteString(string(rec) + strings.Repeat(" ", i*37) + "\n\"finished" + strings.Repeat(" ", 1000) + "\"\n")
	}
	in["scalars"] = scalars.Bytes()
	for _, f := range tracetest.Forms {
		in[f.Name] = f.Write(es)
		in[f.Name+"-gz"] = gz(f.Write(es))
	}
	for name, write := range tracetest.BenchForms {
		in["bench-"+name] = write(fleet)
	}
	return in
}

// TestChunksReadAsOneReader: a stream's lines parsed in chunks on workers
// give the answers, problems, counts and forms one reader gives, whatever
// the chunks cut.
func TestChunksReadAsOneReader(t *testing.T) {
	for name, data := range chunkInputs(tracetest.SmallFleet(), tracetest.LongRun, 40) {
		want := readAnswer(t, data, 0)
		for _, chunk := range []int{64, 301, 4096, 1 << 20} {
			if got := readAnswer(t, data, chunk); !bytes.Equal(got, want) {
				t.Errorf("%s in chunks of %d:\ngot  %.2000s\nwant %.2000s", name, chunk, got, want)
			}
		}
	}
}

// FuzzChunks holds a read in chunks to one reader's read of the same
// input. Seeds: the inputs of TestChunksReadAsOneReader for two runs and
// FuzzRead's files (what conmon and journalctl wrote).
func FuzzChunks(f *testing.F) {
	fleet := tracetest.SmallFleet()
	for _, data := range chunkInputs([]tracetest.Run{fleet[0], fleet[19]}, -1, 3) {
		f.Add(uint16(200), data)
	}
	files, _ := filepath.Glob("testdata/fuzz/FuzzRead/*")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		lit, _ := strings.CutPrefix(strings.TrimSpace(string(b)), "go test fuzz v1\n[]byte(")
		if data, err := strconv.Unquote(strings.TrimSuffix(lit, ")")); err == nil && len(data) < 8<<10 {
			f.Add(uint16(512), []byte(data))
		}
	}
	f.Fuzz(func(t *testing.T, chunk uint16, data []byte) {
		c := 16 + int(chunk)%8192
		if got, want := readAnswer(t, data, c), readAnswer(t, data, 0); !bytes.Equal(got, want) {
			t.Fatalf("in chunks of %d:\ngot  %s\nwant %s", c, got, want)
		}
	})
}
