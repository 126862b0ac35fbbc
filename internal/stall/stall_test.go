package stall

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A reader that stops reading costs the writer its allowance once, then
// nothing: later writes return at once and are counted as dropped.
func TestStalledReaderCostsTheAllowanceOnce(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	s := New(w)
	// Long enough that one more wait for it stands out from any delay a
	// loaded machine adds to 100 writes.
	const allowance = time.Second
	s.allowance = allowance
	line := bytes.Repeat([]byte("x"), 128<<10) // twice the pipe's buffer
	start := time.Now()
	if n, err := s.Write(line); n != len(line) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if took := time.Since(start); took < allowance {
		t.Errorf("the stalled write returned after %v, before the %v allowance", took, allowance)
	}
	start = time.Now()
	for i := 0; i < 100; i++ {
		s.Write([]byte("later line\n"))
	}
	if took := time.Since(start); took > allowance/2 {
		t.Errorf("100 writes after the stall took %v, want no waiting (the allowance is %v)", took, allowance)
	}
	if n, b := s.Dropped(); n != 100 || b != 100*len("later line\n") {
		t.Errorf("Dropped = %d writes, %d bytes; want 100, %d", n, b, 100*len("later line\n"))
	}
}

// When the reader comes back, the next write is preceded by the notice of
// what was dropped, and the write that was in flight arrives whole.
func TestNoticeAfterTheReaderComesBack(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := New(w)
	s.allowance = 100 * time.Millisecond
	s.Notice = func(n, b int) []byte { return []byte(fmt.Sprintf("dropped %d writes, %d bytes\n", n, b)) }
	big := append(bytes.Repeat([]byte("x"), 100<<10), '\n')
	s.Write(big)
	s.Write([]byte("lost\n"))
	got := make(chan string)
	go func() { b, _ := io.ReadAll(r); got <- string(b) }()
	s.mu.Lock()
	inFlight := s.inFlight
	s.mu.Unlock()
	<-inFlight // the reader drained the pipe, and the write in flight returned
	s.Write([]byte("after\n"))
	s.Flush()
	w.Close()
	out := <-got
	want := string(big) + "dropped 1 writes, 5 bytes\nafter\n"
	if out != want {
		t.Errorf("the reader got %d bytes ending %q, want %d bytes ending %q", len(out), tail(out), len(want), tail(want))
	}
}

func tail(s string) string { return s[max(0, len(s)-40):] }

// A reader that keeps up sees every write, in order, and the writer never
// spends its allowance.
func TestReaderThatKeepsUpGetsEverything(t *testing.T) {
	var buf bytes.Buffer
	s := New(&buf)
	var want strings.Builder
	for i := 0; i < 1000; i++ {
		line := fmt.Sprintf("line %d\n", i)
		want.WriteString(line)
		s.Write([]byte(line))
	}
	s.Flush()
	if buf.String() != want.String() {
		t.Error("lines lost or reordered")
	}
	if s.allowance < Allowance*9/10 {
		t.Errorf("only %v of the %v allowance left after writes to a reader that keeps up", s.allowance, Allowance)
	}
}

// The caller may reuse its buffer as soon as Write returns (zerolog does).
func TestWriteCopies(t *testing.T) {
	var buf bytes.Buffer
	s := New(&buf)
	p := []byte("first\n")
	s.Write(p)
	copy(p, "XXXXX\n")
	s.Flush()
	if buf.String() != "first\n" {
		t.Errorf("got %q", buf.String())
	}
}

// Fd passes the underlying file's descriptor through, so a terminal is
// still recognised behind the Writer.
func TestFdPassesThrough(t *testing.T) {
	if got := New(os.Stderr).Fd(); got != os.Stderr.Fd() {
		t.Errorf("Fd = %d, want %d", got, os.Stderr.Fd())
	}
	if got := New(&bytes.Buffer{}).Fd(); got != ^uintptr(0) {
		t.Errorf("Fd of a buffer = %d, want ^uintptr(0)", got)
	}
}

// A pipe with room takes a small write at once, in the caller (the bytes
// are in the pipe when Write returns); once the pipe is full, a small write
// still does not block: it costs the allowance, as a stalled big one does.
func TestSmallWritesToAPipeWithRoomGoStraightThrough(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	s := New(w)
	s.allowance = 100 * time.Millisecond
	line := append(bytes.Repeat([]byte("x"), pipeBuf-1), '\n')
	s.Write(line)
	if n, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ); err != nil || n != len(line) {
		t.Fatalf("%d bytes in the pipe after Write returned (%v), want %d", n, err, len(line))
	}
	start := time.Now()
	for range 64 { // 256 KiB: four times the pipe's buffer
		s.Write(line)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("writes to a full pipe took %v, want about the 100 ms allowance", took)
	}
	if n, _ := s.Dropped(); n == 0 {
		t.Error("no write was dropped on a full pipe nobody reads")
	}
}

// /dev/null and a pipe are written directly; a regular file, which can sit
// on a volume that hangs, and a writer that is no file, go through a
// goroutine.
func TestOnlyFilesThatCannotBlockAreWrittenDirectly(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	f, err := os.Create(t.TempDir() + "/log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tt := range []struct {
		name string
		w    io.Writer
		want fileKind
	}{{"/dev/null", null, kindNull}, {"pipe", w, kindPolled}, {"regular file", f, kindOther}, {"buffer", &bytes.Buffer{}, kindOther}} {
		s := New(tt.w)
		s.Write([]byte("x\n"))
		if s.kind != tt.want {
			t.Errorf("%s: kind %d, want %d", tt.name, s.kind, tt.want)
		}
	}
}
