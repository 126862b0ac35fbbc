package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// FileTimeLayout is the UTC time at the start of a record's file name. It
// sorts as a string in time order.
const FileTimeLayout = "20060102T150405.000000000Z"

// FileName is the name Write gives a record: "<UTC start time>-<run id>.json".
func FileName(r Record) (string, error) {
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
func Marshal(r Record) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode provenance record %s: %w", r.RunID, err)
	}
	return append(b, '\n'), nil
}

// Write stores r in dir, creating dir (mode 0750) if missing, and returns the
// file's path. The write is atomic and durable: the record goes to a
// temporary file in dir (opened O_EXCL|O_NOFOLLOW, mode 0640), is fsynced,
// then linked under its final name with link(2), which fails rather than
// replace anything already there, even a symlink; then the temporary name is
// removed and dir is fsynced. A reader therefore sees either no file or the
// whole record under the final name, also after a kill -9 or a power cut at
// any point. A crash can leave a temporary ".<name>.tmp-*" file, never a
// partial "*.json".
//
// dir itself may be a symlink; nothing inside it is followed. Errors name
// the step that failed and what to do; the caller reports them as a warning
// and carries on (SPEC section 6).
func Write(dir string, r Record) (string, error) {
	name, err := FileName(r)
	if err != nil {
		return "", err
	}
	data, err := Marshal(r)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", fmt.Errorf("write provenance record: create directory %s: %w (%s)", dir, err, hint)
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("write provenance record: open directory %s: %w (%s)", dir, err, hint)
	}
	defer unix.Close(dfd)

	final := filepath.Join(dir, name)
	tmp := "." + name + ".tmp-" + NewRunID()[:8]
	if err := writeTemp(dfd, tmp, data); err != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return "", fmt.Errorf("write provenance record %s: %w (%s)", filepath.Join(dir, tmp), err, hint)
	}
	// linkat without AT_SYMLINK_FOLLOW neither follows the temporary name
	// nor replaces the final one: EEXIST if anything is there.
	err = unix.Linkat(dfd, tmp, dfd, name, 0)
	_ = unix.Unlinkat(dfd, tmp, 0)
	if errors.Is(err, unix.EEXIST) {
		return "", fmt.Errorf("write provenance record: %s already exists; gpu-preflight never overwrites a record (a run id was reused, or something else created that name): %w", final, err)
	}
	if err != nil {
		return "", fmt.Errorf("write provenance record: link into place as %s: %w (%s)", final, err, hint)
	}
	if err := unix.Fsync(dfd); err != nil {
		return final, fmt.Errorf("write provenance record: fsync directory %s: %w (the record is written but may not survive a power cut)", dir, err)
	}
	return final, nil
}

const hint = "make the directory writable by this user, point PREFLIGHT_PROVENANCE_DIR at a writable volume, or set it to off"

func writeTemp(dfd int, tmp string, data []byte) error {
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o640)
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	defer f.Close()
	// The umask may have removed bits; the record's mode is 0640 regardless.
	if err := f.Chmod(0o640); err != nil {
		return fmt.Errorf("chmod temporary file: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write temporary file: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync temporary file: %w", err)
	}
	return f.Close()
}

// Complete replaces the record at path, which Write created for the same
// run, with r (a supervised run's record with its Outcome). The replacement
// is atomic (temporary file, fsync, rename); it refuses when path is not a
// regular file or holds another run's record, so it can never clobber a
// different record or follow a symlink.
func Complete(path string, r Record) error {
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
	tmp := "." + name + ".tmp-" + NewRunID()[:8]
	if err := writeTemp(dfd, tmp, data); err != nil {
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
