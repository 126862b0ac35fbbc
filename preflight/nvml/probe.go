package nvml

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// ProbeName is the probe's file name, beside the shim or on PATH.
const ProbeName = "gpu-preflight-nvml"

// DefaultTimeout is PREFLIGHT_NVML_TIMEOUT's default (README, "Configuration").
const DefaultTimeout = 10 * time.Second

// Output limits: the document is a few KiB even for 16 GPUs; stderr is kept
// for the log, whose lines stay under 8 KiB.
const (
	maxStdout = 1 << 20
	MaxStderr = 4 << 10
)

// Options say how to run the probe.
type Options struct {
	Library string        // PREFLIGHT_NVML_LIBRARY; "" is the probe's default, libnvidia-ml.so.1
	Timeout time.Duration // PREFLIGHT_NVML_TIMEOUT; 0 is DefaultTimeout
	Path    string        // the one probe file tried after the memfd, instead of the fallbacks
	NoMemfd bool          // skip the embedded copy
	Env     []string      // the environment the probe's share is taken from (ProbeEnviron); nil is this process's
}

// Result is what one probe run produced.
type Result struct {
	Document *Document  // nil when it gave none (timeout, crash, garbage, no probe)
	NVML     facts.NVML // how the run went, for the record
	Stderr   string     // the start of the probe's stderr (MaxStderr bytes), for the log
}

// Probe runs the NVML probe (embedded in a memfd, else opts.Path, else beside
// the executable, then on PATH) and waits for its document at most
// opts.Timeout, then kills and reaps its process group. Starting it costs
// milliseconds: callers run it only on driver evidence.
func Probe(ctx context.Context, opts Options) Result {
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	if opts.Library != "" {
		env = append(withoutVar(env, "PREFLIGHT_NVML_LIBRARY"), "PREFLIGHT_NVML_LIBRARY="+opts.Library)
	}
	opts.Env = env
	x := Execute(ctx, nil, opts)
	res := Result{NVML: facts.NVML{Via: x.Via, Embedded: Embedded()}, Stderr: x.Stderr}
	if x.Started() {
		res.NVML.DurationMillis = float64(x.Duration.Microseconds()) / 1000
	}
	ending, why := x.Ended("the NVML probe", "PREFLIGHT_NVML_TIMEOUT")
	res.NVML.Error = why
	switch ending {
	case Unstarted:
		res.NVML.Outcome = facts.ProbeUnavailable
	case Stopped:
		res.NVML.Outcome = facts.ProbeFailed
	case TimedOut:
		res.NVML.Outcome = facts.ProbeTimeout
	default:
		doc, err := Decode(x.Stdout)
		if err != nil {
			res.NVML.Outcome = facts.ProbeFailed
			res.NVML.Error = Failure("the NVML probe", x.WaitErr, err, res.Stderr)
			return res
		}
		res.Document = doc
		res.NVML.Outcome = doc.Outcome
		res.NVML.Error = doc.Error
		res.NVML.Version = doc.NVMLVersion
		res.NVML.Library = doc.DriverLibrary
	}
	return res
}

// Execution is one run of the probe program, whatever it was asked.
type Execution struct {
	// Via is "memfd" or "file:<path>"; "" when nothing started, and Tried
	// says why each candidate failed.
	Via      string
	Tried    []string
	Stdout   []byte // at most 1 MiB
	Stderr   string // the start, at most MaxStderr bytes
	WaitErr  error  // a non-zero exit status
	TimedOut bool   // killed at Timeout; Canceled: ctx ended first
	Timeout  time.Duration
	Canceled error
	Duration time.Duration
}

// Started reports whether a probe program ran.
func (x Execution) Started() bool { return x.Via != "" }

// Ending is how a run of the probe program ended.
type Ending int

const (
	Answered  Ending = iota // it exited: what it printed is its answer
	Unstarted               // no candidate could be started
	TimedOut                // killed at its timeout, or the preflight's deadline passed first
	Stopped                 // the preflight was stopped
)

// Ended says how x ended and, unless it answered, why, for the check
// named what, whose timeout the variable setting sets. Every probe's check
// reads its run this way.
func (x Execution) Ended(what, setting string) (Ending, string) {
	switch {
	case !x.Started():
		return Unstarted, what + " could not be started: " + strings.Join(x.Tried, "; ")
	case errors.Is(x.Canceled, context.DeadlineExceeded):
		return TimedOut, what + " stopped at the preflight's deadline: " + x.Canceled.Error()
	case x.Canceled != nil:
		return Stopped, what + " stopped: " + x.Canceled.Error()
	case x.TimedOut:
		return TimedOut, fmt.Sprintf("%s gave no answer within %s=%s; killed it and its process group", what, setting, x.Timeout)
	}
	return Answered, ""
}

// Execute runs the probe program with args and waits for it as Probe does,
// at most opts.Timeout, in its own process group; opts.Library is not used.
func Execute(ctx context.Context, args []string, opts Options) Execution {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	start := time.Now()
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	env = ProbeEnviron(env)

	var stdout, stderr boundedBuffer
	stdout.limit, stderr.limit = maxStdout, MaxStderr
	newCmd := func(path string) *exec.Cmd {
		cmd := &exec.Cmd{
			Path:   path,
			Args:   append([]string{ProbeName}, args...),
			Env:    env,
			Stdout: &stdout,
			Stderr: &stderr,
			// Its own group, so the deadline kills everything it started.
			SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
			// A descendant that left the group may hold the pipes open.
			WaitDelay: 500 * time.Millisecond,
		}
		return cmd
	}

	cmd, via, tried := startFirst(newCmd, opts)
	x := Execution{Via: via, Tried: tried, Timeout: timeout}
	if cmd == nil {
		return x
	}

	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout - time.Since(start))
	defer timer.Stop()
	stopped := false
	select {
	case x.WaitErr = <-done:
	case <-timer.C:
		x.TimedOut, stopped = true, true
	case <-ctx.Done():
		x.Canceled, stopped = ctx.Err(), true
	}
	if stopped {
		// Negative pid: the whole group. The probe is its leader (Setpgid).
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	x.Duration = time.Since(start)
	x.Stdout = stdout.Bytes()
	x.Stderr = stderr.String()
	return x
}

// startFirst starts the first probe that will start, and says how, or why each failed.
func startFirst(newCmd func(string) *exec.Cmd, opts Options) (*exec.Cmd, string, []string) {
	var tried []string
	if len(embedded) == 0 {
		tried = append(tried, "memfd: this binary was built without the embedded probe")
	} else if opts.NoMemfd {
		tried = append(tried, "memfd: disabled")
	} else {
		cmd, err := startMemfd(newCmd, embedded)
		if err == nil {
			return cmd, "memfd", nil
		}
		tried = append(tried, "memfd: "+err.Error())
	}
	for _, path := range candidates(opts.Path) {
		cmd := newCmd(path)
		if err := cmd.Start(); err != nil {
			tried = append(tried, path+": "+err.Error())
			continue
		}
		return cmd, "file:" + path, nil
	}
	return nil, "", tried
}

// candidates are the given probe file, or one beside this executable and one on PATH.
func candidates(path string) []string {
	if path != "" {
		return []string{path}
	}
	var out []string
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), ProbeName)
		if _, err := os.Stat(beside); err == nil {
			out = append(out, beside)
		}
	}
	if p, err := exec.LookPath(ProbeName); err == nil && (len(out) == 0 || p != out[0]) {
		out = append(out, p)
	}
	if len(out) == 0 {
		// Named, so the "unavailable" error says where it looked.
		out = append(out, ProbeName+" (not beside the executable nor on PATH)")
	}
	return out
}

// Failure explains a probe (what: "NVML probe") that exited without a usable document.
func Failure(what string, waitErr, decodeErr error, stderr string) string {
	msg := what + " gave no usable answer"
	if waitErr != nil {
		msg += " (" + waitErr.Error() + ")"
	}
	msg += ": " + decodeErr.Error()
	if line, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n"); line != "" {
		msg += "; stderr: " + line
	}
	return msg
}

func withoutVar(env []string, name string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// boundedBuffer keeps the first limit bytes and takes the rest unseen, so the child never
// blocks on a full pipe; wrapping bytes.Buffer keeps io.Copy from bypassing Write (ReadFrom).
type boundedBuffer struct {
	buf     bytes.Buffer
	limit   int
	written int64
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.written += int64(len(p))
	if room := b.limit - b.buf.Len(); room < len(p) {
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

// Bytes returns what was kept.
func (b *boundedBuffer) Bytes() []byte { return b.buf.Bytes() }

// String returns what was kept, with truncate's note of the whole size when some was dropped.
func (b *boundedBuffer) String() string {
	if b.written > int64(b.buf.Len()) {
		return b.buf.String() + truncate.Note(int(b.written))
	}
	return b.buf.String()
}
