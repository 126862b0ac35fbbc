package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
	"golang.org/x/sys/unix"
)

// TestRecordSaysWhenTheCommandNeverRan: a command that is not found (127)
// or cannot be executed (126) never ran, and the record, the ledger and the
// log say so (outcome with exitCode and notStarted), in exec and in
// supervise mode, rather than "action: exec" with nothing after it.
func TestRecordSaysWhenTheCommandNeverRan(t *testing.T) {
	dir := t.TempDir()
	noExec := filepath.Join(dir, "not-executable.sh")
	badFormat := filepath.Join(dir, "bad-format")
	if err := os.WriteFile(noExec, []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Executable bits, but no ELF header and no "#!": execve gives ENOEXEC
	// only after the record is written, so it has to be completed.
	if err := os.WriteFile(badFormat, []byte{0x7f, 'X', 'Y', 'Z', 0, 0, 0, 0}, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"false", "true"} {
		for _, tt := range []struct {
			name  string
			argv  []string
			code  int
			lines int // ledger lines for the run
			why   string
		}{
			{"NotFoundIs127", []string{"no-such-command-xyz", "--epochs", "3"}, 127, 1, "not found"},
			{"NotExecutableIs126", []string{noExec}, 126, 1, "not executable"},
			{"ExecFailsIs126", []string{badFormat}, 126, 2, "exec format error"},
		} {
			t.Run("supervise="+mode+"/"+tt.name, func(t *testing.T) {
				s := startSupervised(t, map[string]string{"PREFLIGHT_SUPERVISE": mode}, tt.argv...)
				if code := s.wait(t); code != tt.code {
					t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, s.stderr.String())
				}
				rec := s.record(t)
				wantNotStarted(t, "record", rec, tt.code, 0, tt.why)
				lines := s.ledgerLines(t)
				if len(lines) != tt.lines {
					t.Fatalf("ledger has %d lines, want %d", len(lines), tt.lines)
				}
				wantNotStarted(t, "last ledger line", lines[len(lines)-1], tt.code, 0, tt.why)
				wantNotStarted(t, "the log", loggedEnd(t, s.stderr.String()), tt.code, 0, tt.why)
			})
		}
	}
}

// wantNotStarted checks a record's outcome for a command that never ran.
func wantNotStarted(t *testing.T, what string, rec map[string]any, code, signal int, why string) {
	t.Helper()
	out, ok := rec["outcome"].(map[string]any)
	if !ok {
		t.Fatalf("%s has outcome %v: it does not say the command never ran", what, rec["outcome"])
	}
	if out["exitCode"] != float64(code) || out["signal"] != float64(signal) {
		t.Errorf("%s: outcome %v, want exitCode %d, signal %d", what, out, code, signal)
	}
	if s, _ := out["notStarted"].(string); !strings.Contains(s, why) {
		t.Errorf("%s: outcome.notStarted = %q, want it to say %q", what, s, why)
	}
}

// stalledStderr returns the write end of a pipe that nobody reads, and
// keeps the read end open so writes block rather than fail.
func stalledStderr(t *testing.T) *os.File {
	t.Helper()
	r, w := onePagePipe(t)
	t.Cleanup(func() { r.Close(); w.Close() })
	return w
}

// onePagePipe is a pipe that holds one page, so that the log lines before
// the command starts fill it.
func onePagePipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, os.Getpagesize()); err != nil {
		t.Fatal(err)
	}
	return r, w
}

// bigRecordEnv makes the record, and so its one provenance log line, larger
// than a pipe's 64 KiB buffer: 40 allow-listed variables of 4000 bytes.
func bigRecordEnv() map[string]string {
	env := map[string]string{}
	for i := 0; i < 40; i++ {
		env[fmt.Sprintf("CUDA_TEST_PADDING_%02d", i)] = strings.Repeat("x", 4000)
	}
	return env
}

// startStalled starts the shim as startSupervised does, with env, but with
// stderr a one-page pipe nobody reads.
func startStalled(t *testing.T, env map[string]string, argv ...string) *supervised {
	t.Helper()
	s := newStalled(t, env, argv...)
	s.start(t)
	return s
}

// newStalled is startStalled's shim, not started yet.
func newStalled(t *testing.T, env map[string]string, argv ...string) *supervised {
	t.Helper()
	all := bigRecordEnv()
	for k, v := range env {
		all[k] = v
	}
	s := &supervised{prov: t.TempDir()}
	s.ledger = filepath.Join(t.TempDir(), "runs.jsonl")
	s.cmd = exec.Command(shimPath, append([]string{"--"}, argv...)...)
	s.cmd.Env = []string{"PATH=/usr/bin:/bin", "PREFLIGHT_PROVENANCE_DIR=" + s.prov, "PREFLIGHT_LEDGER=" + s.ledger,
		"PREFLIGHT_LOG_FORMAT=json", "PREFLIGHT_TIMEOUT=5s", "PREFLIGHT_TERMINATION_LOG="}
	for k, v := range all {
		s.cmd.Env = append(s.cmd.Env, k+"="+v)
	}
	s.cmd.Stdout = &s.stdout
	s.cmd.Stderr = stalledStderr(t)
	return s
}

func (s *supervised) start(t *testing.T) {
	t.Helper()
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			s.cmd.Wait()
		}
	})
}

// waitBounded waits for the shim at most limit and returns its wait status,
// failing the test (and killing the shim) past it.
func waitBounded(t *testing.T, s *supervised, limit time.Duration, what string) syscall.WaitStatus {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return s.cmd.ProcessState.Sys().(syscall.WaitStatus)
	case <-time.After(limit):
		s.cmd.Process.Kill()
		<-done
		t.Fatalf("%s: the shim was still running after %v", what, limit)
		return 0
	}
}

// TestSignalWhileTheRecordIsWrittenLeavesATrueRecord: SIGTERM while a
// large record is being written (held at its first open by fanotify), with
// stderr stalled, ends the run with 143 without starting the command, and
// the record and the ledger's two lines say exactly that instead of "exec".
func TestSignalWhileTheRecordIsWrittenLeavesATrueRecord(t *testing.T) {
	harness.NeedRoot(t, "fanotify permission events need CAP_SYS_ADMIN")
	defaultSignals(t, unix.SIGTERM)
	for _, mode := range []string{"false", "true"} {
		t.Run("supervise="+mode, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "ran")
			s := newStalled(t, map[string]string{"PREFLIGHT_SUPERVISE": mode}, "touch", marker)
			hold := holdFirstOpen(t, s.prov)
			s.start(t)
			hold.wait(t, s.cmd)
			s.cmd.Process.Signal(unix.SIGTERM)
			hold.release(t)
			ws := waitBounded(t, s, 10*time.Second, "SIGTERM while the record is written")
			if ws.ExitStatus() != 143 {
				t.Fatalf("wait status %v, want exit 143", ws)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the command ran after SIGTERM")
			}
			wantNotStarted(t, "record", s.record(t), 143, 15, "SIGTERM")
			lines := s.ledgerLines(t)
			if len(lines) != 2 {
				t.Fatalf("ledger has %d lines, want 2 (the record at start, then what happened)", len(lines))
			}
			wantNotStarted(t, "second ledger line", lines[1], 143, 15, "never ran")
		})
	}
}

// TestStalledStderrHoldsUpNeitherTheCommandNorTheSignal: with stderr a pipe
// nobody reads and a provenance line over 64 KiB, the command still starts
// (gpu-preflight waits at most stall.Allowance for stderr, then drops log
// lines), and a SIGTERM still ends the run at once.
func TestStalledStderrHoldsUpNeitherTheCommandNorTheSignal(t *testing.T) {
	defaultSignals(t, unix.SIGTERM)
	for _, mode := range []string{"false", "true"} {
		t.Run("supervise="+mode+"/starts", func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "ran")
			s := startStalled(t, map[string]string{"PREFLIGHT_SUPERVISE": mode}, "touch", marker)
			started := time.Now()
			if ws := waitBounded(t, s, 15*time.Second, "stalled stderr"); ws.ExitStatus() != 0 {
				t.Fatalf("wait status %v, want 0", ws)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Fatal("the command did not run")
			}
			t.Logf("stalled stderr: the run took %v", time.Since(started).Round(time.Millisecond))
			if len(s.ledgerLines(t)) == 0 {
				t.Error("the ledger has no line: only stderr may be dropped")
			}
		})
		t.Run("supervise="+mode+"/SIGTERM", func(t *testing.T) {
			s := startStalled(t, map[string]string{"PREFLIGHT_SUPERVISE": mode}, "sleep", "30")
			waitPipeFull(t, s.cmd.Stderr.(*os.File)) // in the stalled write, or past it
			s.cmd.Process.Signal(unix.SIGTERM)
			// Well before the command's 30 s are up.
			ws := waitBounded(t, s, 20*time.Second, "SIGTERM with a stalled stderr")
			if !(ws.ExitStatus() == 143 || ws.Signaled() && ws.Signal() == unix.SIGTERM) {
				t.Fatalf("wait status %v, want 143 or killed by SIGTERM", ws)
			}
		})
	}
}

// TestStalledStderrSaysWhatItDropped: once the reader comes back, the next
// line is preceded by a warning that counts the lines dropped meanwhile.
// The command, supervised, acknowledges each SIGUSR1 the shim forwards to
// it; the shim logs at debug as it starts the command and after each
// forward, so the first acknowledged forward says a line was logged (and
// dropped) while nobody read.
func TestStalledStderrSaysWhatItDropped(t *testing.T) {
	defaultSignals(t, unix.SIGUSR1)
	r, w := onePagePipe(t)
	defer r.Close()
	dir := t.TempDir()
	s := &supervised{prov: t.TempDir()}
	s.cmd = exec.Command(shimPath, "--", "sh", "-c", `trap 'echo >> "$D/usr1"' USR1; touch "$D/ready"
while [ ! -e "$D/go" ]; do sleep 0.05; done`)
	s.cmd.Env = []string{"PATH=/usr/bin:/bin", "PREFLIGHT_PROVENANCE_DIR=" + s.prov, "PREFLIGHT_LOG_FORMAT=json",
		"PREFLIGHT_SUPERVISE=true", "PREFLIGHT_TERMINATION_LOG=", "PREFLIGHT_LOG_LEVEL=debug", "D=" + dir}
	for k, v := range bigRecordEnv() {
		s.cmd.Env = append(s.cmd.Env, k+"="+v)
	}
	s.cmd.Stderr = w
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			s.cmd.Wait()
		}
	})
	harness.WaitForFile(t, filepath.Join(dir, "ready"), func() string { return "(stderr is the pipe under test)" })
	acks := 0
	forward := func() {
		acks++
		if err := s.cmd.Process.Signal(unix.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		waitForLines(t, filepath.Join(dir, "usr1"), acks)
	}
	forward()

	// Read everything from now on; forward until the warning comes through.
	var mu sync.Mutex
	var logs strings.Builder
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 1<<16)
		for {
			n, err := r.Read(buf)
			mu.Lock()
			logs.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	const warning = "stderr was not being read: gpu-preflight dropped log lines rather than wait"
	for seen := false; !seen; {
		forward()
		mu.Lock()
		seen = strings.Contains(logs.String(), warning)
		mu.Unlock()
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitBounded(t, s, 30*time.Second, "stalled, then drained stderr")
	<-drained
	line := logLine(t, logs.String(), map[string]string{"level": "warn", "message": warning})
	if n, _ := line["droppedLines"].(float64); n < 1 {
		t.Errorf("droppedLines = %v, want at least 1", line["droppedLines"])
	}
	logLine(t, logs.String(), map[string]string{"message": "command finished"})
}

// waitPipeFull waits until the pipe of p has no room (poll(2) sees no
// POLLOUT): a write to it is stalled.
func waitPipeFull(t *testing.T, p *os.File) {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(p.Fd()), Events: unix.POLLOUT}}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if n, err := unix.Poll(fds, 0); err == nil && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the pipe did not fill within a minute")
		}
	}
}

// waitForLines waits until the file at path has n lines.
func waitForLines(t *testing.T, path string, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if b, _ := os.ReadFile(path); bytes.Count(b, []byte("\n")) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not reach %d lines within a minute", path, n)
		}
	}
}
