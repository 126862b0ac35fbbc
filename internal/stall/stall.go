// Package stall keeps a reader that stops reading from holding gpu-preflight
// up. Its Writer sits between the logger and stderr: a container's stderr
// is a pipe, and when nobody drains it (a log shipper that hung, a
// `docker run` whose client went away) a write blocks once the pipe's
// 64 KiB are full, and with it the job's start, or the exit on SIGTERM.
//
// A write that cannot block goes straight through: to /dev/null, or at most
// PIPE_BUF bytes to a pipe, socket or terminal that poll(2) says has room
// (the common case: a reader that keeps up, and no goroutine or timer for
// it). Any other write is handed to a goroutine of its own and waited for only
// while an allowance lasts: one budget of waiting for the whole process
// (Allowance by default). A reader that keeps up never touches it. Once it
// is spent, a write that cannot start at once (the previous one is still
// blocked) is dropped and counted, and a write that can start is not waited
// for (Flush still gives it FlushGrace); when a later one gets through, it
// is preceded by the Notice of how much was dropped. Memory stays bounded:
// at most one write is in flight.
//
// What this costs: a line in flight when the process execs the command or
// exits may reach the reader cut short, or not at all.
package stall

import (
	"io"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Allowance is how long, in total, a Writer from New waits on a stalled
// reader before it stops waiting.
const Allowance = time.Second

// Writer writes to an underlying writer without waiting on it longer than
// its allowance. Its methods may be called from several goroutines.
type Writer struct {
	w io.Writer
	// Notice, when set, returns the line that says n writes of b bytes in
	// all were dropped; it must not write to the Writer.
	Notice func(n, b int) []byte

	mu        sync.Mutex
	inFlight  chan struct{} // closed when the last write has returned; nil before the first
	allowance time.Duration
	dropped   int // writes dropped since the last notice
	droppedB  int
	kind      fileKind // of w, found at the first write
}

// fileKind is what the underlying writer is, as far as blocking goes.
type fileKind int

const (
	kindUnknown fileKind = iota
	kindOther            // not a file, or a regular file (on a volume that can hang)
	kindNull             // /dev/null: never blocks
	kindPolled           // a pipe, socket or terminal: poll(2) tells whether it has room
)

// New returns a Writer for w with the default Allowance.
func New(w io.Writer) *Writer {
	return &Writer{w: w, allowance: Allowance}
}

// Fd is the underlying writer's file descriptor, so a terminal is still
// seen as one through the Writer; ^uintptr(0) when it has none.
func (s *Writer) Fd() uintptr {
	if f, ok := s.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// Write hands p to the underlying writer and waits for it within the
// allowance. It never fails: a write that had to be dropped is counted for
// the next Notice. p is copied; the caller may reuse it at once.
func (s *Writer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.waitLocked() {
		s.dropped++
		s.droppedB += len(p)
		return len(p), nil
	}
	if s.dropped == 0 && s.writesNow(len(p)) {
		_, _ = s.w.Write(p)
		return len(p), nil
	}
	var buf []byte
	if s.dropped > 0 && s.Notice != nil {
		buf = append(buf, s.Notice(s.dropped, s.droppedB)...)
		s.dropped, s.droppedB = 0, 0
	}
	buf = append(buf, p...)
	done := make(chan struct{})
	s.inFlight = done
	go func() {
		defer close(done)
		_, _ = s.w.Write(buf)
	}()
	s.waitLocked()
	return len(p), nil
}

// writesNow reports whether a write of n bytes to the underlying file
// cannot block, so it needs no goroutine: no write is in flight, and the
// file is /dev/null, or a pipe, socket or terminal with room for n bytes.
// poll(2)'s POLLOUT on a pipe means a free buffer slot, which a write of
// PIPE_BUF bytes or fewer fills without waiting; only gpu-preflight writes
// there before the command starts, and only under s.mu.
func (s *Writer) writesNow(n int) bool {
	if s.inFlight != nil {
		select {
		case <-s.inFlight:
		default:
			return false
		}
	}
	fd := s.Fd()
	if s.kind == kindUnknown {
		s.kind = kindOf(fd)
	}
	switch s.kind {
	case kindNull:
		return true
	case kindPolled:
		if n > pipeBuf {
			return false
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		ready, err := unix.Poll(pfd, 0)
		return err == nil && ready == 1 && pfd[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) == 0 &&
			pfd[0].Revents&unix.POLLOUT != 0
	}
	return false
}

// pipeBuf is PIPE_BUF on Linux: a pipe write of at most this many bytes is
// atomic, and fits in one free buffer slot (pipe(7)).
const pipeBuf = 4096

// kindOf tells from fstat(2) what the file open as fd is.
func kindOf(fd uintptr) fileKind {
	var st unix.Stat_t
	if fd == ^uintptr(0) || unix.Fstat(int(fd), &st) != nil {
		return kindOther
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO, unix.S_IFSOCK:
		return kindPolled
	case unix.S_IFCHR:
		if unix.Major(st.Rdev) == 1 && unix.Minor(st.Rdev) == 3 { // /dev/null (devices.txt)
			return kindNull
		}
		return kindPolled
	}
	return kindOther
}

// FlushGrace is how long Flush waits for the write in flight once the
// allowance is spent: a reader that came back takes microseconds, and the
// last lines before an exec or an exit should not be cut for nothing.
const FlushGrace = 50 * time.Millisecond

// Flush waits for the write in flight, within the allowance or, once that
// is spent, FlushGrace; call it before the process execs or exits.
func (s *Writer) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waitLocked() || s.inFlight == nil {
		return
	}
	t := time.NewTimer(FlushGrace)
	defer t.Stop()
	select {
	case <-s.inFlight:
	case <-t.C:
	}
}

// Dropped reports how many writes, of how many bytes, were dropped and not
// yet announced by a Notice.
func (s *Writer) Dropped() (n, b int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped, s.droppedB
}

// waitLocked waits for the write in flight while the allowance lasts, takes
// the time waited from it, and reports whether no write is in flight now.
func (s *Writer) waitLocked() bool {
	if s.inFlight == nil {
		return true
	}
	select {
	case <-s.inFlight:
		return true
	default:
	}
	if s.allowance <= 0 {
		return false
	}
	start := time.Now()
	t := time.NewTimer(s.allowance)
	defer t.Stop()
	select {
	case <-s.inFlight:
		s.allowance -= time.Since(start)
		return true
	case <-t.C:
		s.allowance = 0
		return false
	}
}
