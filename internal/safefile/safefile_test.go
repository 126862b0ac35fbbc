package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// within fails the test when f takes more than 5 s: a FIFO must never
// block an open.
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("blocked")
		return nil
	}
}

func TestOpenWriteTakesOnlyARegularFileWithOneLink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A FIFO with a reader opens for writing; it must still be refused.
	readFIFO := filepath.Join(dir, "fifo-with-reader")
	if err := unix.Mkfifo(readFIFO, 0o600); err != nil {
		t.Fatal(err)
	}
	rfd, err := unix.Open(readFIFO, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(rfd)
	link := filepath.Join(dir, "symlink")
	os.Symlink(victim, link)
	hard := filepath.Join(dir, "hardlink")
	os.Link(victim, hard)

	for _, tt := range []struct{ name, path, want string }{
		{"Symlink", link, "too many levels of symbolic links"},
		{"FIFOWithoutReader", fifo, "no such device or address"},
		{"FIFOWithReader", readFIFO, "not a regular file (a FIFO)"},
		{"HardLink", hard, "more than one hard link"},
		{"Directory", dir, "is a directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := within(t, func() error {
				f, err := OpenWrite(tt.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
				if err == nil {
					f.Close()
				}
				return err
			})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("OpenWrite: %v, want an error that says %q", err, tt.want)
			}
		})
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the victim was written: %q", b)
	}
	if _, err := OpenWrite(filepath.Join(dir, "new"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640); err == nil {
		t.Error("OpenWrite took O_TRUNC, which cuts a file before it is checked")
	}
	f, err := OpenWrite(filepath.Join(dir, "new"), os.O_WRONLY|os.O_CREATE, 0o640)
	if err != nil {
		t.Fatalf("OpenWrite of a new file: %v", err)
	}
	f.Close()
}

// readPath opens path as the callers of ReadOpen do (O_NONBLOCK, and
// O_NOFOLLOW unless follow) and reads it with ReadOpen.
func readPath(path string, max int64, follow bool) ([]byte, error) {
	flag := unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC
	if !follow {
		flag |= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(path, flag, 0)
	if err != nil {
		return nil, err
	}
	return ReadOpen(os.NewFile(uintptr(fd), path), max)
}

func TestReadOpenIsBoundedAndNeverBlocks(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	err := within(t, func() error { _, err := readPath(fifo, 1<<20, true); return err })
	if !errors.Is(err, ErrNotRegular) {
		t.Errorf("reading a FIFO: %v, want ErrNotRegular", err)
	}
	huge := filepath.Join(dir, "huge")
	f, _ := os.Create(huge)
	f.Truncate(500 << 20) // sparse
	f.Close()
	if _, err := readPath(huge, 1<<20, true); err == nil || !strings.Contains(err.Error(), "over the 1048576-byte limit") {
		t.Errorf("reading 500 MB with a 1 MiB bound: %v", err)
	}
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("hello"), 0o600)
	if b, err := readPath(small, 5, true); err != nil || string(b) != "hello" {
		t.Errorf("reading 5 bytes with a 5-byte bound: %q, %v", b, err)
	}
	if _, err := readPath(small, 4, true); err == nil {
		t.Error("5 bytes read with a 4-byte bound")
	}
}
