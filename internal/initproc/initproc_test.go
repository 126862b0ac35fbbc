package initproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
	"github.com/gpu-preflight/gpu-preflight/test/ptytest"
)

// The test binary plays the init when initEnv is set: it runs the command
// after "--" under Catch and Run, exits with its exit code and writes the
// Exit as JSON to the file initEnv names. So the package is tested as a
// process of its own (a signal sent to it reaches Run, not the test
// runner), without gpu-preflight's command line.
const initEnv = "INITPROC_TEST_EXIT_FILE"

// groupEnv=1 makes the init run the command with SignalGroup.
const groupEnv = "INITPROC_TEST_SIGNAL_GROUP"

func TestMain(m *testing.M) {
	if out := os.Getenv(initEnv); out != "" {
		os.Exit(playInit(out, os.Args[slices.Index(os.Args, "--")+1:]))
	}
	os.Exit(m.Run())
}

func playInit(out string, argv []string) int {
	in := Catch(jsonLines{})
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 127
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, initEnv+"=") })
	exit, err := in.Run(Command{Path: path, Argv: argv, Env: env, SignalGroup: os.Getenv(groupEnv) == "1"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 126
	}
	b, _ := json.Marshal(exit)
	if err := os.WriteFile(out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return exit.Code
}

// jsonLines logs each Event as a JSON line on stderr.
type jsonLines struct{}

func (jsonLines) Log(e Event) {
	m := map[string]any{"warning": e.Warning, "message": e.Msg, "signal": e.Signal, "pid": e.PID, "command": e.Command}
	if e.Err != nil {
		m["error"] = e.Err.Error()
	}
	b, _ := json.Marshal(m)
	fmt.Fprintf(os.Stderr, "%s\n", b)
}

// initProc is the test binary started as an init.
type initProc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	exitFile       string
}

// newInit prepares the test binary as an init running argv, with env added
// to the environment; the caller may adjust cmd before start.
func newInit(t *testing.T, env map[string]string, argv ...string) *initProc {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &initProc{exitFile: filepath.Join(t.TempDir(), "exit.json")}
	p.cmd = exec.Command(self, append([]string{"--"}, argv...)...)
	p.cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", initEnv + "=" + p.exitFile}
	for k, v := range env {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	return p
}

// startInit starts the test binary as an init running argv.
func startInit(t *testing.T, env map[string]string, argv ...string) *initProc {
	t.Helper()
	p := newInit(t, env, argv...)
	p.start(t)
	return p
}

// startShell starts a shell running script, which sets up what the init
// inherits (signal dispositions, descriptors) and then execs it as
// "$SELF" -- ARGV; env is added to the environment.
func startShell(t *testing.T, env map[string]string, script string) *initProc {
	t.Helper()
	p := newInit(t, env)
	p.cmd.Path, p.cmd.Args = "/bin/sh", []string{"/bin/sh", "-c", script}
	p.start(t)
	return p
}

func (p *initProc) start(t *testing.T) {
	t.Helper()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting the init: %v", err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
}

// wait returns the init's exit status, failing the test after a minute
// (or when a signal killed the init) and returns the Exit it reported.
func (p *initProc) wait(t *testing.T) (int, Exit) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		p.cmd.Process.Kill()
		<-done
		t.Fatalf("the init was still running after a minute; stderr:\n%s", p.stderr.String())
	}
	ws := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		t.Fatalf("the init was killed by %v; stderr:\n%s", ws.Signal(), p.stderr.String())
	}
	var exit Exit
	b, err := os.ReadFile(p.exitFile)
	if err == nil {
		err = json.Unmarshal(b, &exit)
	}
	if err != nil {
		t.Fatalf("the init reported no Exit (%v); stderr:\n%s", err, p.stderr.String())
	}
	return ws.ExitStatus(), exit
}

// defaultSignals catches sigs in the test process for the test's length,
// so that a signal the test runner inherited as ignored (`nohup go test`)
// is not ignored in the processes it starts (Go resets caught signals to
// the default before exec, and keeps ignored ones ignored).
func defaultSignals(t *testing.T, sigs ...os.Signal) {
	t.Helper()
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	t.Cleanup(func() { signal.Stop(ch) })
}

// TestRunReportsTheStatusOr128PlusN proves the exit-code rule: the
// command's status, or 128+N for signal N, with N in Exit.Signal.
func TestRunReportsTheStatusOr128PlusN(t *testing.T) {
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
			t.Parallel()
			p := startInit(t, nil, tt.argv...)
			code, exit := p.wait(t)
			if code != tt.code || exit != (Exit{Code: tt.code, Signal: tt.signal}) {
				t.Fatalf("exit %d, Exit %+v; want %d, signal %d; stderr:\n%s", code, exit, tt.code, tt.signal, p.stderr.String())
			}
		})
	}
}

// TestRunReportsACommandThatCannotStart: a missing executable is an error
// that Is os.ErrNotExist (a shell's 127), and no signal stays caught.
func TestRunReportsACommandThatCannotStart(t *testing.T) {
	in := Catch(nil)
	_, err := in.Run(Command{Path: filepath.Join(t.TempDir(), "missing"), Argv: []string{"missing"}})
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Run of a missing program: %v, want an error that Is os.ErrNotExist", err)
	}
}

// TestRunForwardsSignals proves a signal sent to the init reaches the
// command (its trap runs) and the init then exits with the command's
// status.
func TestRunForwardsSignals(t *testing.T) {
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
			p := startInit(t, map[string]string{"D": dir}, "sh", "-c", script)
			harness.WaitForFile(t, filepath.Join(dir, "ready"), p.stderr.String)
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code, _ := p.wait(t); code != 5 {
				t.Fatalf("exit %d, want the command's 5; stderr:\n%s", code, p.stderr.String())
			}
			got, _ := os.ReadFile(filepath.Join(dir, "got"))
			if string(got) != name+"\n" {
				t.Errorf("the command's trap saw %q, want %s once", got, name)
			}
		})
	}
}

// TestRunReapsOrphans proves the init adopts the command's orphaned
// descendants (it is a child subreaper) and reaps them: the orphan's parent
// becomes the init, and once the orphan exits no zombie is left in /proc
// while the command still runs.
func TestRunReapsOrphans(t *testing.T) {
	dir := t.TempDir()
	script := `sh -c 'sleep 0.3 & echo $! > "$D/orphan"'
o=$(cat "$D/orphan")
sed -n 's/^PPid:[[:space:]]*//p' /proc/$o/status > "$D/ppid"
sleep 1.5
if [ -e /proc/$o ]; then sed -n 's/^State:[[:space:]]*//p' /proc/$o/status > "$D/left"; fi
exit 0`
	p := startInit(t, map[string]string{"D": dir}, "sh", "-c", script)
	if code, _ := p.wait(t); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	ppid, err := os.ReadFile(filepath.Join(dir, "ppid"))
	if err != nil || strings.TrimSpace(string(ppid)) != strconv.Itoa(p.cmd.Process.Pid) {
		t.Fatalf("the orphan's parent was %q (%v), want the init, pid %d", ppid, err, p.cmd.Process.Pid)
	}
	if left, err := os.ReadFile(filepath.Join(dir, "left")); err == nil {
		t.Fatalf("the orphan was still in /proc 1.2 s after it exited, state %q: not reaped", left)
	}
	orphan, _ := os.ReadFile(filepath.Join(dir, "orphan"))
	reaped := false
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["message"] == "reaped an orphaned process" &&
			fmt.Sprint(m["pid"]) == strings.TrimSpace(string(orphan)) {
			reaped = true
		}
	}
	if !reaped {
		t.Errorf("no debug line about reaping pid %s in:\n%s", orphan, p.stderr.String())
	}
}

// TestRunGivesTheTerminalToTheCommand runs the init on a pseudo-terminal,
// as `docker run -it` does: the command gets its own process group and the
// terminal, so a Ctrl-C typed there reaches it once (from the terminal),
// not a second time forwarded by the init.
func TestRunGivesTheTerminalToTheCommand(t *testing.T) {
	master, slave := ptytest.Open(t)
	dir := t.TempDir()
	script := `trap 'echo INT >> "$D/got"' INT
set -- $(cat /proc/$$/stat | sed 's/^.*) //')
echo "$$ $3 $6" > "$D/ids"
touch "$D/ready"
while [ ! -e "$D/stop" ]; do sleep 0.05; done
exit 0`
	p := newInit(t, map[string]string{"D": dir}, "sh", "-c", script)
	p.cmd.Stdin = slave
	// A new session with the terminal as its controlling terminal: the
	// init's group is the terminal's foreground, as under a shell or docker.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	p.start(t)
	slave.Close()
	harness.WaitForFile(t, filepath.Join(dir, "ready"), p.stderr.String)
	ids, _ := os.ReadFile(filepath.Join(dir, "ids"))
	f := strings.Fields(string(ids)) // pid, pgrp, terminal's foreground pgrp
	if len(f) != 3 || f[1] != f[0] || f[2] != f[0] {
		t.Errorf("command pid, pgrp, foreground pgrp = %q; want its own group, in the foreground", ids)
	}
	if _, err := master.Write([]byte{0x03}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	// The trap has run once; a second SIGINT, forwarded, would come with it.
	harness.WaitForFile(t, filepath.Join(dir, "got"), p.stderr.String)
	os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644)
	if code, _ := p.wait(t); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	got, _ := os.ReadFile(filepath.Join(dir, "got"))
	if string(got) != "INT\n" {
		t.Errorf("the command saw SIGINT %d times (%q), want once", strings.Count(string(got), "INT"), got)
	}
}

// TestForwardedSignalsFollowTini pins the forwarding list: everything
// catchable except tini's exceptions and what the Go runtime or the C
// library use themselves.
func TestForwardedSignalsFollowTini(t *testing.T) {
	got := forwardedSignals(0)
	for _, s := range []syscall.Signal{unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2,
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
	// Unlike tini: gpu-preflight's own log writes raise it.
	if slices.Contains(got, os.Signal(unix.SIGPIPE)) {
		t.Error("SIGPIPE is forwarded: a closed stderr would kill the command")
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

// TestUnderNohupSIGHUPStaysIgnored starts the init with SIGHUP ignored, as
// nohup does: the command must inherit it ignored, as it would under exec,
// and a SIGHUP sent to the init must not end the command.
func TestUnderNohupSIGHUPStaysIgnored(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := `sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status > "$D/sigign"
touch "$D/ready"
while [ ! -e "$D/stop" ]; do sleep 0.05; done
exit 4`
	// The shell ignores SIGHUP and execs the init, which keeps its pid.
	p := startShell(t, map[string]string{"D": dir, "SELF": self, "SCRIPT": script},
		`trap "" HUP; exec "$SELF" -- sh -c "$SCRIPT"`)
	harness.WaitForFile(t, filepath.Join(dir, "ready"), p.stderr.String)
	b, _ := os.ReadFile(filepath.Join(dir, "sigign"))
	mask, err := strconv.ParseUint(strings.TrimSpace(string(b)), 16, 64)
	if err != nil || mask&(1<<(unix.SIGHUP-1)) == 0 {
		t.Errorf("the command's SigIgn is %q (%v): SIGHUP not ignored, unlike under exec", b, err)
	}
	if err := p.cmd.Process.Signal(unix.SIGHUP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644)
	if code, _ := p.wait(t); code != 4 {
		t.Fatalf("exit %d, want the command's 4 (SIGHUP must be ignored); stderr:\n%s", code, p.stderr.String())
	}
}

// TestWithStdinClosed: started with stdin closed, the command still
// starts, and gets what exec would give it: the Go runtime opens /dev/null
// on a standard descriptor that is closed at start-up (Go 1.22+,
// runtime/fds_unix.go), so that is what it inherits.
func TestWithStdinClosed(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := `[ "$(readlink /proc/$$/fd/0)" = /dev/null ] || { ls -l /proc/$$/fd/ >&2; exit 1; }; exit 7`
	p := startShell(t, map[string]string{"SELF": self, "SCRIPT": script},
		`exec "$SELF" -- sh -c "$SCRIPT" <&-`)
	if code, _ := p.wait(t); code != 7 {
		t.Fatalf("exit %d, want 7 (stdin /dev/null in the command); stderr:\n%s", code, p.stderr.String())
	}
}

// TestSignalGroupReachesTheCommandsWorkers: with SignalGroup, a SIGTERM
// sent to the init reaches a worker the command started in the background
// (in its process group) as well as the command; without it, only the
// command, as tini does by default, and the worker outlives the init.
func TestSignalGroupReachesTheCommandsWorkers(t *testing.T) {
	defaultSignals(t, unix.SIGTERM)
	for _, group := range []bool{true, false} {
		t.Run(fmt.Sprintf("SignalGroup=%v", group), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			script := `sleep 30 >/dev/null 2>&1 & echo $! > "$D/worker"
trap 'exit 5' TERM
touch "$D/ready"
while :; do sleep 0.05; done`
			env := map[string]string{"D": dir}
			if group {
				env[groupEnv] = "1"
			}
			p := startInit(t, env, "sh", "-c", script)
			harness.WaitForFile(t, filepath.Join(dir, "ready"), p.stderr.String)
			b, _ := os.ReadFile(filepath.Join(dir, "worker"))
			worker, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("worker pid %q: %v", b, err)
			}
			t.Cleanup(func() { unix.Kill(worker, unix.SIGKILL) })
			if err := p.cmd.Process.Signal(unix.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code, _ := p.wait(t); code != 5 {
				t.Fatalf("exit %d, want the command's 5; stderr:\n%s", code, p.stderr.String())
			}
			// Gone within 5 s when signalled; still there half a second
			// after the init exited when not.
			limit := 500 * time.Millisecond
			if group {
				limit = 5 * time.Second
			}
			gone := false
			for deadline := time.Now().Add(limit); time.Now().Before(deadline) && !gone; time.Sleep(20 * time.Millisecond) {
				gone = !running(worker)
			}
			if gone != group {
				t.Errorf("worker ended: %v, want %v", gone, group)
			}
		})
	}
}

// running reports whether pid is a live process: in /proc, and not a
// zombie waiting for a parent to reap it.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z'
}
