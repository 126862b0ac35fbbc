package trace_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gpu-preflight/gpu-preflight/report/trace"
	"github.com/gpu-preflight/gpu-preflight/test/tracetest"
)

func gz(b []byte) []byte {
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(b)
	w.Close()
	return z.Bytes()
}

func readAll(t *testing.T, src []byte) (trace.Result, []trace.Problem, error) {
	t.Helper()
	var problems []trace.Problem
	tr := trace.New(trace.Options{Problem: func(p trace.Problem) { problems = append(problems, p) }})
	err := tr.Read([]trace.Source{trace.Stream("src", bytes.NewReader(src))})[0]
	return tr.Result(), problems, err
}

func TestGzipIsDetectedByItsMagic(t *testing.T) {
	plain := ledger(t, digestChange())
	res, _, err := readAll(t, gz(plain))
	if err != nil || res.Totals.Records != 5 {
		t.Fatalf("gzip ledger: %d records, %v", res.Totals.Records, err)
	}
	// Two gzip members one after the other (cat a.gz b.gz) are one stream.
	res, _, err = readAll(t, append(gz(plain), gz(plain)...))
	if err != nil || res.Totals.Records != 5 || res.Totals.Duplicates != 5 {
		t.Errorf("concatenated members: %d runs, %d delivered again, %v", res.Totals.Records, res.Totals.Duplicates, err)
	}
}

func TestTruncatedGzipKeepsWhatCameBeforeAndSaysSo(t *testing.T) {
	z := gz(ledger(t, append(rollingUpgrade(), digestChange()...)))
	res, _, err := readAll(t, z[:len(z)*2/3])
	if err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Fatalf("a truncated gzip reads without an error (%v)", err)
	}
	if res.Totals.Records == 0 || res.Totals.Records >= 37 || res.Sources[0].Error == "" {
		t.Errorf("records %d of 37 before the cut, source error %q", res.Totals.Records, res.Sources[0].Error)
	}
}

// A document broken by its own bytes (a string that runs past its line)
// before a gzip stream fails further on costs itself only: the lines after
// it are read and counted, and the failed read is reported where it
// happened, not at the line that opened the document.
func TestAValueBrokenBeforeAFailedReadCostsItselfOnly(t *testing.T) {
	plain := "[\n  {\n    \"event\": \"summ\n      \"event\": \"summ\n"
	z := gz([]byte(plain))
	z[len(z)-8] ^= 0xff // the CRC-32 trailer (RFC 1952): every byte inflates, then the read fails
	res, _, err := readAll(t, z)
	if err == nil || !strings.Contains(err.Error(), "src:4: gzip: invalid checksum") {
		t.Errorf("the failed read is reported as %v, want it after line 4", err)
	}
	if res.Totals.Skipped != 2 {
		t.Errorf("%d values skipped, want 2: the broken document and the line after it", res.Totals.Skipped)
	}
}

func TestLinesThatAreNoRecordsAreCountedAndSkipped(t *testing.T) {
	rec, _ := json.Marshal(tracetest.Record(digestChange()[0]))
	src := strings.Join([]string{
		"plain text from the training program",
		`{"level":"info","message":"summary","event":"summary"}`,
		"",
		`[1, 2, 3]`,
		`gpu-preflight.provenance: [1700000000.5, {"message":"provenance","record":` + string(rec) + `}]`,
		`{"record":{"not":"ours"},"message":"something else"}`,
		`"a JSON string"`,
	}, "\n")
	res, problems, err := readAll(t, []byte(src))
	if err != nil || res.Totals.Records != 1 || res.Totals.Skipped != 5 || len(problems) != 0 {
		t.Errorf("totals %+v, problems %v, err %v; want 1 record, 5 skipped (the blank line is not counted)", res.Totals, problems, err)
	}
}

func TestMalformedRecordIsReportedWithItsLine(t *testing.T) {
	rec, _ := json.Marshal(tracetest.Record(digestChange()[0]))
	noRunID := strings.Replace(string(rec), `"runId":"`+tracetest.RunID(1000)+`"`, `"runId":""`, 1)
	badTime := strings.Replace(string(rec), `"startedAt":"2026-11-24T08:00:00.000000000Z"`, `"startedAt":"Tuesday"`, 1)
	src := strings.Join([]string{string(rec), string(rec[:len(rec)/2]), noRunID, badTime, `{"schemaVersion":"1","runId":42}`}, "\n")
	res, problems, err := readAll(t, []byte(src))
	if err != nil || res.Totals.Records != 1 || res.Totals.Malformed != 3 || res.Totals.Truncated != 1 {
		t.Fatalf("totals %+v, err %v", res.Totals, err)
	}
	var lines []int64
	for _, p := range problems {
		lines = append(lines, p.Line)
		if p.Kind != trace.ProblemMalformed && p.Kind != trace.ProblemTruncated || !strings.HasPrefix(p.String(), fmt.Sprintf("src:%d: ", p.Line)) {
			t.Errorf("problem %v", p)
		}
	}
	if fmt.Sprint(lines) != "[2 3 4 5]" {
		t.Errorf("problems on lines %v, want 2 3 4 5", lines)
	}
}

func TestProblemsPerSourceAreBounded(t *testing.T) {
	src := strings.Repeat(`{"schemaVersion":"1",`+"\n", 1000)
	res, problems, _ := readAll(t, []byte(src))
	if res.Totals.Malformed+res.Totals.Truncated != 1000 || len(problems) != trace.MaxProblems {
		t.Errorf("%d malformed and truncated, %d problems reported; want 1000 and %d", res.Totals.Malformed+res.Totals.Truncated, len(problems), trace.MaxProblems)
	}
}

func TestInvalidUTF8IsReadAndNeverReachesTheTerminal(t *testing.T) {
	runs := rollingUpgrade()[:2]
	runs[1].Node = "gpu-node-\xff\xfe"
	src := ledger(t, runs)
	res, _, err := readAll(t, src)
	if err != nil || res.Totals.Records != 2 {
		t.Fatalf("records %d, %v", res.Totals.Records, err)
	}
	var b bytes.Buffer
	trace.Render(&b, res)
	if !utf8.Valid(b.Bytes()) {
		t.Errorf("the human output is not UTF-8:\n%q", b.String())
	}
	// Bytes that are no UTF-8 in the JSON itself (not escaped): still read.
	raw := bytes.Replace(src, []byte("gpu-node-01"), []byte("gpu-node-\xc3\x28"), 1)
	if res, _, _ := readAll(t, raw); res.Totals.Records != 2 {
		t.Errorf("raw invalid UTF-8: %d records", res.Totals.Records)
	}
}

// TestAGigabyteLineIsReadWithoutBeingHeld streams a line of 1 GiB through
// a pipe, between two records: both records count, the line (a record
// without its startedAt) is malformed, and the reader allocates a few MiB,
// not the line.
func TestAGigabyteLineIsReadWithoutBeingHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 1 GiB")
	}
	rec, _ := json.Marshal(tracetest.Record(digestChange()[0]))
	pr, pw := io.Pipe()
	go func() {
		pw.Write(append(rec, '\n'))
		pw.Write([]byte(`{"schemaVersion":"1","runId":"`))
		chunk := bytes.Repeat([]byte("a"), 1<<20)
		for range 1024 {
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
		pw.Write([]byte("\"}\n"))
		pw.Write(append(rec, '\n'))
		pw.Close()
	}()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tr := trace.New(trace.Options{})
	if err := tr.Read([]trace.Source{trace.Stream("pipe", pr)})[0]; err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	res := tr.Result()
	if res.Totals.Records != 1 || res.Totals.Duplicates != 1 || res.Totals.Malformed != 1 {
		t.Errorf("totals %+v, want 1 run (twice) and 1 malformed", res.Totals)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("reading allocated %d MiB: the line was held", alloc>>20)
	}
}

func TestAHugeValueInADocumentCostsNothingElse(t *testing.T) {
	rec, _ := json.Marshal(tracetest.Record(digestChange()[0]))
	doc := `{"took":1,"hits":{"hits":[{"_source":{"x":"` + strings.Repeat("a", 9<<20) + `"}},{"_source":` + string(rec) + `}]}}`
	res, _, err := readAll(t, []byte("{\n"+doc[1:]))
	if err != nil || res.Totals.Records != 1 {
		t.Errorf("totals %+v, err %v: want the hit after the huge one counted", res.Totals, err)
	}
}

func TestAnIndentedRecordIsOneDocument(t *testing.T) {
	b, _ := json.MarshalIndent(tracetest.Record(digestChange()[0]), "", "  ")
	res, _, err := readAll(t, b)
	if err != nil || res.Totals.Records != 1 {
		t.Errorf("indented record: totals %+v, %v", res.Totals, err)
	}
	// A truncated one is counted as such, named by its line.
	res, problems, err := readAll(t, b[:len(b)/2])
	if err != nil || res.Totals.Truncated != 1 || len(problems) != 1 || !strings.HasPrefix(problems[0].String(), "src:1: ") {
		t.Errorf("truncated indented record: totals %+v, %v, %v", res.Totals, problems, err)
	}
}
