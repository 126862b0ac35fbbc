package trace_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/trace"
	"github.com/gpu-preflight/gpu-preflight/test/tracetest"
)

func recordOf(r tracetest.Run) report.Record { return tracetest.Record(r) }

// FuzzRead: no input makes Read panic or hold more than the records it
// counted, and the result renders within the terminal's width. Seeds: two
// supervised runs in every generated form; testdata/fuzz/FuzzRead holds
// what conmon and journalctl wrote, and the exports.
func FuzzRead(f *testing.F) {
	rec, _ := json.Marshal(recordOf(digestChange()[0]))
	f.Add(append(rec, '\n'))
	f.Add(gz(append(rec, '\n')))
	fleet := tracetest.SmallFleet()
	es := tracetest.Entries([]tracetest.Run{fleet[0], fleet[19]}, -1)
	for _, form := range tracetest.Forms {
		f.Add(form.Write(es))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := trace.New(trace.Options{Problem: func(trace.Problem) {}})
		tr.Read([]trace.Source{trace.Stream("fuzz", bytes.NewReader(data))})
		res := tr.Result()
		if res.Totals.Records > int64(bytes.Count(data, []byte("schemaVersion"))) && !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			t.Fatalf("%d records from %d mentions of schemaVersion", res.Totals.Records, bytes.Count(data, []byte("schemaVersion")))
		}
		var b bytes.Buffer
		if err := trace.Render(&b, res); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if len([]rune(l)) > trace.Width {
				t.Fatalf("a line of %d columns: %q", len([]rune(l)), l)
			}
		}
	})
}

// TestFuzzSeedsHoldRecords: each seed of FuzzRead is read as the records
// it holds, so the fuzzer starts from inputs trace understands.
func TestFuzzSeedsHoldRecords(t *testing.T) {
	files, _ := filepath.Glob("testdata/fuzz/FuzzRead/*")
	if len(files) < 6 {
		t.Fatalf("%d seeds", len(files))
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lit, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "go test fuzz v1\n[]byte(")
		data, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
		if !ok || err != nil {
			t.Fatalf("%s: not a corpus file: %v", p, err)
		}
		tr := trace.New(trace.Options{})
		for _, err := range tr.Read([]trace.Source{trace.Stream(p, strings.NewReader(data))}) {
			if err != nil {
				t.Errorf("%s: %v", p, err)
			}
		}
		if res := tr.Result(); res.Totals.Records == 0 || res.Totals.Malformed > 0 {
			t.Errorf("%s: totals %+v", p, res.Totals)
		}
	}
}
