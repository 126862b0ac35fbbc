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
// for the log, which wants lines under 8 KiB (docs/sources.md, "What gpu-preflight is held to").
const (
	maxStdout = 1 << 20
	MaxStderr = 4 << 10
)

// Options say how to run the probe.
type Options struct {
	// Library is the NVML library the probe loads (PREFLIGHT_NVML_LIBRARY);
	// "" leaves the probe's default, libnvidia-ml.so.1.
	Library string
	// Timeout is the deadline (PREFLIGHT_NVML_TIMEOUT); 0 means DefaultTimeout.
	Timeout time.Duration
	// Path, when set, replaces the file fallbacks: it is the one probe file
	// tried after the memfd.
	Path string
	// NoMemfd skips the embedded copy even when there is one.
	NoMemfd bool
	// Env is the probe's environment; nil means this process's.
	Env []string
}

// Result is what one probe run produced.
type Result struct {
	// Document is the probe's answer; nil when it gave none (timeout,
	// crash, garbage, no probe to run).
	Document *Document
	// NVML says how the run went, for host.nvml in the record.
	NVML facts.NVML
	// Stderr is the start of what the probe wrote on stderr (at most
	// MaxStderr bytes), for the log.
	Stderr string
}

// Probe runs the NVML probe and waits for its document, at most
// opts.Timeout. It tries, in order: the copy embedded in this binary, run
// from a memfd; opts.Path, or else a gpu-preflight-nvml beside the running
// executable, then one on PATH. When none starts the outcome is
// facts.ProbeUnavailable and the shim goes on with procfs alone. At the
// deadline, or when ctx ends, the probe's whole process group is killed and
// reaped, so a hung driver leaves nothing behind.
//
// Starting the probe costs a few milliseconds (docs/sources.md, "What gpu-preflight is held to"): callers run
// it only when there is driver evidence.
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
	if !x.Started() {
		res.NVML.Outcome = facts.ProbeUnavailable
		res.NVML.Error = "no NVML probe could be started: " + strings.Join(x.Tried, "; ")
		return res
	}
	res.NVML.DurationMillis = float64(x.Duration.Microseconds()) / 1000
	switch {
	case x.Canceled != nil:
		// The preflight's own deadline is a timeout too; a cancel is not.
		res.NVML.Outcome = facts.ProbeFailed
		if errors.Is(x.Canceled, context.DeadlineExceeded) {
			res.NVML.Outcome = facts.ProbeTimeout
		}
		res.NVML.Error = "NVML probe stopped: " + x.Canceled.Error()
	case x.TimedOut:
		res.NVML.Outcome = facts.ProbeTimeout
		res.NVML.Error = fmt.Sprintf("NVML probe gave no answer within %s; killed it and its process group", x.Timeout)
	default:
		doc, err := Decode(x.Stdout)
		if err != nil {
			res.NVML.Outcome = facts.ProbeFailed
			res.NVML.Error = Failure("NVML probe", x.WaitErr, err, res.Stderr)
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
	// Via is how it was started: "memfd", "file:<path>"; "" when nothing
	// started, and then Tried says why each candidate failed.
	Via   string
	Tried []string
	// Stdout is what it printed (at most 1 MiB); Stderr the start of what
	// it wrote on stderr (at most MaxStderr bytes), for the log.
	Stdout []byte
	Stderr string
	// WaitErr is its exit status when it was not 0.
	WaitErr error
	// TimedOut is set when it was killed at Timeout, Canceled when ctx
	// ended first.
	TimedOut bool
	Timeout  time.Duration
	Canceled error
	Duration time.Duration
}

// Started reports whether a probe program ran.
func (x Execution) Started() bool { return x.Via != "" }

// Execute runs the probe program with args (after its name) and waits for
// it, at most opts.Timeout, starting it as Probe describes: from the
// embedded copy, else from a file; in its own process group, which is
// killed and reaped at the deadline or when ctx ends. opts.Library is not
// used; opts.Env nil means this process's environment.
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

	var stdout, stderr boundedBuffer
	stdout.limit, stderr.limit = maxStdout, MaxStderr
	newCmd := func(path string) *exec.Cmd {
		cmd := &exec.Cmd{
			Path:   path,
			Args:   append([]string{ProbeName}, args...),
			Env:    env,
			Stdout: &stdout,
			Stderr: &stderr,
			// Its own process group, so the deadline kills everything it
			// started; killed too if this process dies first.
			SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
			// A descendant that left the group may hold the pipes open;
			// don't wait for it once the probe itself is gone.
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

// startFirst starts the first probe that will start, returning it with how
// it was started and, when none did, why each candidate failed.
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

// candidates lists the probe files to try: the given one, or one beside
// this executable and then one on PATH.
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

// Failure explains a probe (what, "NVML probe") that exited without a
// usable document.
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

// withoutVar returns env without any NAME=... entry.
func withoutVar(env []string, name string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// boundedBuffer keeps the first limit bytes written and drops the rest,
// while telling the writer all was taken so the child never blocks on a
// full pipe. It wraps bytes.Buffer rather than embedding it, so io.Copy
// cannot bypass Write through Buffer.ReadFrom.
type boundedBuffer struct {
	buf   bytes.Buffer
	limit int
	// written counts every byte written, kept or not.
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

// String returns what was kept, ending in truncate's note of the whole
// size when some was dropped.
func (b *boundedBuffer) String() string {
	if b.written > int64(b.buf.Len()) {
		return b.buf.String() + truncate.Note(int(b.written))
	}
	return b.buf.String()
}
