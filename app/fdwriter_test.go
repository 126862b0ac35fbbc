package app

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLogWriterWritesStderrItself: the process's stdout and stderr are
// written with write(2), other writers are used as they are.
func TestLogWriterWritesStderrItself(t *testing.T) {
	for _, f := range []*os.File{os.Stdout, os.Stderr} {
		w, ok := logWriter(f).(fdWriter)
		if !ok || w.Fd() != f.Fd() {
			t.Errorf("logWriter(%s) = %#v, want an fdWriter on fd %d", f.Name(), logWriter(f), f.Fd())
		}
	}
	var buf bytes.Buffer
	if w := logWriter(&buf); w != io.Writer(&buf) {
		t.Errorf("logWriter(a buffer) = %#v, want the buffer", w)
	}
}

// TestFdWriterWritesAllOfANonBlockingPipe: a pipe left non-blocking by
// whoever shares it takes a write larger than its buffer in several parts;
// every byte arrives, in order.
func TestFdWriterWritesAllOfANonBlockingPipe(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r := os.NewFile(uintptr(p[0]), "r")
	defer r.Close()
	defer unix.Close(p[1])
	if err := unix.SetNonblock(p[1], true); err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB: 16 times the pipe's buffer
	got := make(chan []byte)
	go func() { b, _ := io.ReadAll(io.LimitReader(r, int64(len(want)))); got <- b }()
	n, err := fdWriter(p[1]).Write(want)
	if n != len(want) || err != nil {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(want))
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Errorf("the reader got %d bytes, not the %d written", len(b), len(want))
	}
}

// TestFdWriterReportsAClosedPipe: a pipe whose reader has gone is EPIPE,
// returned, and the process goes on.
func TestFdWriterReportsAClosedPipe(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	unix.Close(p[0])
	defer unix.Close(p[1])
	if _, err := fdWriter(p[1]).Write([]byte("a log line\n")); !errors.Is(err, syscall.EPIPE) {
		t.Errorf("Write to a pipe without a reader = %v, want EPIPE", err)
	}
}
