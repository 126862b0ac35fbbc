package examples

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// Markers around the README samples the tests keep true.
const (
	abortOpen      = "<!-- abort-sample -->"
	abortClose     = "<!-- /abort-sample -->"
	abortLogOpen   = "<!-- abort-log-sample -->"
	abortLogClose  = "<!-- /abort-log-sample -->"
	quickstartOpen = "<!-- quickstart -->"
	quickClose     = "<!-- /quickstart -->"
)

// documented returns the marked text from README.md, and the file's name.
func documented(t *testing.T, open, close string) (string, string) {
	t.Helper()
	for _, f := range []string{"README.md"} {
		doc := readRepoFile(t, f)
		if !strings.Contains(doc, open) {
			continue
		}
		text, err := Between(doc, open, close)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		return text, f
	}
	t.Fatalf("README.md has no %s", open)
	return "", ""
}

// sampleBlock is the one code block between a pair of README markers,
// trimmed, and the file's name.
func sampleBlock(t *testing.T, open, close string) (string, string) {
	t.Helper()
	text, file := documented(t, open, close)
	blocks := CodeBlocks(text)
	if len(blocks) != 1 {
		t.Fatalf("%s: want one code block between %s and %s, got %d", file, open, close, len(blocks))
	}
	return strings.TrimSpace(blocks[0]), file
}

// TestAbortSampleIsWhatTheShimSays: the failure shown in the documentation
// is, byte for byte, the termination message the current code writes for
// the CUDA 11.8 image on driver 515.65.01.
func TestAbortSampleIsWhatTheShimSays(t *testing.T) {
	sample, file := sampleBlock(t, abortOpen, abortClose)
	got := runAbort(t)
	if got.Code != 78 {
		t.Errorf("the scenario exits %d, want 78\n%s", got.Code, got.Stderr)
	}
	if sample != got.termination {
		t.Errorf("%s's abort sample is not what gpu-preflight writes now.\nsample:\n%s\n\ngpu-preflight:\n%s",
			file, sample, got.termination)
	}
}

// TestAbortLogSampleIsTheLastLine: the README's sample of an abort's last
// log line is, byte for byte, the message of the last line the shim writes
// for the same failure, a JSON line with "event":"abort".
func TestAbortLogSampleIsTheLastLine(t *testing.T) {
	sample, file := sampleBlock(t, abortLogOpen, abortLogClose)
	got := runAbort(t)
	var last struct{ Message, Event, Level string }
	if err := json.Unmarshal([]byte(got.lines[len(got.lines)-1]), &last); err != nil || last.Event != "abort" || last.Level != "error" {
		t.Fatalf("the last stderr line is not an error line with \"event\":\"abort\" (%v):\n%s", err, got.lines[len(got.lines)-1])
	}
	if sample != last.Message {
		t.Errorf("%s's abort log sample is not what gpu-preflight writes now.\nsample:\n%s\n\ngpu-preflight:\n%s",
			file, sample, last.Message)
	}
}

// TestQuickStartRunsWordForWord runs the quick start's commands in the
// repository, as a newcomer would type them, except `make test` (this suite
// is part of it). The environment is the test's own, with
// PREFLIGHT_PROVENANCE_DIR pointed at a scratch directory so the run leaves
// nothing in /var/log.
func TestQuickStartRunsWordForWord(t *testing.T) {
	text, file := documented(t, quickstartOpen, quickClose)
	var cmds []string
	for _, b := range CodeBlocks(text) {
		cmds = append(cmds, Commands(b)...)
	}
	for _, want := range []string{"make run", "make test", "bin/gpu-preflight -- echo hi"} {
		if !slices.Contains(cmds, want) {
			t.Errorf("%s's quick start does not have %q (it has %q)", file, want, cmds)
		}
	}
	prov := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "GPU_PREFLIGHT_BIN":
			continue // a newcomer's shell is not inside make
		}
		env = append(env, kv)
	}
	env = append(env, "PREFLIGHT_PROVENANCE_DIR="+prov, "PREFLIGHT_LOG_FORMAT=json")
	ran := 0
	for _, c := range cmds {
		if c == "make test" {
			continue
		}
		ran++
		r := harness.Run(t, 10*time.Minute, harness.Root(t), env, "bash", "-c", c)
		if r.Code != 0 {
			t.Errorf("%q exits %d\nstdout:\n%s\nstderr:\n%s", c, r.Code, r.Stdout, r.Stderr)
			continue
		}
		if c == "bin/gpu-preflight -- echo hi" && r.Stdout != "hi\n" {
			t.Errorf("%q printed %q, want hi", c, r.Stdout)
		}
	}
	if ran == 0 {
		t.Fatal("no quick-start command ran")
	}
	if recs, _ := filepath.Glob(filepath.Join(prov, "*.json")); len(recs) == 0 {
		t.Error("bin/gpu-preflight -- echo hi left no provenance record")
	}
}
