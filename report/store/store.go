// Package store puts what a run leaves on disk: the provenance record in
// its own file (Write, Complete: atomic, durable, never following a
// symlink) and the Kubernetes termination message (WriteTermination).
package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/report"
)

// FileTimeLayout is the UTC time at the start of a record's file name. It
// sorts as a string in time order.
const FileTimeLayout = "20060102T150405.000000000Z"

// FileName is the name Write gives a record: "<UTC start time>-<run id>.json".
func FileName(r report.Record) (string, error) {
	t, err := time.Parse(time.RFC3339Nano, r.StartedAt)
	if err != nil {
		return "", fmt.Errorf("provenance record %s: startedAt %q is not RFC 3339: %w", r.RunID, r.StartedAt, err)
	}
	if r.RunID == "" || filepath.Base(r.RunID) != r.RunID || r.RunID == "." || r.RunID == ".." {
		return "", fmt.Errorf("provenance record: run id %q cannot be part of a file name", r.RunID)
	}
	return t.UTC().Format(FileTimeLayout) + "-" + r.RunID + ".json", nil
}

// Marshal encodes a record as written to its file: indented, newline-ended.
func Marshal(r report.Record) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode provenance record %s: %w", r.RunID, err)
	}
	return append(b, '\n'), nil
}

// Write stores r in dir, creating dir (mode 0750) if missing, and returns the
// file's path. The write is atomic and durable, and leaves nothing visible
// until the whole record is on disk: the record goes to an anonymous
// O_TMPFILE file in dir (mode 0640), is fsynced, then given its final name
// with linkat(2) through /proc/self/fd, which fails rather than replace
// anything already there, even a symlink; then dir is fsynced. A reader
// therefore sees either no file or the whole record under the final name,
// also after a kill -9 or a power cut at any point, and a crash leaves no
// temporary file either (the kernel frees an anonymous file with its last
// descriptor).
//
// Where O_TMPFILE is not available (open gives EOPNOTSUPP, EISDIR on a
// kernel before 3.11, or EINVAL) or /proc is not mounted, Write falls back
// to a named temporary file ".<name>.tmp-*" (opened O_EXCL|O_NOFOLLOW, mode
// 0640), fsynced, linked under the final name and removed. A crash then can
// leave that temporary file, still never a partial "*.json".
//
// dir itself may be a symlink; nothing inside it is followed. Errors name
// the step that failed and what to do; the caller reports them as a warning
// and carries on (docs/schema/README.md).
func Write(dir string, r report.Record) (string, error) {
	path, _, err := write(dir, r, procSelfFD)
	return path, err
}

// procSelfFD is where Linux shows this process's open descriptors as links
// (proc(5)); linkat through one gives an O_TMPFILE file a name without the
// CAP_DAC_READ_SEARCH that linkat(2) says AT_EMPTY_PATH needs (open(2),
// O_TMPFILE, shows this form).
const procSelfFD = "/proc/self/fd/"

// How write made the file, for the tests.
const (
	viaAnonymous = "anonymous O_TMPFILE file"
	viaNamed     = "named temporary file"
)

// write is Write with the /proc descriptor directory as a parameter, so the
// tests can take the fallback: "" skips O_TMPFILE, and a directory that does
// not exist plays a system without /proc. It also returns which way the
// record was written.
func write(dir string, r report.Record, fdDir string) (path, via string, err error) {
	name, err := FileName(r)
	if err != nil {
		return "", "", err
	}
	data, err := Marshal(r)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", "", fmt.Errorf("write provenance record: create directory %s: %w (%s)", dir, err, hint)
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", "", fmt.Errorf("write provenance record: open directory %s: %w (%s)", dir, err, hint)
	}
	defer unix.Close(dfd)

	final := filepath.Join(dir, name)
	via, err = linkNew(dfd, dir, name, data, fdDir)
	if errors.Is(err, unix.EEXIST) {
		return "", via, fmt.Errorf("write provenance record: %s already exists; gpu-preflight never overwrites a record (a run id was reused, or something else created that name): %w", final, err)
	}
	if err != nil {
		return "", via, fmt.Errorf("write provenance record %s: %w (%s)", final, err, hint)
	}
	if err := unix.Fsync(dfd); err != nil {
		return final, via, fmt.Errorf("write provenance record: fsync directory %s: %w (the record is written but may not survive a power cut)", dir, err)
	}
	return final, via, nil
}

// linkNew puts data under name in the directory open as dfd (dir names it
// in errors). name must not exist: the final linkat never replaces an entry,
// so an existing one gives an error that Is EEXIST.
func linkNew(dfd int, dir, name string, data []byte, fdDir string) (via string, err error) {
	if fdDir != "" {
		err := linkAnonymous(dfd, name, data, fdDir)
		if !errors.Is(err, errNoTmpfile) {
			return viaAnonymous, err
		}
	}
	tmp := "." + name + ".tmp-" + report.NewRunID()[:8]
	if err := writeTemp(dfd, tmp, data); err != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return viaNamed, fmt.Errorf("%s: %w", filepath.Join(dir, tmp), err)
	}
	// linkat without AT_SYMLINK_FOLLOW neither follows the temporary name
	// nor replaces the final one: EEXIST if anything is there.
	err = unix.Linkat(dfd, tmp, dfd, name, 0)
	_ = unix.Unlinkat(dfd, tmp, 0)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		err = fmt.Errorf("link into place: %w", err)
	}
	return viaNamed, err
}

// errNoTmpfile says O_TMPFILE cannot be used here; a named temporary file
// can.
var errNoTmpfile = errors.New("O_TMPFILE not usable")

// tmpfileUnsupported reports whether err from open(O_TMPFILE) means this
// kernel or file system has no O_TMPFILE, rather than that creating any
// file would fail (EACCES, EROFS, ENOSPC). open(2): "EOPNOTSUPP The
// filesystem containing pathname does not support O_TMPFILE"; kernels
// before 3.11 ignore the flag's __O_TMPFILE bit and see O_DIRECTORY with a
// write mode, EISDIR; EINVAL where a file system refuses the flags.
func tmpfileUnsupported(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL)
}

// linkAnonymous writes data to an anonymous file in the directory open as
// dfd, fsyncs it and links it as name. Until the link the file has no name,
// so nothing is visible before it is whole. An error that Is errNoTmpfile
// means the caller should use a named temporary file instead.
func linkAnonymous(dfd int, name string, data []byte, fdDir string) error {
	fd, err := unix.Openat(dfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o640)
	if tmpfileUnsupported(err) {
		return fmt.Errorf("%w: %w", errNoTmpfile, err)
	}
	if err != nil {
		return fmt.Errorf("create temporary file (O_TMPFILE): %w", err)
	}
	f := os.NewFile(uintptr(fd), "anonymous temporary file")
	defer f.Close()
	if err := fill(f, data); err != nil {
		return err
	}
	err = unix.Linkat(unix.AT_FDCWD, fdDir+strconv.Itoa(fd), dfd, name, unix.AT_SYMLINK_FOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		// No /proc (or one of another PID namespace): the link to follow
		// is missing.
		return fmt.Errorf("%w: %s%d: %w", errNoTmpfile, fdDir, fd, err)
	case err != nil && !errors.Is(err, unix.EEXIST):
		return fmt.Errorf("link into place: %w", err)
	}
	return err
}

const hint = "make the directory writable by this user, point PREFLIGHT_PROVENANCE_DIR at a writable volume, or set it to off"

// writeTemp creates tmp in the directory open as dfd, never following or
// reusing an existing entry, and fills it with data.
func writeTemp(dfd int, tmp string, data []byte) error {
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o640)
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	defer f.Close()
	if err := fill(f, data); err != nil {
		return err
	}
	return f.Close()
}

// fill sets f's mode to 0640, writes data and fsyncs it. Its errors are
// the bare errno, as the caller names the file.
func fill(f *os.File, data []byte) error {
	// The umask may have removed bits; the record's mode is 0640 regardless.
	if err := f.Chmod(0o640); err != nil {
		return fmt.Errorf("chmod temporary file: %w", bare(err))
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write temporary file: %w", bare(err))
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync temporary file: %w", bare(err))
	}
	return nil
}

// bare strips the operation and file name an *os.File method's error
// repeats.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Complete replaces the record at path, which Write created for the same
// run, with r (a supervised run's record with its Outcome). The replacement
// is atomic: the new record is written to an anonymous O_TMPFILE file and
// fsynced, and only then linked under a temporary name ".<name>.tmp-*" and
// renamed over path, so a crash can leave at most a whole copy under the
// temporary name, never a partial file (without O_TMPFILE, as for Write, the
// temporary file is named from the start). It refuses when path is not a
// regular file or holds another run's record, so it can never clobber a
// different record or follow a symlink.
func Complete(path string, r report.Record) error {
	return complete(path, r, procSelfFD)
}

// complete is Complete with the /proc descriptor directory as a parameter,
// as for write.
func complete(path string, r report.Record, fdDir string) error {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("complete provenance record: open directory %s: %w (%s)", dir, err, hint)
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("complete provenance record %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	var old struct {
		RunID string `json:"runId"`
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	if err == nil {
		err = json.NewDecoder(f).Decode(&old)
	}
	f.Close()
	if err != nil {
		return fmt.Errorf("complete provenance record %s: read the existing record: %w", path, err)
	}
	if old.RunID != r.RunID {
		return fmt.Errorf("complete provenance record %s: it holds run %s, not %s; refusing to replace another run's record", path, old.RunID, r.RunID)
	}
	data, err := Marshal(r)
	if err != nil {
		return err
	}
	tmp := "." + name + ".tmp-" + report.NewRunID()[:8]
	err = errNoTmpfile
	if fdDir != "" {
		err = linkAnonymous(dfd, tmp, data, fdDir)
	}
	if errors.Is(err, errNoTmpfile) {
		err = writeTemp(dfd, tmp, data)
	}
	if err != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("complete provenance record %s: %w (%s)", path, err, hint)
	}
	if err := unix.Renameat(dfd, tmp, dfd, name); err != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("complete provenance record %s: rename into place: %w (%s)", path, err, hint)
	}
	if err := unix.Fsync(dfd); err != nil {
		return fmt.Errorf("complete provenance record: fsync directory %s: %w", dir, err)
	}
	return nil
}
