package app

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/report/logs"
)

// logWriter writes the process's own stdout or stderr with write(2): a
// reader gone costs the line (EPIPE), where os.File would end the process
// with SIGPIPE unless os/signal caught it, which the command would inherit.
func logWriter(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && (f == os.Stdout || f == os.Stderr) {
		return fdWriter(f.Fd())
	}
	return w
}

type fdWriter uintptr

// Fd is for the terminal and pipe checks (termsafe, stall).
func (fd fdWriter) Fd() uintptr { return uintptr(fd) }

// Write writes all of p, as os.File does, on a descriptor left non-blocking too.
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

// droppedNotice is the log line that says what a stalled stderr cost.
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
