//go:build container

package container

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/report/trace/provline"
)

// logLine is one JSON object gpu-preflight wrote on stderr.
type logLine map[string]any

func (l logLine) str(key string) string {
	s, _ := l[key].(string)
	return s
}

// checkID is the check a finding line is about. docs/sources.md, "What gpu-preflight is held to" asks for
// id, status, message and remedy on every check line; the id's key is
// "check" (logs.Findings), "id" accepted for a plainer logger.
func (l logLine) checkID() string {
	if id := l.str("check"); id != "" {
		return id
	}
	return l.str("id")
}

// logs is everything a container wrote on stderr, parsed.
type logs struct {
	lines []logLine
	raw   string
}

// parseLogs parses stderr as JSON lines (docs/sources.md, "What gpu-preflight is held to"). The commands in
// these scenarios write nothing on stderr, so a line that is not one JSON
// object is gpu-preflight breaking the log format (or runc failing, whose
// message then shows in the failure).
func parseLogs(t *testing.T, stderr string) logs {
	t.Helper()
	l := logs{raw: stderr}
	for i, line := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if line == "" {
			continue
		}
		var obj logLine
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Errorf("stderr line %d is not a JSON object (%v): %s", i+1, err, line)
			continue
		}
		for _, key := range []string{"time", "level", "message"} {
			if _, ok := obj[key]; !ok {
				t.Errorf("stderr line %d has no %q: %s", i+1, key, line)
			}
		}
		l.lines = append(l.lines, obj)
	}
	return l
}

// check returns the line for check id; it fails the test when there is none
// or it lacks a field docs/sources.md, "What gpu-preflight is held to" requires.
func (l logs) check(t *testing.T, id string) logLine {
	t.Helper()
	for _, line := range l.lines {
		if line.checkID() != id {
			continue
		}
		for _, key := range []string{"status", "message"} {
			if line.str(key) == "" {
				t.Errorf("log line for check %s has no %s: %v", id, key, line)
			}
		}
		if st := line.str("status"); st != "pass" && st != "skip" && line.str("remedy") == "" {
			t.Errorf("log line for check %s has status %s but no remedy: %v", id, st, line)
		}
		return line
	}
	t.Fatalf("no log line for check %q in:\n%s", id, l.raw)
	return nil
}

// checkStatus is the status of check id in the record, "" when absent.
func (r record) checkStatus(id string) string {
	checks, _ := r.get("checks").([]any)
	for _, c := range checks {
		if m, _ := c.(map[string]any); m["id"] == id {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// has reports whether check id has a log line.
func (l logs) has(id string) bool {
	_, ok := l.find(func(line logLine) bool { return line.checkID() == id })
	return ok
}

// find returns the first line for which match holds.
func (l logs) find(match func(logLine) bool) (logLine, bool) {
	for _, line := range l.lines {
		if match(line) {
			return line, true
		}
	}
	return nil, false
}

// provenanceLines returns the reduced records carried by the log lines
// whose message is "provenance" (docs/schema/README.md).
func (l logs) provenanceLines(t *testing.T) []record {
	t.Helper()
	var out []record
	for i, line := range l.lines {
		if line.str("message") != "provenance" {
			continue
		}
		raw, err := json.Marshal(line["record"])
		must(t, err)
		var obj map[string]any
		if _, ok := provline.Project(raw); !ok || json.Unmarshal(raw, &obj) != nil {
			t.Fatalf("provenance log line %d carries no record: %s", i+1, raw)
		}
		out = append(out, record{raw: raw, obj: obj})
	}
	return out
}

// provenanceLine returns the record of the run's one provenance log line:
// a run logs its record once, supervised or not (the end of a supervised
// run is a small "finished" line that joins it by runId).
func (l logs) provenanceLine(t *testing.T) record {
	t.Helper()
	recs := l.provenanceLines(t)
	if len(recs) != 1 {
		t.Fatalf("want one log line with message \"provenance\", got %d in:\n%s", len(recs), l.raw)
	}
	return recs[0]
}

// record is a provenance record as JSON, navigated by dotted paths so the
// assertions read like the schema ("decision.action").
type record struct {
	raw []byte
	obj map[string]any
}

func parseRecord(t *testing.T, from string, raw []byte) record {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("record from %s is not a JSON object: %v\n%s", from, err, raw)
	}
	validateRecord(t, from, raw)
	return record{raw: raw, obj: obj}
}

// get returns the value at a dotted path ("host.driver.source",
// "host.gpus.0.name"), or nil when any step is missing.
func (r record) get(path string) any {
	var v any = r.obj
	for _, step := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[step]
		case []any:
			var i int
			if _, err := fmt.Sscan(step, &i); err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func (r record) str(path string) string {
	s, _ := r.get(path).(string)
	return s
}

func (r record) num(path string) (float64, bool) {
	f, ok := r.get(path).(float64)
	return f, ok
}

// want compares the value at path with want as JSON values, so an int
// matches a JSON number and a []string a JSON array of the same strings.
func (r record) want(t *testing.T, path string, want any) {
	t.Helper()
	data, err := json.Marshal(want)
	must(t, err)
	var norm any
	must(t, json.Unmarshal(data, &norm))
	if got := r.get(path); !reflect.DeepEqual(got, norm) {
		g, _ := json.Marshal(got)
		t.Errorf("record %s = %s, want %s", path, g, data)
	}
}

// records reads the provenance volume: every entry must be a complete
// record file (docs/schema/README.md: `<UTC time>-<run id>.json`, mode 0640, no
// temporary file left behind).
func records(t *testing.T, dir string) []record {
	t.Helper()
	entries, err := os.ReadDir(dir)
	must(t, err)
	var out []record
	for _, e := range entries {
		name := e.Name()
		info, err := e.Info()
		must(t, err)
		if !info.Mode().IsRegular() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			t.Errorf("provenance volume holds %s (%v), which is not a record file", name, info.Mode())
			continue
		}
		if perm := info.Mode().Perm(); perm != 0o640 {
			t.Errorf("record %s has mode %v, want 0640", name, perm)
		}
		raw, err := os.ReadFile(filepath.Join(dir, name))
		must(t, err)
		r := parseRecord(t, name, raw)
		if id := r.str("runId"); id == "" || !strings.HasSuffix(name, "-"+id+".json") {
			t.Errorf("record file %s is not named <time>-<runId>.json (runId %q)", name, id)
		}
		out = append(out, r)
	}
	return out
}

// oneRecord reads the volume's only record and checks it is the same object
// as the provenance log line.
func oneRecord(t *testing.T, b *bundle, l logs) record {
	t.Helper()
	recs := records(t, b.provenance)
	if len(recs) != 1 {
		t.Fatalf("want one record in the provenance volume, got %d\nstderr:\n%s", len(recs), l.raw)
	}
	fromLog := l.provenanceLine(t)
	if a, b := fromLog.str("runId"), recs[0].str("runId"); a != b {
		t.Errorf("provenance log line has runId %q, the file %q", a, b)
	}
	wantChecksLogged(t, recs[0], l)
	return recs[0]
}

// wantChecksLogged checks that every check that did not pass has its log
// line, with the same status, and that passing and skipped checks (logged
// at debug) have none at the default level: the record keeps every check.
func wantChecksLogged(t *testing.T, rec record, l logs) {
	t.Helper()
	checks, _ := rec.get("checks").([]any)
	if len(checks) == 0 {
		t.Errorf("record has no checks")
	}
	for _, c := range checks {
		m, _ := c.(map[string]any)
		id, _ := m["id"].(string)
		if m["status"] == "pass" || m["status"] == "skip" {
			if l.has(id) {
				t.Errorf("check %s (%v) is logged at the default level", id, m["status"])
			}
			continue
		}
		if got := l.check(t, id).str("status"); got != m["status"] {
			t.Errorf("check %s: log line says %s, record %v", id, got, m["status"])
		}
	}
}

func wantExit(t *testing.T, res result, code int) {
	t.Helper()
	if res.exitCode != code {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", res.exitCode, code, res.stdout, res.stderr)
	}
}

func wantStdout(t *testing.T, res result, want string) {
	t.Helper()
	if res.stdout != want {
		t.Errorf("stdout = %q, want %q", res.stdout, want)
	}
}
