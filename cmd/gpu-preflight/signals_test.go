package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

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
	cmd := exec.Command("/bin/sh", "-c", `trap "" HUP INT QUIT; exec "$@"`, "sh", self,
		"-test.run=^(TestSuperviseForwardsSignals|TestNoSignalIsLostDuringThePreflight)$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GPU_PREFLIGHT_NESTED_TEST=1", "GPU_PREFLIGHT_SWEEP_TRIES=50")
	cmd.Dir = "."
	done := make(chan error, 1)
	var out []byte
	go func() { var err error; out, err = cmd.CombinedOutput(); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the signal tests failed with SIGHUP, SIGINT and SIGQUIT ignored: %v\n%s", err, out)
		}
	case <-time.After(45 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the signal tests did not finish within 45 s with SIGHUP, SIGINT and SIGQUIT ignored (a test waits on an ignored signal):\n%s", out)
	}
}

// TestNoSignalIsLostDuringThePreflight sweeps SIGTERM over the whole
// preflight: try i sends it i/tries of the way through 1.5 times the
// preflight's median length, from before the Go runtime starts to after the
// exec. Whenever it lands, it must end the run: gpu-preflight exits 143 (or
// dies of it before its handler exists), or the command, which got it, is
// killed by it. A run that ends 0 lost the signal, and the job would have
// started on a node being drained. When the command never ran, a record
// written before the signal must say so (outcome.notStarted), except for a
// run the signal killed by its default action in the microseconds between
// the gate's release and execve(2), which the log counts.
func TestNoSignalIsLostDuringThePreflight(t *testing.T) {
	defaultSignals(t, unix.SIGTERM)
	tries := 500
	if n, err := strconv.Atoi(os.Getenv("GPU_PREFLIGHT_SWEEP_TRIES")); err == nil && n > 0 {
		tries = n
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
			// The command is a private copy of sleep, watched with inotify:
			// execve(2) opens it, nothing else does, so an IN_OPEN says the
			// command started even when the signal killed it at once.
			command := copyOfSleep(t, dir)
			opened := watchOpens(t, command)
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
			// The preflight's length here: from start to the command's exec.
			var lengths []time.Duration
			for i := 0; i < 7; i++ {
				opened()
				c, _ := start(-1 - i)
				t0 := time.Now()
				for !opened() && time.Since(t0) < 5*time.Second {
					time.Sleep(50 * time.Microsecond)
				}
				lengths = append(lengths, time.Since(t0))
				c.Process.Kill()
				c.Wait()
			}
			slices.Sort(lengths)
			span := lengths[len(lengths)/2] * 3 / 2
			lost, untruthful, window := 0, 0, 0
			for i := 0; i < tries; i++ {
				opened()
				c, prov := start(i)
				time.Sleep(span * time.Duration(i) / time.Duration(tries))
				c.Process.Signal(unix.SIGTERM)
				// A signal that lands during a record write ends the run
				// once the write is done, however slow; the guard is against
				// a hang. A lost signal still shows: the command, sleep 3,
				// then exits 0.
				guard := time.Minute
				timer := time.AfterFunc(guard, func() { c.Process.Kill() })
				err := c.Wait()
				killedByUs := !timer.Stop()
				var ee *exec.ExitError
				ended := errors.As(err, &ee) && !killedByUs &&
					(ee.ExitCode() == 143 || ee.Sys().(syscall.WaitStatus).Signal() == unix.SIGTERM)
				if !ended {
					lost++
					t.Errorf("try %d (SIGTERM at %v): the run did not end by the signal (%v, killed after %v: %v)",
						i, span*time.Duration(i)/time.Duration(tries), err, guard, killedByUs)
					continue
				}
				why := notStartedIn(t, prov)
				killed := ee.Sys().(syscall.WaitStatus).Signaled()
				started := opened()
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
			t.Logf("%d SIGTERMs over the first %v of the run: %d lost, %d untruthful records, %d killed between the release and the exec",
				tries, span, lost, untruthful, window)
		})
	}
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

// watchOpens watches path with inotify and returns a function that reports
// whether it was opened since the last call.
func watchOpens(t *testing.T, path string) func() bool {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_OPEN); err != nil {
		t.Fatalf("inotify watch %s: %v", path, err)
	}
	buf := make([]byte, 4096)
	return func() bool {
		seen := false
		for {
			n, err := unix.Read(fd, buf)
			if n <= 0 || err != nil {
				return seen
			}
			seen = true
		}
	}
}
