package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// TestSignalDuringTheRecordWriteIsRecorded holds the shim inside the open
// of its record's first file (a fanotify permission event, which blocks
// the open until answered), sends SIGTERM, and lets the open go on, with a
// busy loop on every core. Whatever the interleaving, the command never
// runs and the run ends in a record and a ledger line that say so:
// gpu-preflight exits 143 and the last word on the run is outcome.notStarted.
// GPU_PREFLIGHT_SIGNAL_WRITE_RUNS sets the runs per mode (the 200).
func TestSignalDuringTheRecordWriteIsRecorded(t *testing.T) {
	harness.NeedRoot(t, "fanotify permission events need CAP_SYS_ADMIN")
	defaultSignals(t, unix.SIGTERM)
	runs := 25
	if n, err := strconv.Atoi(os.Getenv("GPU_PREFLIGHT_SIGNAL_WRITE_RUNS")); err == nil && n > 0 {
		runs = n
	}
	busyEveryCore(t)
	for _, supervise := range []string{"false", "true"} {
		t.Run("supervise="+supervise, func(t *testing.T) {
			dir := t.TempDir()
			command := copyOfSleep(t, dir)
			opened := watchOpens(t, command)
			for i := range runs {
				prov := filepath.Join(dir, "prov-"+strconv.Itoa(i))
				ledger := filepath.Join(dir, "ledger-"+strconv.Itoa(i)+".jsonl")
				if err := os.Mkdir(prov, 0o750); err != nil {
					t.Fatal(err)
				}
				hold := holdFirstOpen(t, prov)
				var stderr bytes.Buffer
				c := exec.Command(shimPath, "--", command, "3")
				c.Env = []string{"PATH=/usr/bin:/bin", "PREFLIGHT_SUPERVISE=" + supervise, "PREFLIGHT_LOG_FORMAT=json",
					"PREFLIGHT_PROVENANCE_DIR=" + prov, "PREFLIGHT_LEDGER=" + ledger, "PREFLIGHT_TERMINATION_LOG="}
				c.Stderr = &stderr
				if err := c.Start(); err != nil {
					t.Fatal(err)
				}
				hold.wait(t, c)
				if err := c.Process.Signal(unix.SIGTERM); err != nil {
					t.Fatal(err)
				}
				hold.release(t)
				if ws, started := waitStatus(t, c), opened.seen(); !ws.Exited() || ws.ExitStatus() != 143 || started {
					t.Fatalf("run %d: %s, command started %v: want exit 143 and the command never run\nstderr:\n%s", i, describe(ws), started, stderr.String())
				}
				if why := notStartedIn(t, prov); why == "" || why == "n/a" {
					t.Fatalf("run %d: the record says %q: it must say the command never ran\nstderr:\n%s", i, why, stderr.String())
				}
				if why := lastLedgerNotStarted(t, ledger); why == "" {
					t.Fatalf("run %d: the ledger's last line does not say the command never ran\nstderr:\n%s", i, stderr.String())
				}
			}
			t.Logf("%d runs stopped at the record's first file and signalled: every one exited 143 with the record and the ledger saying the command never ran", runs)
		})
	}
}

// busyEveryCore runs a busy loop per CPU until the test ends.
func busyEveryCore(t *testing.T) {
	t.Helper()
	for range runtime.NumCPU() {
		c := exec.Command("/bin/sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
}

// firstOpen is a fanotify group that holds the first open of a file in one
// directory until release answers it.
type firstOpen struct {
	fd    int
	event int // the opened file's descriptor in the event, -1 before wait
}

func holdFirstOpen(t *testing.T, dir string) *firstOpen {
	t.Helper()
	fd, err := unix.FanotifyInit(unix.FAN_CLASS_CONTENT|unix.FAN_CLOEXEC, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		t.Fatalf("fanotify_init: %v", err)
	}
	h := &firstOpen{fd: fd, event: -1}
	t.Cleanup(func() { h.close() })
	if err := unix.FanotifyMark(fd, unix.FAN_MARK_ADD, unix.FAN_OPEN_PERM|unix.FAN_EVENT_ON_CHILD, unix.AT_FDCWD, dir); err != nil {
		t.Fatalf("fanotify_mark %s: %v", dir, err)
	}
	return h
}

// wait blocks until the shim opens a file in the directory; a shim that
// exits first fails the test.
func (h *firstOpen) wait(t *testing.T, c *exec.Cmd) {
	t.Helper()
	buf := make([]byte, 4096)
	deadline := time.Now().Add(time.Minute) // a hang guard, not a measure
	for {
		fds := []unix.PollFd{{Fd: int32(h.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 100)
		if err != nil && !errors.Is(err, unix.EINTR) {
			t.Fatalf("poll fanotify: %v", err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatal("the shim opened no file in its provenance directory within a minute")
		}
		if err := syscall.Kill(c.Process.Pid, 0); err != nil {
			t.Fatalf("the shim ended before it opened its record's first file: %v", err)
		}
	}
	n, err := unix.Read(h.fd, buf)
	if err != nil || n < int(unsafe.Sizeof(unix.FanotifyEventMetadata{})) {
		t.Fatalf("read fanotify: %d bytes, %v", n, err)
	}
	meta := (*unix.FanotifyEventMetadata)(unsafe.Pointer(&buf[0]))
	if meta.Mask&unix.FAN_OPEN_PERM == 0 || int(meta.Pid) != c.Process.Pid {
		t.Fatalf("fanotify event %#x from pid %d, want the shim's (%d) open", meta.Mask, meta.Pid, c.Process.Pid)
	}
	h.event = int(meta.Fd)
}

// release lets the held open go on and stops holding the directory.
func (h *firstOpen) release(t *testing.T) {
	t.Helper()
	resp := unix.FanotifyResponse{Fd: int32(h.event), Response: unix.FAN_ALLOW}
	if _, err := unix.Write(h.fd, (*[unsafe.Sizeof(resp)]byte)(unsafe.Pointer(&resp))[:]); err != nil {
		t.Fatalf("answer fanotify: %v", err)
	}
	h.close()
}

func (h *firstOpen) close() {
	if h.event >= 0 {
		unix.Close(h.event)
		h.event = -1
	}
	if h.fd >= 0 {
		unix.Close(h.fd) // answers whatever else is pending: allowed
		h.fd = -1
	}
}

// waitStatus waits for c; one still running after a minute is killed.
func waitStatus(t *testing.T, c *exec.Cmd) syscall.WaitStatus {
	t.Helper()
	timer := time.AfterFunc(time.Minute, func() { c.Process.Kill() })
	defer timer.Stop()
	if err := c.Wait(); err != nil && !errors.As(err, new(*exec.ExitError)) {
		t.Fatal(err)
	}
	return c.ProcessState.Sys().(syscall.WaitStatus)
}

func describe(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + ws.Signal().String()
	}
	return "exit " + strconv.Itoa(ws.ExitStatus())
}

// lastLedgerNotStarted returns outcome.notStarted of the ledger's last line.
func lastLedgerNotStarted(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	defer f.Close()
	var last []byte
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		last = append(last[:0], s.Bytes()...)
	}
	var line struct {
		Outcome *struct {
			NotStarted string `json:"notStarted"`
		} `json:"outcome"`
	}
	if err := json.Unmarshal(last, &line); err != nil {
		t.Fatalf("ledger %s: last line %q: %v", path, last, err)
	}
	if line.Outcome == nil {
		return ""
	}
	return line.Outcome.NotStarted
}
