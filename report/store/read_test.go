package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
)

func writeAt(t *testing.T, dir string, at time.Time) string {
	t.Helper()
	in := reporttest.Inputs()
	in.Now = at
	path, err := Write(dir, report.New(in))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadFileReturnsWhatWriteWrote(t *testing.T) {
	dir := t.TempDir()
	path := writeAt(t, dir, reporttest.Time)
	s, err := ReadFile(path)
	if err != nil || s.Path != path || !s.Started.Equal(reporttest.Time) || s.Record.SchemaVersion != report.SchemaVersion {
		t.Fatalf("ReadFile: %+v, %v", s, err)
	}
}

func TestReadFileRefusesWhatIsNoRecordOfThisSchema(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"broken.json": `{"schemaVersion": "1", "runId": `,
		"other.json":  `{"name": "not a record"}`,
		"v2.json":     `{"schemaVersion": "2", "runId": "x", "startedAt": "2026-11-02T09:00:00Z"}`,
		"when.json":   `{"schemaVersion": "1", "runId": "x", "startedAt": "Tuesday"}`,
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(body), 0o644)
		_, err := ReadFile(path)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want an error naming the file", name, err)
		}
		if (name == "v2.json") != errors.Is(err, ErrOtherSchema) {
			t.Errorf("%s: %v: only another schemaVersion is ErrOtherSchema", name, err)
		}
	}
}

func TestOpenBoundedNeverBlocksOrReadsADevice(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	os.WriteFile(big, make([]byte, MaxFileBytes+1), 0o644)
	for _, p := range []string{fifo, "/dev/zero", big} {
		if _, err := OpenBounded(p); err == nil {
			t.Errorf("%s: read", p)
		}
	}
}

func TestNewestTwoReadsTheNewestNamesFirst(t *testing.T) {
	dir := t.TempDir()
	for i := range 100 {
		writeAt(t, dir, reporttest.Time.Add(time.Duration(i)*time.Hour))
	}
	os.WriteFile(filepath.Join(dir, "notes.json"), []byte(`{}`), 0o644)
	os.WriteFile(filepath.Join(dir, ".x.json.tmp-1"), []byte(`{`), 0o644)
	var skipped []string
	old, new, err := NewestTwo(dir, func(err error) { skipped = append(skipped, err.Error()) })
	if err != nil || !old.Started.Equal(reporttest.Time.Add(98*time.Hour)) || !new.Started.Equal(reporttest.Time.Add(99*time.Hour)) {
		t.Fatalf("newest two %v and %v, %v", old.Started, new.Started, err)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], "notes.json") {
		t.Errorf("skipped %q, want notes.json alone", skipped)
	}
	if _, _, err := NewestTwo(t.TempDir(), func(error) {}); err == nil || !strings.Contains(err.Error(), "0 provenance record") {
		t.Errorf("an empty directory: %v", err)
	}
}

// FuzzDecode: whatever the bytes, Decode returns a record of this schema
// with its start time, or an error; never a panic.
func FuzzDecode(f *testing.F) {
	path, err := Write(f.TempDir(), report.New(reporttest.Inputs()))
	if err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"schemaVersion":"2","runId":"r"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, started, err := Decode(b)
		if err == nil && (r.SchemaVersion != report.SchemaVersion || r.RunID == "" || started.IsZero()) {
			t.Fatalf("decoded %q, %q, %v without an error", r.SchemaVersion, r.RunID, started)
		}
	})
}
