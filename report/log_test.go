package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/report/schematest"
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

func TestJSONLinesStartWithTimeLevelMessage(t *testing.T) {
	var buf bytes.Buffer
	l, err := NewLogger(&buf, FormatJSON, "info")
	if err != nil {
		t.Fatal(err)
	}
	l.Info().Str("driver", "535.129.03").Int("gpus", 8).Msg("host facts")
	l.Debug().Msg("hidden at info")
	line := buf.String()
	if !regexp.MustCompile(`^\{"time":"[^"]+","level":"info","message":"host facts","driver":"535.129.03","gpus":8\}\n$`).MatchString(line) {
		t.Errorf("line = %q, want time, level, message first, then the fields", line)
	}
	m := jsonLines(t, buf.Bytes())
	if len(m) != 1 {
		t.Fatalf("%d lines, want 1 (debug is below info)", len(m))
	}
	if !logTime.MatchString(m[0]["time"].(string)) {
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
		_, err := NewLogger(&bytes.Buffer{}, tt.format, tt.level)
		if tt.wantErr == "" && err != nil {
			t.Errorf("NewLogger(%q, %q): %v", tt.format, tt.level, err)
		}
		if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("NewLogger(%q, %q) error = %v, want %q", tt.format, tt.level, err, tt.wantErr)
		}
	}
}

func TestAutoFormatIsJSONWhenNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	l, _ := NewLogger(&buf, FormatAuto, "info")
	l.Info().Msg("x")
	if !strings.HasPrefix(buf.String(), `{"time":`) {
		t.Errorf("auto format on a buffer wrote %q, want JSON", buf.String())
	}
	buf.Reset()
	l, _ = NewLogger(&buf, FormatConsole, "info")
	l.Warn().Str("check", "shm").Msg("small shm")
	if out := buf.String(); strings.Contains(out, "\x1b[") || !strings.Contains(out, "WRN small shm") {
		t.Errorf("console format = %q, want plain text without colour", out)
	}
}

// At debug every finding has its line; passing and skipped checks are at
// debug level, so at info only what did not pass is logged.
func TestLogFindingsOneLinePerFinding(t *testing.T) {
	var buf bytes.Buffer
	l, _ := NewLogger(&buf, FormatJSON, "info")
	LogFindings(l, sampleFindings)
	for _, m := range jsonLines(t, buf.Bytes()) {
		if m["status"] == "pass" || m["status"] == "skip" {
			t.Errorf("a %s finding is logged at info: %v", m["status"], m)
		}
	}
	buf.Reset()
	l, _ = NewLogger(&buf, FormatJSON, "debug")
	LogFindings(l, sampleFindings)
	lines := jsonLines(t, buf.Bytes())
	if len(lines) != len(sampleFindings) {
		t.Fatalf("%d lines for %d findings", len(lines), len(sampleFindings))
	}
	wantLevel := map[check.Status]string{check.Pass: "debug", check.Skip: "debug", check.Info: "info", check.Warn: "warn", check.Error: "error"}
	for i, f := range sampleFindings {
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
	l, _ := NewLogger(&buf, FormatJSON, "info")
	long := strings.Repeat("é", 6000) // 12000 bytes, multi-byte runes
	LogFindings(l, []check.Finding{{ID: "gpu-arch", Status: check.Error, Message: long, Remedy: long}})
	if buf.Len() > MaxLineBytes {
		t.Errorf("finding line is %d bytes, over %d", buf.Len(), MaxLineBytes)
	}
	m := jsonLines(t, buf.Bytes())[0]
	if m["truncated"] != true || !strings.Contains(m["message"].(string), "[truncated 12000 bytes]") {
		t.Errorf("cut line does not say so: %v", m)
	}
}

func TestEveryOtherLineStaysUnderTheCap(t *testing.T) {
	big := strings.Repeat("x", 20000)
	tests := []struct {
		name string
		log  func(l zerolog.Logger)
	}{
		{"one huge string", func(l zerolog.Logger) { l.Info().Str("libs", big).Msg("scan") }},
		{"huge message", func(l zerolog.Logger) { l.Info().Msg(big) }},
		{"huge object", func(l zerolog.Logger) { l.Info().RawJSON("facts", []byte(`{"a":"`+big+`"}`)).Msg("facts") }},
		{"escapes expand", func(l zerolog.Logger) { l.Info().Str("ctl", strings.Repeat("\x01", 9000)).Msg("ctl") }},
		{"many fields", func(l zerolog.Logger) {
			e := l.Info()
			for i := 0; i < 2000; i++ {
				e = e.Int("f"+strings.Repeat("k", i%5)+string(rune('a'+i%26))+string(rune('a'+i/26%26)), i)
			}
			e.Msg("many")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			l, _ := NewLogger(&buf, FormatJSON, "info")
			tt.log(l)
			if buf.Len() > MaxLineBytes {
				t.Errorf("line is %d bytes, over %d", buf.Len(), MaxLineBytes)
			}
			m := jsonLines(t, buf.Bytes())
			if len(m) != 1 {
				t.Fatalf("%d lines, want 1", len(m))
			}
			if _, ok := m[0]["truncatedFields"]; !ok {
				t.Errorf("cut line does not list what was cut: %.300s", buf.String())
			}
			for _, k := range []string{"time", "level", "message"} {
				if _, ok := m[0][k]; !ok {
					t.Errorf("cut line lost %s", k)
				}
			}
		})
	}
}

func TestProvenanceLineCarriesTheWholeRecord(t *testing.T) {
	in := sampleInputs()
	// Enough frameworks that the record is well over the line cap.
	for i := 0; i < 60; i++ {
		in.Facts.Container.Frameworks = append(in.Facts.Container.Frameworks, in.Facts.Container.Frameworks[0])
	}
	r := New(in)
	var buf bytes.Buffer
	l, _ := NewLogger(&buf, FormatJSON, "info")
	if err := LogRecord(l, r); err != nil {
		t.Fatal(err)
	}
	if bytes.Count(buf.Bytes(), []byte("\n")) != 1 {
		t.Fatal("the provenance record is not exactly one line")
	}
	if buf.Len() <= MaxLineBytes {
		t.Fatalf("test record too small (%d bytes) to prove the exemption", buf.Len())
	}
	var line struct {
		Message     string          `json:"message"`
		RecordBytes int             `json:"recordBytes"`
		Record      json.RawMessage `json:"record"`
	}
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line.Message != "provenance" || line.RecordBytes != len(line.Record) {
		t.Errorf("message %q, recordBytes %d, record is %d bytes", line.Message, line.RecordBytes, len(line.Record))
	}
	schematest.Validate(t, line.Record)
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		want  string
		cut   bool
	}{
		{"short", 10, "short", false},
		{strings.Repeat("a", 100), 40, strings.Repeat("a", 16) + "…[truncated 100 bytes]", true},
		{strings.Repeat("é", 50), 41, strings.Repeat("é", 8) + "…[truncated 100 bytes]", true}, // never half a rune
		{strings.Repeat("a", 100), 5, "…[truncated 100 bytes]", true},
	}
	for _, tt := range tests {
		got, cut := Truncate(tt.in, tt.limit)
		if got != tt.want || cut != tt.cut {
			t.Errorf("Truncate(%d bytes, %d) = %q, %v; want %q, %v", len(tt.in), tt.limit, got, cut, tt.want, tt.cut)
		}
	}
}

// FuzzFitLine: whatever JSON object a logger writes, the line that comes out
// is one valid JSON object, newline-ended, under the cap, and keeps time,
// level and message. The value is a short piece repeated, so the fuzzer
// builds long lines from inputs it can still minimise quickly.
func FuzzFitLine(f *testing.F) {
	f.Add("driver", "x", 3000, 3)
	f.Add("message", "\x00\xff\u2028\"\"", 700, 3)
	f.Add("k", "v", 1, 12)
	f.Add("message", "\"", 1500, 12)
	f.Add("check", "https://u:p@h/ --token t ", 400, 2)
	f.Add("aAa", "", 0, 1) // empty message: zerolog writes no message key
	f.Fuzz(func(t *testing.T, key, piece string, rep, n int) {
		if n < 0 || n > 12 || rep < 0 || rep > 3000 || len(piece) > 64 {
			return
		}
		value := strings.Repeat(piece, rep)
		var buf bytes.Buffer
		l, _ := NewLogger(&buf, FormatJSON, "info")
		e := l.Info()
		for i := 0; i < n; i++ {
			e = e.Str(key, value)
		}
		e.Msg(value)
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
