package fsroot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrTooLarge is wrapped by ReadFileMax when a file exceeds its limit.
var ErrTooLarge = errors.New("file larger than the limit")

// ErrNotRegular is wrapped by the reads of anything but a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ReadFile reads the regular file p names inside the root.
func (r Root) ReadFile(p string) ([]byte, error) {
	f, err := r.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// ReadFileMax reads the regular file p names inside the root, failing
// (wrapping ErrTooLarge) when it holds more than max bytes.
func (r Root) ReadFileMax(p string, max int64) ([]byte, error) {
	f, err := r.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &fs.PathError{Op: "read", Path: f.Name(), Err: fmt.Errorf("%w of %d bytes", ErrTooLarge, max)}
	}
	return data, nil
}

// ReadHead reads at most the first n bytes of the regular file p names.
func (r Root) ReadHead(p string, n int) ([]byte, error) {
	f, err := r.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	k, err := io.ReadFull(f, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return b[:k], err
}

// Open opens the regular file p names inside the root, refusing anything
// else without blocking: a FIFO waits for a writer, a device may never answer.
func (r Root) Open(p string) (*os.File, error) {
	host, err := r.lookup("open", p, true)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(host, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: host, Err: fmt.Errorf("%w (%s)", ErrNotRegular, typeName(fi.Mode()))}
	}
	return f, nil
}

func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	}
	return "type " + m.Type().String()
}
