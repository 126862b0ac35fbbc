// Package safefile opens the files gpu-preflight reads or writes by a name
// someone else may control (the ledger, the termination message, an image's
// configuration), so the job it supervises cannot turn them against it:
// O_NOFOLLOW refuses a planted symlink; O_NONBLOCK keeps a planted FIFO from
// blocking open(2) (it changes nothing for a regular file), and anything
// but a regular file is refused; a file written must have one link, or a
// write would land in another file too; a file read is read up to a bound.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// ErrNotRegular is the error for a name that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrLinked is the error for a file to be written that has more than one hard link.
var ErrLinked = errors.New("has more than one hard link (another name for the same file exists; gpu-preflight does not write through it)")

// OpenWrite opens path for writing with flag (never O_TRUNC, which would cut
// a file before it is checked: truncate the returned file instead) and
// returns it only when it is a regular file with one link.
func OpenWrite(path string, flag int, perm os.FileMode) (*os.File, error) {
	if flag&os.O_TRUNC != 0 {
		return nil, errors.New("safefile.OpenWrite: O_TRUNC would cut the file before it is checked")
	}
	fd, err := unix.Open(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	if err := CheckOwn(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// CheckOwn reports ErrNotRegular or ErrLinked unless f is a regular file with one link.
func CheckOwn(f *os.File) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("%w (%s)", ErrNotRegular, Kind(st.Mode))
	}
	if st.Nlink > 1 {
		return fmt.Errorf("%w: %d links", ErrLinked, st.Nlink)
	}
	return nil
}

// ReadOpen reads at most max bytes of f, which must be a regular file, and closes it.
func ReadOpen(f *os.File, max int64) ([]byte, error) {
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: f.Name(), Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s: %w (%s)", f.Name(), ErrNotRegular, Kind(st.Mode))
	}
	if st.Size > max {
		return nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit", f.Name(), st.Size, max)
	}
	// The limit holds on what is read: the file may grow while it is read.
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than the %d-byte limit", f.Name(), max)
	}
	return data, nil
}

// Kind names the type of a file that is not a regular one, for a message.
func Kind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFLNK:
		return "a symlink"
	}
	return "an unknown file type"
}
