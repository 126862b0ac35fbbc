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
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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

// waitForFile polls for path, failing after ten seconds.
func waitForFile(t *testing.T, path string, s *supervised) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s did not appear within 10 s; shim stderr:\n%s", path, s.stderr.String())
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

// loggedEnd is the run as its log tells it: the record of its one
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
	schematest.Validate(t, raws[0])
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
			waitForFile(t, filepath.Join(dir, "ready"), s)
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

// TestSuperviseReapsOrphans proves gpu-preflight adopts the command's
// orphaned descendants (it is a child subreaper) and reaps them: the
// orphan's parent becomes the shim, and once the orphan exits no zombie is
// left in /proc while the command still runs.
func TestSuperviseReapsOrphans(t *testing.T) {
	dir := t.TempDir()
	script := `sh -c 'sleep 0.3 & echo $! > "$D/orphan"'
o=$(cat "$D/orphan")
sed -n 's/^PPid:[[:space:]]*//p' /proc/$o/status > "$D/ppid"
sleep 1.5
if [ -e /proc/$o ]; then sed -n 's/^State:[[:space:]]*//p' /proc/$o/status > "$D/left"; fi
exit 0`
	s := startSupervised(t, map[string]string{"D": dir}, "sh", "-c", script)
	if code := s.wait(t); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, s.stderr.String())
	}
	ppid, err := os.ReadFile(filepath.Join(dir, "ppid"))
	if err != nil || strings.TrimSpace(string(ppid)) != strconv.Itoa(s.cmd.Process.Pid) {
		t.Fatalf("the orphan's parent was %q (%v), want the shim, pid %d", ppid, err, s.cmd.Process.Pid)
	}
	if left, err := os.ReadFile(filepath.Join(dir, "left")); err == nil {
		t.Fatalf("the orphan was still in /proc 1.2 s after it exited, state %q: not reaped", left)
	}
	orphan, _ := os.ReadFile(filepath.Join(dir, "orphan"))
	reaped := false
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["message"] == "reaped an orphaned process" &&
			fmt.Sprint(m["pid"]) == strings.TrimSpace(string(orphan)) {
			reaped = true
		}
	}
	if !reaped {
		t.Errorf("no debug line about reaping pid %s in:\n%s", orphan, s.stderr.String())
	}
}

// TestSuperviseGivesTheTerminalToTheCommand runs the shim on a
// pseudo-terminal, as `docker run -it` does: the command gets its own
// process group and the terminal, so a Ctrl-C typed there reaches it once
// (from the terminal), not a second time forwarded by gpu-preflight.
func TestSuperviseGivesTheTerminalToTheCommand(t *testing.T) {
	master, slave := openPTY(t)
	dir := t.TempDir()
	script := `trap 'echo INT >> "$D/got"' INT
set -- $(cat /proc/$$/stat | sed 's/^.*) //')
echo "$$ $3 $6" > "$D/ids"
touch "$D/ready"
while [ ! -e "$D/stop" ]; do sleep 0.05; done
exit 0`
	s := &supervised{prov: t.TempDir()}
	s.ledger = filepath.Join(t.TempDir(), "runs.jsonl")
	s.cmd = exec.Command(shimPath, "--", "sh", "-c", script)
	s.cmd.Env = []string{"PATH=/usr/bin:/bin", "D=" + dir, "PREFLIGHT_SUPERVISE=true", "PREFLIGHT_PROVENANCE_DIR=" + s.prov,
		"PREFLIGHT_LOG_FORMAT=json", "PREFLIGHT_LOG_LEVEL=debug"}
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = slave, &s.stdout, &s.stderr
	// A new session with the terminal as its controlling terminal: the
	// shim's group is the terminal's foreground, as under a shell or docker.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			s.cmd.Wait()
		}
	})
	waitForFile(t, filepath.Join(dir, "ready"), s)
	ids, _ := os.ReadFile(filepath.Join(dir, "ids"))
	f := strings.Fields(string(ids)) // pid, pgrp, terminal's foreground pgrp
	if len(f) != 3 || f[1] != f[0] || f[2] != f[0] {
		t.Errorf("command pid, pgrp, foreground pgrp = %q; want its own group, in the foreground", ids)
	}
	if _, err := master.Write([]byte{0x03}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644)
	if code := s.wait(t); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, s.stderr.String())
	}
	got, _ := os.ReadFile(filepath.Join(dir, "got"))
	if string(got) != "INT\n" {
		t.Errorf("the command saw SIGINT %d times (%q), want once", strings.Count(string(got), "INT"), got)
	}
	checkOutcome(t, s.record(t), 0, 0)
}

// openPTY opens a pseudo-terminal pair; the test fails if the system has
// none, since the terminal handling cannot be proved without one.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v (this test needs a pseudo-terminal)", err)
	}
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	return master, slave
}

// TestForwardedSignalsFollowTini pins the forwarding list: everything
// catchable except tini's exceptions and what the Go runtime or the C
// library use themselves.
func TestForwardedSignalsFollowTini(t *testing.T) {
	got := forwardedSignals(0)
	for _, s := range []syscall.Signal{unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2, unix.SIGPIPE,
		unix.SIGALRM, unix.SIGTERM, unix.SIGCONT, unix.SIGTSTP, unix.SIGWINCH, unix.SIGPWR, syscall.Signal(34), syscall.Signal(64)} {
		if !slices.Contains(got, os.Signal(s)) {
			t.Errorf("%v is not forwarded", s)
		}
	}
	for _, s := range []syscall.Signal{unix.SIGKILL, unix.SIGSTOP, unix.SIGCHLD, unix.SIGFPE, unix.SIGILL, unix.SIGSEGV,
		unix.SIGBUS, unix.SIGABRT, unix.SIGTRAP, unix.SIGSYS, unix.SIGTTIN, unix.SIGTTOU, unix.SIGURG} {
		if slices.Contains(got, os.Signal(s)) {
			t.Errorf("%v is forwarded; tini keeps it", s)
		}
	}
}

func TestInheritedIgnoredSignalsAreNotForwarded(t *testing.T) {
	got := forwardedSignals(1<<(unix.SIGHUP-1) | 1<<(unix.SIGINT-1))
	if slices.Contains(got, os.Signal(unix.SIGHUP)) || slices.Contains(got, os.Signal(unix.SIGINT)) {
		t.Error("an ignored SIGHUP or SIGINT is forwarded")
	}
	if !slices.Contains(got, os.Signal(unix.SIGTERM)) {
		t.Error("SIGTERM is not forwarded")
	}
}

// TestSuperviseUnderNohupKeepsSIGHUPIgnored starts the shim with SIGHUP
// ignored, as nohup does: the command must inherit it ignored, as it would
// under exec, and a SIGHUP sent to the shim must not end the command.
func TestSuperviseUnderNohupKeepsSIGHUPIgnored(t *testing.T) {
	dir := t.TempDir()
	script := `sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status > "$D/sigign"
touch "$D/ready"
while [ ! -e "$D/stop" ]; do sleep 0.05; done
exit 4`
	// The shell ignores SIGHUP and execs the shim, which keeps its pid.
	s := startProgram(t, map[string]string{"D": dir, "SHIM": shimPath, "SCRIPT": script},
		"/bin/sh", "-c", `trap "" HUP; exec "$SHIM" -- sh -c "$SCRIPT"`)
	waitForFile(t, filepath.Join(dir, "ready"), s)
	b, _ := os.ReadFile(filepath.Join(dir, "sigign"))
	mask, err := strconv.ParseUint(strings.TrimSpace(string(b)), 16, 64)
	if err != nil || mask&(1<<(unix.SIGHUP-1)) == 0 {
		t.Errorf("the command's SigIgn is %q (%v): SIGHUP not ignored, unlike under exec", b, err)
	}
	if err := s.cmd.Process.Signal(unix.SIGHUP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644)
	if code := s.wait(t); code != 4 {
		t.Fatalf("exit %d, want the command's 4 (SIGHUP must be ignored); stderr:\n%s", code, s.stderr.String())
	}
}

// TestSuperviseWithStdinClosed: started with stdin closed, the command
// still starts, and gets what exec would give it: the Go runtime opens
// /dev/null on a standard descriptor that is closed at start-up (Go 1.22+,
// runtime/fds_unix.go), so that is what it inherits.
func TestSuperviseWithStdinClosed(t *testing.T) {
	script := `[ "$(readlink /proc/$$/fd/0)" = /dev/null ] || { ls -l /proc/$$/fd/ >&2; exit 1; }; exit 7`
	s := startProgram(t, map[string]string{"SHIM": shimPath, "SCRIPT": script},
		"/bin/sh", "-c", `exec "$SHIM" -- sh -c "$SCRIPT" <&-`)
	if code := s.wait(t); code != 7 {
		t.Fatalf("exit %d, want 7 (stdin /dev/null in the command); stderr:\n%s", code, s.stderr.String())
	}
}
