package elfbound

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// StringTable reads NUL-terminated strings out of a string table by offset
// through a window of a few KiB, so a lookup costs the string's length, not
// the table's. The zero value is an empty table.
type StringTable struct {
	r         io.ReaderAt
	off, size uint64 // the table in the file
	win       []byte // the table's bytes from winOff
	winOff    uint64
}

// ErrBadString is wrapped by the errors of a string outside the table,
// unterminated, or longer than the caller's bound.
var ErrBadString = errors.New("bad string")

// window is read ahead: strings a linker wrote side by side cost one read.
const window = 4 << 10

// Bytes returns the string at off without its NUL, or an error wrapping
// ErrBadString; the slice is valid until the next call.
func (t *StringTable) Bytes(off uint64, max int) ([]byte, error) {
	if off >= t.size {
		return nil, fmt.Errorf("%w: offset %d outside the %d-byte string table", ErrBadString, off, t.size)
	}
	want := min(t.size-off, uint64(max)+1)
	if s, ok, err := t.cut(off, want, max); ok || err != nil {
		return s, err
	}
	n := max64(want, min(window, t.size-off))
	if uint64(cap(t.win)) < n {
		t.win = make([]byte, n)
	}
	t.win = t.win[:n]
	t.winOff = off
	got, err := t.r.ReadAt(t.win, int64(t.off+off))
	if uint64(got) < n {
		t.win = t.win[:got]
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("reading the string table at %d: %w", off, err)
	}
	s, _, err := t.cut(off, want, max)
	return s, err
}

// cut finds the string at off in the window; ok when the window decides.
func (t *StringTable) cut(off, want uint64, max int) ([]byte, bool, error) {
	if off < t.winOff || off >= t.winOff+uint64(len(t.win)) {
		return nil, false, nil
	}
	rest := t.win[off-t.winOff:]
	if i := bytes.IndexByte(rest[:min(uint64(len(rest)), want)], 0); i >= 0 {
		return rest[:i], true, nil
	}
	if uint64(len(rest)) < want {
		return nil, false, nil // the window ends first: read further
	}
	if want <= uint64(max) {
		return nil, true, fmt.Errorf("%w: the string at offset %d of the %d-byte string table has no NUL before the table ends", ErrBadString, off, t.size)
	}
	return nil, true, fmt.Errorf("%w: the string at offset %d of the string table is longer than %d bytes", ErrBadString, off, max)
}

// String is Bytes, copied.
func (t *StringTable) String(off uint64, max int) (string, error) {
	b, err := t.Bytes(off, max)
	return string(b), err
}

// Equal reports whether the string at off is s; only a failed read is an error.
func (t *StringTable) Equal(off uint64, s string) (bool, error) {
	b, err := t.Bytes(off, len(s))
	if errors.Is(err, ErrBadString) {
		return false, nil
	}
	return err == nil && string(b) == s, err
}

func max64(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

// NewStringTable reads the size bytes at off in r as a table of
// NUL-terminated strings found by offset (ELF, or ld.so.cache).
func NewStringTable(r io.ReaderAt, off, size uint64) *StringTable {
	return &StringTable{r: r, off: off, size: size}
}
