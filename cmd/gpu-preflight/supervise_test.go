package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/report/trace/provline"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

// supervised is the built shim running a command in supervise mode.
type supervised struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	prov, ledger   string
}

// startSupervised starts the shim with PREFLIGHT_SUPERVISE=true on this
// GPU-less machine (no driver: a warning, and the command runs), a fresh
// provenance directory and ledger, and env added to the environment.
func startSupervised(t *testing.T, env map[string]string, argv ...string) *supervised {
	t.Helper()
	return startProgram(t, env, shimPath, append([]string{"--"}, argv...)...)
}

// startProgram is startSupervised for a program that runs the shim: a
// shell that sets up signal dispositions and then execs it, say.
func startProgram(t *testing.T, env map[string]string, program string, args ...string) *supervised {
	t.Helper()
	s := &supervised{prov: t.TempDir()}
	s.ledger = filepath.Join(t.TempDir(), "runs.jsonl")
	s.cmd = exec.Command(program, args...)
	s.cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"PREFLIGHT_SUPERVISE=true", "PREFLIGHT_PROVENANCE_DIR=" + s.prov, "PREFLIGHT_LEDGER=" + s.ledger,
		"PREFLIGHT_LOG_FORMAT=json", "PREFLIGHT_LOG_LEVEL=debug",
		"PREFLIGHT_TERMINATION_LOG=" + filepath.Join(t.TempDir(), "termination-log")}
	// env replaces a variable set above: with a name given twice, getenv
	// would return the first.
	s.cmd.Env = slices.DeleteFunc(s.cmd.Env, func(kv string) bool {
		_, ok := env[kv[:strings.IndexByte(kv, '=')]]
		return ok
	})
	for k, v := range env {
		s.cmd.Env = append(s.cmd.Env, k+"="+v)
	}
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting the shim: %v", err)
	}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			s.cmd.Wait()
		}
	})
	return s
}

// wait returns the shim's exit code (-1 when a signal killed it), failing
// the test after a minute.
func (s *supervised) wait(t *testing.T) int {
	t.Helper()
	return waitBounded(t, s, time.Minute, "the supervising shim").ExitStatus()
}

// record returns the one record file in the provenance directory.
func (s *supervised) record(t *testing.T) map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.prov, "*"))
	if len(files) != 1 {
		t.Fatalf("provenance directory holds %v, want exactly one record; stderr:\n%s", files, s.stderr.String())
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, data)
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("record %s: %v", files[0], err)
	}
	return rec
}

// ledgerLines decodes every line of the ledger.
func (s *supervised) ledgerLines(t *testing.T) []map[string]any {
	t.Helper()
	f, err := os.Open(s.ledger)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		schematest.Validate(t, sc.Bytes())
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("ledger line %d is not JSON: %v", len(lines)+1, err)
		}
		lines = append(lines, m)
	}
	return lines
}

// TestSuperviseExitsWithTheCommandsStatusAndRecordsIt proves the exit-code
// rule (the status, or 128+N for signal N) and that the run's one record
// file and the ledger end with the outcome.
func TestSuperviseExitsWithTheCommandsStatusAndRecordsIt(t *testing.T) {
	for _, tt := range []struct {
		name         string
		argv         []string
		code, signal int
	}{
		{"ExitZero", []string{"true"}, 0, 0},
		{"ExitThree", []string{"sh", "-c", "exit 3"}, 3, 0},
		{"SIGKILLIs137", []string{"sh", "-c", "kill -KILL $$"}, 137, 9},
		{"SIGTERMIs143", []string{"sh", "-c", "kill -TERM $$"}, 143, 15},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := startSupervised(t, nil, tt.argv...)
			if code := s.wait(t); code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, s.stderr.String())
			}
			rec := s.record(t)
			checkOutcome(t, rec, tt.code, tt.signal)

			lines := s.ledgerLines(t)
			if len(lines) != 2 {
				t.Fatalf("ledger has %d lines, want 2 (the run at start, then finished)", len(lines))
			}
			if lines[0]["outcome"] != nil || lines[0]["runId"] != rec["runId"] {
				t.Errorf("first ledger line: runId %v, outcome %v; want run %v, no outcome", lines[0]["runId"], lines[0]["outcome"], rec["runId"])
			}
			if lines[1]["runId"] != rec["runId"] {
				t.Errorf("second ledger line is run %v, want %v", lines[1]["runId"], rec["runId"])
			}
			checkOutcome(t, lines[1], tt.code, tt.signal)

			checkOutcome(t, loggedEnd(t, s.stderr.String()), tt.code, tt.signal)
		})
	}
}

func checkOutcome(t *testing.T, rec map[string]any, code, signal int) {
	t.Helper()
	out, ok := rec["outcome"].(map[string]any)
	if !ok {
		t.Fatalf("record has outcome %v, want an object", rec["outcome"])
	}
	if out["exitCode"] != float64(code) || out["signal"] != float64(signal) {
		t.Errorf("outcome %v, want exitCode %d, signal %d", out, code, signal)
	}
	started, err1 := time.Parse(time.RFC3339Nano, fmt.Sprint(rec["startedAt"]))
	finished, err2 := time.Parse(time.RFC3339Nano, fmt.Sprint(out["finishedAt"]))
	if err1 != nil || err2 != nil || finished.Before(started) || !strings.HasSuffix(fmt.Sprint(out["finishedAt"]), "Z") {
		t.Errorf("startedAt %v, finishedAt %v: want RFC 3339 UTC times, finished after started", rec["startedAt"], out["finishedAt"])
	}
	if d, ok := out["durationSeconds"].(float64); !ok || d < 0 || d > 60 {
		t.Errorf("durationSeconds %v", out["durationSeconds"])
	}
}

// loggedEnd is the run as its log tells it: the reduced record of its one
// provenance line (a run logs its record once), with the outcome of the
// small "finished" line that joins it by runId when the command ended after
// the record was logged (finishedAt is that line's time).
func loggedEnd(t *testing.T, stderr string) map[string]any {
	t.Helper()
	var raws []json.RawMessage
	var fin map[string]any
	for _, line := range strings.Split(stderr, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		switch {
		case m["message"] == "provenance":
			raw, _ := json.Marshal(m["record"])
			raws = append(raws, raw)
		case m["event"] == "finished":
			if fin != nil {
				t.Fatalf("two finished lines in:\n%s", stderr)
			}
			fin = m
		}
	}
	if len(raws) != 1 {
		t.Fatalf("%d provenance log lines, want 1, in:\n%s", len(raws), stderr)
	}
	if _, ok := provline.Project(raws[0]); !ok {
		t.Fatalf("the provenance line carries no record: %s", raws[0])
	}
	var rec map[string]any
	if err := json.Unmarshal(raws[0], &rec); err != nil {
		t.Fatal(err)
	}
	if fin == nil {
		return rec
	}
	if fin["runId"] != rec["runId"] || fin["record"] != nil {
		t.Fatalf("the finished line does not join run %v by its runId (or carries the record): %v", rec["runId"], fin)
	}
	if rec["outcome"] != nil {
		t.Fatalf("the record was logged with its outcome and a finished line followed:\n%s", stderr)
	}
	out := map[string]any{"finishedAt": fin["time"]}
	for _, k := range []string{"exitCode", "signal", "durationSeconds", "notStarted"} {
		if v, ok := fin[k]; ok {
			out[k] = v
		}
	}
	rec["outcome"] = out
	return rec
}

// TestSuperviseForwardsSignals proves a signal sent to gpu-preflight
// reaches the command (its trap runs) and gpu-preflight then exits with the
// command's status.
func TestSuperviseForwardsSignals(t *testing.T) {
	sigs := []syscall.Signal{unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2,
		unix.SIGWINCH, unix.SIGCONT}
	for _, sig := range sigs {
		defaultSignals(t, sig)
	}
	for _, sig := range sigs {
		name := strings.TrimPrefix(unix.SignalName(sig), "SIG")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			// The trap runs between two short sleeps; the sleep itself is
			// not signalled (signals go to the command's pid only).
			script := `trap 'echo ` + name + ` >> "$D/got"; exit 5' ` + name + `
touch "$D/ready"
while :; do sleep 0.05; done`
			s := startSupervised(t, map[string]string{"D": dir}, "sh", "-c", script)
			harness.WaitForFile(t, filepath.Join(dir, "ready"), s.stderr.String)
			if err := s.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := s.wait(t); code != 5 {
				t.Fatalf("exit %d, want the command's 5; stderr:\n%s", code, s.stderr.String())
			}
			got, _ := os.ReadFile(filepath.Join(dir, "got"))
			if string(got) != name+"\n" {
				t.Errorf("the command's trap saw %q, want %s once", got, name)
			}
			checkOutcome(t, s.record(t), 5, 0)
		})
	}
}
