package main

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// defaultSignals gives the programs this test starts the default action
// for sigs, whatever this test process inherited. A signal ignored when
// `go test` started (nohup ignores SIGHUP; a script's "&" ignores SIGINT and
// SIGQUIT) is inherited ignored by every child: a shim started from here
// would then, rightly, keep it ignored, and a test that sends it would wait
// for an exit that never comes. Catching them here (signal.Notify) makes
// fork+exec reset them to the default in the child; the cleanup restores
// what the process had.
func defaultSignals(t *testing.T, sigs ...os.Signal) {
	t.Helper()
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	t.Cleanup(func() { signal.Stop(ch) })
}

// TestSignalTestsResetInheritedDispositions runs this package's signal
// tests the way people start suites, with SIGHUP, SIGINT and SIGQUIT
// ignored (`nohup make test &`, `make test &` in a script): they must pass
// as they do from a terminal, not hang on a signal the shim inherited as
// ignored.
func TestSignalTestsResetInheritedDispositions(t *testing.T) {
	if os.Getenv("GPU_PREFLIGHT_NESTED_TEST") != "" {
		t.Skip("already the nested run")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The nested run's own -test.timeout guards against a hang (a test
	// waiting on an ignored signal): what is left of this test's deadline,
	// less a tenth for this process to report it.
	limit := 10 * time.Minute
	if d, ok := t.Deadline(); ok {
		limit = time.Until(d) * 9 / 10
	}
	cmd := exec.Command("/bin/sh", "-c", `trap "" HUP INT QUIT; exec "$@"`, "sh", self,
		"-test.run=^(TestSuperviseForwardsSignals|TestNoSignalIsLostDuringThePreflight)$", "-test.count=1",
		"-test.timeout="+limit.String())
	cmd.Env = append(os.Environ(), "GPU_PREFLIGHT_NESTED_TEST=1", "GPU_PREFLIGHT_SWEEP_TRIES=30")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the signal tests failed with SIGHUP, SIGINT and SIGQUIT ignored (a panic after %v: a test waited on an ignored signal): %v\n%s", limit, err, out)
	}
}

// TestNoSignalIsLostDuringThePreflight sweeps SIGTERM over the whole
// preflight: try i sends it i/tries of the way through 1.5 times the
// preflight's median length, from before the Go runtime starts to after the
// exec. The length is measured again as the sweep goes, so the sweep stays
// on the preflight as the machine's load changes, and it must land on both
// sides of the exec. The tries run in a random order until they are done or
// the mode's share of time is spent (on a loaded machine, where each run is
// longer), at least minTries of them: fewer points over the same preflight.
// Whenever it lands, the signal must end the run: gpu-preflight exits 143
// (or dies of it before its handler exists), or the command, which got it,
// is killed by it. A run that ends 0 lost the signal, and the job would
// have started on a node being drained. When the command never ran, a
// record written before the signal must say so (outcome.notStarted),
// except for a run the signal killed by its default action in the
// microseconds between the gate's release and execve(2), which the log
// counts.
func TestNoSignalIsLostDuringThePreflight(t *testing.T) {
	defaultSignals(t, unix.SIGTERM)
	tries := 500
	if n, err := strconv.Atoi(os.Getenv("GPU_PREFLIGHT_SWEEP_TRIES")); err == nil && n > 0 {
		tries = n
	}
	// Each of the three modes may take a minute, and no more than a
	// twelfth of what is left of the test binary's deadline, leaving most
	// of it to the package's other tests.
	budget := time.Minute
	if d, ok := t.Deadline(); ok {
		budget = min(budget, time.Until(d)/12)
	}
	// With no stored record (no provenance file, no ledger) an exec'ing
	// preflight catches no signal (Config.catchesSignals): the kernel's
	// default action must end it just as surely.
	for _, mode := range []struct{ name, supervise string }{
		{"supervise=false", "false"}, {"supervise=true", "true"}, {"no-record", "false"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			env := []string{"PATH=/usr/bin:/bin", "PREFLIGHT_SUPERVISE=" + mode.supervise, "PREFLIGHT_LOG_FORMAT=json",
				"PREFLIGHT_LEDGER=" + filepath.Join(dir, "runs.jsonl"), "PREFLIGHT_TERMINATION_LOG="}
			if mode.name == "no-record" {
				env = []string{"PATH=/usr/bin:/bin", "PREFLIGHT_SUPERVISE=false", "PREFLIGHT_LOG_FORMAT=json", "PREFLIGHT_TERMINATION_LOG="}
			}
			// The command is a private copy of sleep, watched for its
			// execve(2), which says the command started even when the
			// signal killed it at once.
			command := copyOfSleep(t, dir)
			opens := watchOpens(t, command)
			start := func(i int) (*exec.Cmd, string) {
				prov := filepath.Join(dir, "prov-"+strconv.Itoa(i))
				c := exec.Command(shimPath, "--", command, "3")
				c.Env = append(env, "PREFLIGHT_PROVENANCE_DIR="+prov)
				if mode.name == "no-record" {
					c.Env = append(env, "PREFLIGHT_PROVENANCE_DIR=off")
				}
				if err := c.Start(); err != nil {
					t.Fatal(err)
				}
				return c, prov
			}
			// measure times one preflight, from its start to the command's
			// exec; lengths keeps the latest few.
			var lengths []time.Duration
			measure := func() {
				opens.seen()
				c, _ := start(-1)
				t0 := time.Now()
				if !opens.wait(t, c.Process.Pid) {
					c.Wait()
					t.Fatalf("gpu-preflight exited (%v) without starting the command", c.ProcessState)
				}
				lengths = append(lengths, time.Since(t0))
				if len(lengths) > 7 {
					lengths = lengths[1:]
				}
				c.Process.Kill()
				c.Wait()
			}
			span := func() time.Duration {
				s := slices.Clone(lengths)
				slices.Sort(s)
				return s[len(s)/2] * 3 / 2
			}
			for range 7 {
				measure()
			}
			lost, untruthful, window, before, after := 0, 0, 0, 0, 0
			var spans []time.Duration
			order, began := rand.Perm(tries), time.Now()
			for n, i := range order {
				if n >= min(tries, minTries) && time.Since(began) > budget {
					break
				}
				if n%10 == 9 {
					measure()
				}
				sp := span()
				spans = append(spans, sp)
				delay := sp * time.Duration(i) / time.Duration(tries)
				opens.seen()
				c, prov := start(i)
				time.Sleep(delay)
				c.Process.Signal(unix.SIGTERM)
				ee, ok := waitSignalled(t, c)
				if !ok {
					lost++
					t.Errorf("try %d (SIGTERM at %v): the run did not end by the signal: %v", i, delay, c.ProcessState)
					continue
				}
				why := notStartedIn(t, prov)
				killed := ee.Sys().(syscall.WaitStatus).Signaled()
				started := opens.seen()
				if started {
					after++
				} else {
					before++
				}
				if mode.name == "no-record" && !started && !killed {
					// Exited 143: a handler caught the signal, which this
					// mode leaves to the kernel.
					t.Errorf("try %d: gpu-preflight exited %d: the signal was caught, want the kernel's default action", i, ee.ExitCode())
				}
				switch {
				case !started && why == "" && killed:
					// The one window the gate cannot cover: the
					// microseconds between its release and execve(2),
					// where the signal takes its default action (see
					// signalGate.release). Not lost: the run died of it.
					window++
				case !started && why == "":
					untruthful++
					t.Errorf("try %d: the command never ran, but the record says it did", i)
				case started && why != "" && why != "n/a":
					untruthful++
					t.Errorf("try %d: the command ran, but the record says %q", i, why)
				}
			}
			slices.Sort(spans)
			t.Logf("%d of %d SIGTERMs in %v, over the first %v..%v of the run: %d before the exec, %d after; %d lost, %d untruthful records, %d killed between the release and the exec",
				len(spans), tries, time.Since(began).Round(time.Second), spans[0], spans[len(spans)-1], before, after, lost, untruthful, window)
			if before == 0 || after == 0 {
				t.Errorf("the sweep landed on one side of the exec only (%d before, %d after): it did not cover the preflight", before, after)
			}
		})
	}
}

// minTries is the fewest tries of a sweep a loaded machine may cut it to.
const minTries = 100

// waitSignalled waits for a run sent SIGTERM and reports whether the
// signal ended it: gpu-preflight's 143, or death by SIGTERM. A lost signal
// shows as the command, sleep 3, exiting 0. A run still alive long after
// that is hung: it is killed and the test stops.
func waitSignalled(t *testing.T, c *exec.Cmd) (*exec.ExitError, bool) {
	t.Helper()
	const hang = time.Minute
	timer := time.AfterFunc(hang, func() { c.Process.Kill() })
	err := c.Wait()
	if !timer.Stop() {
		t.Fatalf("the run was still alive %v after SIGTERM, with a command that sleeps 3 s: killed", hang)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return nil, false
	}
	return ee, ee.ExitCode() == 143 || ee.Sys().(syscall.WaitStatus).Signal() == unix.SIGTERM
}

// notStartedIn returns outcome.notStarted of the one record in dir, "n/a"
// when there is none (the signal came first), "" when the record does not
// say the command did not start.
func notStartedIn(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		return "n/a"
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Outcome *struct {
			NotStarted string `json:"notStarted"`
		} `json:"outcome"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("%s: %v", files[0], err)
	}
	if rec.Outcome == nil {
		return ""
	}
	return rec.Outcome.NotStarted
}

// copyOfSleep copies the system's sleep into dir, so that only the runs of
// one test open it.
func copyOfSleep(t *testing.T, dir string) string {
	t.Helper()
	src, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "command")
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// opens reports the executions of one file, read from fanotify: the
// preflight itself opens the command to read its "#!" line, so only an
// open for execve(2) (FAN_OPEN_EXEC) says the command started.
type opens struct {
	fd  int
	buf []byte
}

// watchOpens watches path with fanotify for FAN_OPEN_EXEC; it needs
// CAP_SYS_ADMIN, so the test fails without root.
func watchOpens(t *testing.T, path string) *opens {
	t.Helper()
	fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC|unix.FAN_NONBLOCK, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		t.Fatalf("fanotify (run as root): %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.FanotifyMark(fd, unix.FAN_MARK_ADD, unix.FAN_OPEN_EXEC, unix.AT_FDCWD, path); err != nil {
		t.Fatalf("fanotify mark %s: %v", path, err)
	}
	return &opens{fd: fd, buf: make([]byte, 4096)}
}

// seen reports whether the file was executed since the last call.
func (o *opens) seen() bool {
	seen := false
	for {
		n, err := unix.Read(o.fd, o.buf)
		if n <= 0 || err != nil {
			return seen
		}
		for off := 0; off+int(unsafe.Sizeof(unix.FanotifyEventMetadata{})) <= n; {
			meta := (*unix.FanotifyEventMetadata)(unsafe.Pointer(&o.buf[off]))
			if meta.Fd >= 0 {
				unix.Close(int(meta.Fd))
			}
			seen = true
			off += int(meta.Event_len)
		}
	}
}

// wait blocks until the file is opened (true) or process pid exits
// (false), whichever comes first.
func (o *opens) wait(t *testing.T, pid int) bool {
	t.Helper()
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open: %v", err)
	}
	defer unix.Close(pidfd)
	fds := []unix.PollFd{{Fd: int32(o.fd), Events: unix.POLLIN}, {Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		if o.seen() {
			return true
		}
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			t.Fatalf("poll: %v", err)
		}
		if fds[1].Revents != 0 {
			return o.seen()
		}
	}
}
