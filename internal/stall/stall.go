// Package stall keeps a stderr nobody reads from holding up the job's start
// or the exit on a signal. A write that cannot block goes straight through;
// any other goes to a goroutine, waited for while one allowance for the
// process lasts, then dropped, counted and announced by the Notice.
package stall

import (
	"io"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Allowance is how long, in all, a Writer from New waits on a reader.
const Allowance = time.Second

// Writer waits on its writer no longer than its allowance. Its methods may
// be called from several goroutines.
type Writer struct {
	w io.Writer
	// Notice is the line that says n writes of b bytes were dropped.
	Notice func(n, b int) []byte

	mu        sync.Mutex
	inFlight  chan struct{} // closed when the last write has returned; nil before the first
	allowance time.Duration
	dropped   int // writes dropped since the last notice
	droppedB  int
	kind      fileKind // of w, found at the first write
}

type fileKind int

const (
	kindUnknown fileKind = iota
	kindOther            // not a file, or a regular file (on a volume that can hang)
	kindNull             // /dev/null: never blocks
	kindPolled           // a pipe, socket or terminal: poll(2) tells whether it has room
)

func New(w io.Writer) *Writer {
	return &Writer{w: w, allowance: Allowance}
}

// Fd is the underlying descriptor (a terminal is seen through), or ^0.
func (s *Writer) Fd() uintptr {
	if f, ok := s.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// Write never fails: a write dropped is counted for the next Notice.
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

// writesNow reports whether n bytes cannot block: nothing in flight, and
// /dev/null, or room by poll(2) (POLLOUT on a pipe is a free slot, which
// PIPE_BUF bytes fill; only we write there before the command starts).
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

const pipeBuf = 4096 // PIPE_BUF: an atomic write, one free slot (pipe(7))

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

// FlushGrace is Flush's wait once the allowance is spent: a reader that
// came back takes microseconds.
const FlushGrace = 50 * time.Millisecond

// Flush waits for the write in flight; call it before an exec or an exit.
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

// Dropped reports the writes and bytes dropped and not yet announced.
func (s *Writer) Dropped() (n, b int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped, s.droppedB
}

// waitLocked waits for the write in flight from the allowance, and reports
// whether none is in flight now.
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
