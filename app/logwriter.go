package app

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/report/logs"
)

// logWriter is where a run's log lines go: w, but the process's own stdout
// or stderr is written with write(2). Through os.File, a write to a pipe
// whose reader has gone ends the process with SIGPIPE unless os/signal
// catches it (and its threads cost); written directly it fails with EPIPE
// and only the line is lost. The disposition, which the command inherits,
// is left alone.
func logWriter(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && (f == os.Stdout || f == os.Stderr) {
		return fdWriter(f.Fd())
	}
	return w
}

// fdWriter writes to a file descriptor with write(2).
type fdWriter uintptr

// Fd is the descriptor, for the terminal and pipe checks (termsafe, stall).
func (fd fdWriter) Fd() uintptr { return uintptr(fd) }

// Write writes all of p as os.File does: again after a short or interrupted
// write, and after poll(2) on a descriptor someone left non-blocking.
func (fd fdWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := unix.Write(int(fd), p[n:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			if _, err := unix.Poll(pfd, -1); err != nil && err != unix.EINTR {
				return n, err
			}
			continue
		case err != nil:
			return n, err
		case m == 0:
			return n, io.ErrShortWrite
		}
		n += m
	}
	return n, nil
}

// droppedNotice is the log line, in the log's format, that says how many
// lines a stalled stderr cost.
func droppedNotice(terminal bool, format logFormat) func(n, b int) []byte {
	f := string(format)
	if f == logs.FormatAuto {
		f = logs.FormatJSON
		if terminal {
			f = logs.FormatConsole
		}
	}
	return func(n, b int) []byte {
		var buf bytes.Buffer
		l, err := logs.New(&buf, f, "info")
		if err != nil {
			return nil
		}
		l.Warn().Int("droppedLines", n).Int("droppedBytes", b).
			Msg("stderr was not being read: gpu-preflight dropped log lines rather than wait")
		return buf.Bytes()
	}
}
