package logs

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/store"
	"github.com/gpu-preflight/gpu-preflight/report/trace/provline"
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
	"github.com/rs/zerolog"
)

var logTime = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9}Z$`)

func jsonLines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if line[len(line)-1] != '\n' {
			t.Fatalf("line without newline: %q", line)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line is not one JSON object: %v: %q", err, line)
		}
		out = append(out, m)
	}
	return out
}

// A JSON line is one object with time (RFC 3339, UTC, nanoseconds), level
// and message beside the fields, in the order zerolog writes them: a
// pipeline reads keys, not positions.
func TestJSONLinesCarryTimeLevelMessage(t *testing.T) {
	var buf bytes.Buffer
	l, err := New(&buf, FormatJSON, "info")
	if err != nil {
		t.Fatal(err)
	}
	l.Info().Str("driver", "535.129.03").Int("gpus", 8).Msg("host facts")
	l.Debug().Msg("hidden at info")
	m := jsonLines(t, buf.Bytes())
	if len(m) != 1 {
		t.Fatalf("%d lines, want 1 (debug is below info)", len(m))
	}
	want := map[string]any{"level": "info", "message": "host facts", "driver": "535.129.03", "gpus": 8.0}
	for k, v := range want {
		if m[0][k] != v {
			t.Errorf("%s = %v, want %v: %s", k, m[0][k], v, buf.String())
		}
	}
	if len(m[0]) != len(want)+1 {
		t.Errorf("line has %d keys, want time and %d more: %s", len(m[0]), len(want), buf.String())
	}
	if s, _ := m[0]["time"].(string); !logTime.MatchString(s) {
		t.Errorf("time %q is not RFC 3339 UTC with nanoseconds", m[0]["time"])
	}
}

func TestNewLoggerRejectsBadSettings(t *testing.T) {
	tests := []struct{ format, level, wantErr string }{
		{"xml", "info", `log format "xml"`},
		{"json", "loud", `log level "loud"`},
		{"json", "INFO", ""},
		{"", "", ""},
		{FormatConsole, "trace", ""},
		{FormatAuto, "disabled", ""},
	}
	for _, tt := range tests {
		_, err := New(&bytes.Buffer{}, tt.format, tt.level)
		if tt.wantErr == "" && err != nil {
			t.Errorf("New(%q, %q): %v", tt.format, tt.level, err)
		}
		if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("New(%q, %q) error = %v, want %q", tt.format, tt.level, err, tt.wantErr)
		}
	}
}

func TestAutoFormatIsJSONWhenNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	l, _ := New(&buf, FormatAuto, "info")
	l.Info().Msg("x")
	if lines := jsonLines(t, buf.Bytes()); len(lines) != 1 || lines[0]["message"] != "x" {
		t.Errorf("auto format on a buffer wrote %q, want JSON", buf.String())
	}
	buf.Reset()
	l, _ = New(&buf, FormatConsole, "info")
	l.Warn().Str("check", "shm").Msg("small shm")
	if out := buf.String(); strings.Contains(out, "\x1b[") || !strings.Contains(out, "WRN small shm") {
		t.Errorf("console format = %q, want plain text without colour", out)
	}
}

// At debug every finding has its line; passing and skipped checks are at
// debug level, so at info only what did not pass is logged.
func TestLogFindingsOneLinePerFinding(t *testing.T) {
	var buf bytes.Buffer
	l, _ := New(&buf, FormatJSON, "info")
	Findings(l, reporttest.Findings)
	for _, m := range jsonLines(t, buf.Bytes()) {
		if m["status"] == "pass" || m["status"] == "skip" {
			t.Errorf("a %s finding is logged at info: %v", m["status"], m)
		}
	}
	buf.Reset()
	l, _ = New(&buf, FormatJSON, "debug")
	Findings(l, reporttest.Findings)
	lines := jsonLines(t, buf.Bytes())
	if len(lines) != len(reporttest.Findings) {
		t.Fatalf("%d lines for %d findings", len(lines), len(reporttest.Findings))
	}
	wantLevel := map[check.Status]string{check.Pass: "debug", check.Skip: "debug", check.Info: "info", check.Warn: "warn", check.Error: "error"}
	for i, f := range reporttest.Findings {
		m := lines[i]
		if m["check"] != f.ID || m["status"] != string(f.Status) || m["level"] != wantLevel[f.Status] {
			t.Errorf("line %d = %v, want check %s status %s level %s", i, m, f.ID, f.Status, wantLevel[f.Status])
		}
		if _, ok := m["remedy"]; !ok {
			t.Errorf("line %d has no remedy field", i)
		}
		if m["message"] == "" {
			t.Errorf("line %d has no message", i)
		}
	}
}

func TestLongFindingIsCutAndSaysSo(t *testing.T) {
	var buf bytes.Buffer
	l, _ := New(&buf, FormatJSON, "info")
	long := strings.Repeat("é", 6000) // 12000 bytes, multi-byte runes
	Findings(l, []check.Finding{{ID: "gpu-arch", Status: check.Error, Message: long, Remedy: long}})
	if buf.Len() > MaxLineBytes {
		t.Errorf("finding line is %d bytes, over %d", buf.Len(), MaxLineBytes)
	}
	m := jsonLines(t, buf.Bytes())[0]
	if m["truncated"] != true || !strings.Contains(m["message"].(string), "[truncated 12000 bytes]") {
		t.Errorf("cut line does not say so: %v", m)
	}
}

// A value bounded where it is logged (Value, Cut) keeps its line under the
// cap, escapes included, and says it was cut.
func TestValuesAreBoundedWhereTheyAreLogged(t *testing.T) {
	for _, tt := range []struct{ name, value string }{
		{"huge plain text", strings.Repeat("x", 200_000)},
		{"control characters expand sixfold", strings.Repeat("\x01", 9000)},
		{"quotes and backslashes double", strings.Repeat(`"\\`, 9000)},
		{"invalid UTF-8 expands", strings.Repeat("\xff", 9000)},
		{"multi-byte runes", strings.Repeat("é", 9000)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			l, _ := New(&buf, FormatJSON, "info")
			// Three outside values and a cut message: the most any line holds.
			l.Warn().Str("error", Value(tt.value)).Str("command", Value(tt.value)).Str("path", Value(tt.value)).Msg(Cut(tt.value, maxFieldBytes))
			if buf.Len() > MaxLineBytes {
				t.Errorf("line is %d bytes, over %d", buf.Len(), MaxLineBytes)
			}
			m := jsonLines(t, buf.Bytes())[0]
			if _, replaced := m["line"]; replaced {
				t.Fatalf("the line was replaced, not bounded: %.300s", buf.String())
			}
			for _, k := range []string{"error", "command", "path", "message"} {
				if s, _ := m[k].(string); !strings.HasSuffix(s, fmt.Sprintf("…[truncated %d bytes]", len(tt.value))) {
					t.Errorf("%s does not say it was cut: %.100q", k, s)
				}
			}
		})
	}
}

// What fits is not cut.
func TestCutKeepsWhatFits(t *testing.T) {
	for _, s := range []string{"", "plain", strings.Repeat("x", 1500), strings.Repeat("\n", 750)} {
		if got := Cut(s, 1500); got != s {
			t.Errorf("Cut(%d bytes, 1500) changed it to %.60q", len(s), got)
		}
	}
	if got := Cut(strings.Repeat("\n", 751), 1500); got == strings.Repeat("\n", 751) {
		t.Error("751 newlines take 1502 bytes escaped, yet were not cut")
	}
}

// A line a caller logged without bounding its values is replaced, not split
// by the runtime: the replacement fits, is valid JSON, keeps the level and
// says what happened.
func TestUnboundedLineIsReplacedNotSplit(t *testing.T) {
	big := strings.Repeat("x", 20000)
	tests := []struct {
		name string
		log  func(l zerolog.Logger)
	}{
		{"one huge string", func(l zerolog.Logger) { l.Info().Str("libs", big).Msg("scan") }},
		{"huge message", func(l zerolog.Logger) { l.Warn().Msg(big) }},
		{"huge object", func(l zerolog.Logger) { l.Info().RawJSON("facts", []byte(`{"a":"`+big+`"}`)).Msg("facts") }},
		{"escapes expand", func(l zerolog.Logger) { l.Info().Str("ctl", strings.Repeat("\x01", 9000)).Msg("ctl") }},
		{"many fields", func(l zerolog.Logger) {
			e := l.Error()
			for i := 0; i < 2000; i++ {
				e = e.Int("f"+strings.Repeat("k", i%5)+string(rune('a'+i%26))+string(rune('a'+i/26%26)), i)
			}
			e.Msg("many")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			l, _ := New(&buf, FormatJSON, "info")
			tt.log(l)
			if buf.Len() > MaxLineBytes {
				t.Errorf("line is %d bytes, over %d", buf.Len(), MaxLineBytes)
			}
			m := jsonLines(t, buf.Bytes())
			if len(m) != 1 {
				t.Fatalf("%d lines, want 1", len(m))
			}
			msg, _ := m[0]["message"].(string)
			if m[0]["truncated"] != true || !strings.Contains(msg, "over the 8000-byte cap") {
				t.Errorf("the replacement does not say what happened: %.300s", buf.String())
			}
			if line, _ := m[0]["line"].(string); !strings.HasPrefix(line, `{"level":`) {
				t.Errorf("the replacement does not quote the line's start: %.300s", buf.String())
			}
			for _, k := range []string{"time", "level", "message"} {
				if _, ok := m[0][k]; !ok {
					t.Errorf("the replacement lacks %s", k)
				}
			}
		})
	}
}

// TestProvenanceLineFitsJournaldsFieldThreshold: a record far over every
// pipeline's line limit (1 000 arguments, 8 GPUs, 61 frameworks) is logged
// as one line under provline.MaxLineBytes that names its file and the
// file's digest and carries what trace compares of it.
func TestProvenanceLineFitsJournaldsFieldThreshold(t *testing.T) {
	in := reporttest.Inputs()
	for i := 0; i < 60; i++ {
		in.Facts.Container.Frameworks = append(in.Facts.Container.Frameworks, in.Facts.Container.Frameworks[0])
	}
	for len(in.Facts.Host.GPUs) < 8 {
		in.Facts.Host.GPUs = append(in.Facts.Host.GPUs, in.Facts.Host.GPUs[0])
	}
	for len(in.Argv) < 1000 {
		in.Argv = append(in.Argv, strings.Repeat("--flag=value", 40))
	}
	r := report.New(in)
	var buf bytes.Buffer
	l, _ := New(&buf, FormatJSON, "info")
	if err := Record(l, r); err != nil {
		t.Fatal(err)
	}
	if bytes.Count(buf.Bytes(), []byte("\n")) != 1 || buf.Len()-1 > provline.MaxLineBytes {
		t.Fatalf("the provenance line is %d bytes, over %d, or not one line", buf.Len()-1, provline.MaxLineBytes)
	}
	var line struct {
		Message      string          `json:"message"`
		RecordBytes  int             `json:"recordBytes"`
		RecordFile   string          `json:"recordFile"`
		RecordSHA256 string          `json:"recordSha256"`
		Record       json.RawMessage `json:"record"`
	}
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	full, _ := r.AppendJSON(nil)
	file, _ := store.Marshal(r)
	name, _ := store.FileName(r)
	if line.Message != "provenance" || line.RecordBytes != len(full) || line.RecordFile != name ||
		line.RecordSHA256 != fmt.Sprintf("%x", sha256.Sum256(file)) {
		t.Errorf("message %q, recordBytes %d (want %d), recordFile %q (want %q), recordSha256 %s",
			line.Message, line.RecordBytes, len(full), line.RecordFile, name, line.RecordSHA256)
	}
	fromLine, ok1 := provline.Project(line.Record)
	fromFile, ok2 := provline.Project(file)
	if !ok1 || !ok2 || !reflect.DeepEqual(fromLine, fromFile) {
		t.Errorf("the line does not carry what trace compares of the record:\nline %+v\nfile %+v", fromLine, fromFile)
	}
}

// notKeyRune is a rune no log key of gpu-preflight's holds.
func notKeyRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
}

// FuzzLogLine: whatever values a caller logs through Value and Cut, the
// line zerolog writes is one valid JSON object, newline-ended, under the
// cap, and keeps time, level and message without being replaced. The value
// is a short piece repeated, so the fuzzer builds long lines from inputs it
// can still minimise quickly.
func FuzzLogLine(f *testing.F) {
	f.Add("driver", "x", 3000, 3)
	f.Add("message", "\x00\xff\u2028\"\"", 700, 3)
	f.Add("k", "v", 1, 3)
	f.Add("message", "\"", 1500, 3)
	f.Add("check", "https://u:p@h/ --token t ", 400, 2)
	f.Add("aAa", "", 0, 1)                    // empty message: zerolog writes no message key
	f.Add("name", "\u0301", 1500, 3)          // combining marks past termsafe.MaxMarks are escaped, 6 bytes each
	f.Add("name", "\u3164\u115f\x9b", 500, 3) // Hangul fillers and an 8-bit CSI
	f.Fuzz(func(t *testing.T, key, piece string, rep, n int) {
		// Keys are gpu-preflight's own names, never outside input: only the values are hostile.
		if n < 0 || n > 3 || rep < 0 || rep > 3000 || len(piece) > 64 || len(key) > 64 || strings.ContainsFunc(key, notKeyRune) {
			return
		}
		value := strings.Repeat(piece, rep)
		var buf bytes.Buffer
		l, _ := New(&buf, FormatJSON, "info")
		e := l.Info()
		for i := 0; i < n; i++ {
			e = e.Str(key, Value(value))
		}
		e.Msg(Cut(value, maxFieldBytes))
		out := buf.Bytes()
		if len(out) > MaxLineBytes {
			t.Fatalf("line is %d bytes", len(out))
		}
		if bytes.Count(out, []byte("\n")) != 1 || out[len(out)-1] != '\n' {
			t.Fatalf("not one newline-ended line: %q", out)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("not JSON: %v: %q", err, out)
		}
		if _, replaced := m["line"]; replaced && key != "line" {
			t.Fatalf("bounded values, yet the line was replaced: %.300q", out)
		}
		keys := []string{"time", "level", "message"}
		if value == "" {
			keys = keys[:2] // zerolog writes no message key for an empty message
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Fatalf("lost %s: %q", k, out)
			}
		}
	})
}

func TestLogAbortIsAJSONErrorLine(t *testing.T) {
	var buf bytes.Buffer
	l, _ := New(&buf, FormatJSON, "info")
	Abort(l, report.Record{Checks: []report.Check{{ID: "nvml", Status: "error", Message: "hung", Remedy: "drain the node", NodeFault: true}},
		Decision: decision.Decision{Policy: "fail", Action: decision.Abort, ExitCode: 75, NodeFault: true, Blocking: []string{"nvml"}}})
	m := jsonLines(t, buf.Bytes())
	if len(m) != 1 || m[0]["level"] != "error" || m[0]["event"] != EventAbort || m[0]["nodeFault"] != true ||
		m[0]["message"] != "gpu-preflight stopped the job on a node fault (exit 75): nvml: hung; fix: drain the node." {
		t.Errorf("abort line %v", m)
	}
	buf.Reset()
	l, _ = New(&buf, FormatConsole, "info")
	Summary(l, report.Summary{Record: report.Record{Decision: decision.Decision{Policy: "fail", Action: decision.Exec}}})
	if out := buf.String(); strings.Contains(out, "event=") || strings.Contains(out, "elapsedMs=") {
		t.Errorf("the console summary repeats its fields: %q", out)
	}
}

// The provenance log line: the record encoded and written as one line.
func BenchmarkRecord(b *testing.B) {
	r := report.New(reporttest.Inputs())
	l, _ := New(io.Discard, FormatJSON, "info")
	for i := 0; i < b.N; i++ {
		if err := Record(l, r); err != nil {
			b.Fatal(err)
		}
	}
}

// The end of a supervised run is one small line that joins the run's
// provenance line by runId; it never carries the record again.
func TestFinishedLineJoinsTheRecordByRunID(t *testing.T) {
	r := report.New(reporttest.Inputs())
	var b bytes.Buffer
	l, err := New(&b, FormatJSON, "info")
	if err != nil {
		t.Fatal(err)
	}
	Finished(l, r) // no outcome yet: nothing to say
	if b.Len() != 0 {
		t.Fatalf("a line for a run without an outcome: %s", b.String())
	}
	if err := r.Finish(143, 15, time.Now()); err != nil {
		t.Fatal(err)
	}
	Finished(l, r)
	lines := jsonLines(t, b.Bytes())
	if len(lines) != 1 || b.Len() > 300 {
		t.Fatalf("want one line of at most 300 bytes, got %d bytes: %s", b.Len(), b.String())
	}
	m := lines[0]
	if m["event"] != EventFinished || m["runId"] != r.RunID || m["exitCode"] != 143.0 || m["signal"] != 15.0 ||
		m["record"] != nil || m["level"] != "info" {
		t.Errorf("finished line %v: want event finished, runId %s, exitCode 143, signal 15, no record", m, r.RunID)
	}
	if _, ok := m["durationSeconds"].(float64); !ok {
		t.Errorf("no durationSeconds: %v", m)
	}

	b.Reset()
	if err := r.NotStarted(126, 0, time.Now(), "exec format error"); err != nil {
		t.Fatal(err)
	}
	Finished(l, r)
	m = jsonLines(t, b.Bytes())[0]
	if m["level"] != "warn" || m["notStarted"] != "exec format error" || m["message"] != "command did not start" {
		t.Errorf("a command that never ran: %v", m)
	}
}
