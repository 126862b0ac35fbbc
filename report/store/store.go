// Package store owns the record files: it writes them (atomic, durable,
// following no symlink, through a directory held open for the run), reads
// them back, and writes the Kubernetes termination message.
package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/report/termsafe"

	"github.com/gpu-preflight/gpu-preflight/internal/safefile"
	"github.com/gpu-preflight/gpu-preflight/report"
)

// FileTimeLayout is the UTC time a record's file name starts with; it sorts in time order.
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

// Marshal encodes a record as written to its file: indented, newline-ended,
// as json.MarshalIndent(r, "", "  ") writes it (which is Marshal's bytes
// indented by json.Indent), from the generated encoder's bytes.
func Marshal(r report.Record) ([]byte, error) {
	compact, err := r.AppendJSON(make([]byte, 0, report.EncodedBytes))
	if err != nil {
		return nil, fmt.Errorf("encode provenance record %s: %w", r.RunID, err)
	}
	var b bytes.Buffer
	b.Grow(len(compact) * 3 / 2)
	if err := json.Indent(&b, compact, "", "  "); err != nil {
		return nil, fmt.Errorf("indent provenance record %s: %w", r.RunID, err)
	}
	b.WriteByte('\n')
	// A record file is read with cat as often as with jq.
	return termsafe.JSON(b.Bytes()), nil
}

// Dir is a provenance directory held open from a run's first record to its
// last: every file is made relative to the descriptor, with openat(2),
// linkat(2) and renameat(2), so a directory renamed, replaced or swapped
// for a symlink while the command runs (by the command itself, or anyone
// who can write its parent) changes nothing: the finished record goes where
// the first one went. Its methods may be called from several goroutines.
type Dir struct {
	path string
	fd   int

	mu sync.Mutex
	// written is the file Write made for each record name, as stat saw it
	// once named, to tell at Complete whether the name still holds it.
	written map[string]unix.Stat_t
	fdDir   string // procSelfFD, or the tests' stand-in
}

// fileID is what identifies a file on a machine.
type fileID struct{ dev, ino uint64 }

// OpenDir opens the provenance directory at path, creating it (mode 0750)
// if missing. path itself may be a symlink (a volume's mount point often
// is); nothing inside it is followed. Close it when the run's last record is
// written.
func OpenDir(path string) (*Dir, error) {
	return openDir(path, procSelfFD)
}

func openDir(path, fdDir string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o750); err != nil {
		return nil, fmt.Errorf("write provenance record: create directory %s: %w (%s)", path, err, remedy(err))
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("write provenance record: open directory %s: %w (%s)", path, err, remedy(err))
	}
	return &Dir{path: path, fd: fd, written: map[string]unix.Stat_t{}, fdDir: fdDir}, nil
}

// Path is the path the directory was opened by.
func (d *Dir) Path() string { return d.path }

// Close lets go of the directory.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
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

// Write stores r in dir, creating dir (mode 0750) if missing, and returns the
// file's path: OpenDir, Dir.Write and Close, for a record written once.
func Write(dir string, r report.Record) (string, error) {
	path, _, err := write(dir, r, procSelfFD)
	return path, err
}

// write is Write with the /proc descriptor directory as a parameter, so the
// tests can take the fallback: "" skips O_TMPFILE, and a directory that does
// not exist plays a system without /proc. It also returns which way the
// record was written.
func write(dir string, r report.Record, fdDir string) (path, via string, err error) {
	d, err := openDir(dir, fdDir)
	if err != nil {
		return "", "", err
	}
	defer d.Close()
	return d.write(r)
}

// Write stores r in the directory under FileName(r) and returns the file's
// path. A reader sees no file or the whole record, also after a kill -9 or
// a power cut: the record goes to an anonymous O_TMPFILE file (mode 0640),
// is fsynced, and is linked under its name through /proc/self/fd (only a
// real procfs showing this very file: a planted /proc could name another),
// with linkat(2), which never replaces an entry; then the directory is
// fsynced. Without O_TMPFILE or that /proc, a named ".<name>.tmp-*" file
// (O_EXCL|O_NOFOLLOW) takes its place, and a crash can leave it, never a
// partial "*.json". Errors name the step that failed; the caller warns and
// carries on.
func (d *Dir) Write(r report.Record) (string, error) {
	path, _, err := d.write(r)
	return path, err
}

func (d *Dir) write(r report.Record) (path, via string, err error) {
	name, err := FileName(r)
	if err != nil {
		return "", "", err
	}
	data, err := Marshal(r)
	if err != nil {
		return "", "", err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fd < 0 {
		return "", "", fmt.Errorf("write provenance record: directory %s is closed", d.path)
	}
	final := filepath.Join(d.path, name)
	via, err = linkNew(d.fd, d.path, name, data, d.fdDir)
	if errors.Is(err, unix.EEXIST) {
		return "", via, fmt.Errorf("write provenance record: %s already exists; gpu-preflight never overwrites a record (a run id was reused, or something else created that name): %w", final, err)
	}
	if err != nil {
		return "", via, fmt.Errorf("write provenance record %s: %w (%s)", final, err, remedy(err))
	}
	d.remember(name)
	if err := unix.Fsync(d.fd); err != nil {
		return final, via, fmt.Errorf("write provenance record: fsync directory %s: %w (the record is written but may not survive a power cut)", d.path, err)
	}
	return final, via, nil
}

// linkNew puts data under name in the directory open as dfd (dir names it
// in errors). name must not exist: the final linkat never replaces an
// entry, so an existing one gives an error that Is EEXIST.
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
	id, err := fill(f, data)
	if err != nil {
		return err
	}
	procFD, err := ownFDDir(fdDir, fd, id)
	if err != nil {
		return fmt.Errorf("%w: %w", errNoTmpfile, err)
	}
	defer unix.Close(procFD)
	// Through procFD, checked to show this very file as fd's entry: the
	// link can only name it.
	err = unix.Linkat(procFD, strconv.Itoa(fd), dfd, name, unix.AT_SYMLINK_FOLLOW)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		err = fmt.Errorf("link into place: %w", err)
	}
	return err
}

// ownFDDir opens fdDir (/proc/self/fd/) and returns it when it is a procfs
// whose entry for fd leads to the file id: this process's own descriptor
// directory. With /proc unmounted the path is whatever the container's
// file system holds there, which anyone who can write / may have planted,
// links to other files included.
func ownFDDir(fdDir string, fd int, id fileID) (int, error) {
	procFD, err := unix.Open(fdDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("%s: %w", fdDir, err)
	}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(procFD, &sfs); err != nil {
		unix.Close(procFD)
		return -1, fmt.Errorf("%s: %w", fdDir, err)
	}
	if sfs.Type != unix.PROC_SUPER_MAGIC {
		unix.Close(procFD)
		return -1, fmt.Errorf("%s is not on a procfs (file system type %#x): /proc is not mounted", fdDir, sfs.Type)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(procFD, strconv.Itoa(fd), &st, 0); err != nil || (fileID{uint64(st.Dev), st.Ino}) != id {
		unix.Close(procFD)
		return -1, fmt.Errorf("%s%d does not lead to this process's descriptor %d (a /proc of another process or PID namespace)", fdDir, fd, fd)
	}
	return procFD, nil
}

func remedy(err error) string {
	if v := VolumeRemedy(err, "PREFLIGHT_PROVENANCE_DIR", "set it to off"); v != "" {
		return v
	}
	return "make the directory writable by this user, point PREFLIGHT_PROVENANCE_DIR at a writable volume, or set it to off"
}

// VolumeRemedy says what to do when the volume setting points at refused
// a write (ENOSPC, EDQUOT, EROFS), or "".
func VolumeRemedy(err error, setting, disable string) string {
	switch {
	case errors.Is(err, unix.ENOSPC):
		return "the volume is full: free space on it, point " + setting + " at a larger volume, or " + disable
	case errors.Is(err, unix.EDQUOT):
		return "the disk quota on the volume is used up: free space within it or raise it, point " + setting + " at another volume, or " + disable
	case errors.Is(err, unix.EROFS):
		return "the volume is mounted read-only: mount it read-write, point " + setting + " at a writable volume, or " + disable
	}
	return ""
}

// writeTemp creates tmp in the directory open as dfd, never following or
// reusing an existing entry, and fills it with data.
func writeTemp(dfd int, tmp string, data []byte) error {
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o640)
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	defer f.Close()
	if _, err := fill(f, data); err != nil {
		return err
	}
	return f.Close()
}

// fill sets f's mode to 0640, writes data and fsyncs it, and returns the
// file's identity. Its errors are the bare errno, as the caller names the
// file.
func fill(f *os.File, data []byte) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fileID{}, fmt.Errorf("stat temporary file: %w", err)
	}
	id := fileID{uint64(st.Dev), st.Ino}
	// The umask may have removed bits; the record's mode is 0640 regardless.
	if err := f.Chmod(0o640); err != nil {
		return id, fmt.Errorf("chmod temporary file: %w", bare(err))
	}
	if _, err := f.Write(data); err != nil {
		return id, fmt.Errorf("write temporary file: %w", bare(err))
	}
	if err := f.Sync(); err != nil {
		return id, fmt.Errorf("fsync temporary file: %w", bare(err))
	}
	return id, nil
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

// Complete stores r, a record Write stored before with more in it now (a
// supervised run's record with its Outcome), in place of the first: the
// file named FileName(r), so it can only ever replace this run's record.
// It writes r from memory and never reads the file back: whatever the name
// holds now (the command may have replaced it with a FIFO, a huge file, a
// symlink or a hard link to another file) is replaced as an entry by
// rename(2), never opened or written through. The replacement is atomic:
// the record is written to an anonymous O_TMPFILE file and fsynced, and
// only then linked under a temporary name ".<name>.tmp-*" and renamed over
// the name, so a crash can leave at most a whole copy under the temporary
// name, never a partial file (without O_TMPFILE, as for Write, the
// temporary file is named from the start). A name that does not exist (the
// first write failed) is written as new.
//
// foreign, when not empty, says what held the name instead of the file
// Write made, for the caller to warn about.
func (d *Dir) Complete(r report.Record) (foreign string, err error) {
	name, err := FileName(r)
	if err != nil {
		return "", err
	}
	data, err := Marshal(r)
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	path := filepath.Join(d.path, name)
	if d.fd < 0 {
		return "", fmt.Errorf("complete provenance record %s: directory is closed", path)
	}
	foreign = d.foreign(name)
	tmp := "." + name + ".tmp-" + report.NewRunID()[:8]
	err = errNoTmpfile
	if d.fdDir != "" {
		err = linkAnonymous(d.fd, tmp, data, d.fdDir)
	}
	if errors.Is(err, errNoTmpfile) {
		err = writeTemp(d.fd, tmp, data)
	}
	if err != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return foreign, fmt.Errorf("complete provenance record %s: %w (%s)", path, err, remedy(err))
	}
	// rename(2) replaces the entry whatever it is, except a directory
	// (EISDIR), and follows no symlink at either name.
	if err := unix.Renameat(d.fd, tmp, d.fd, name); err != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return foreign, fmt.Errorf("complete provenance record %s: rename into place: %w (%s)", path, err, remedy(err))
	}
	d.remember(name)
	if err := unix.Fsync(d.fd); err != nil {
		return foreign, fmt.Errorf("complete provenance record: fsync directory %s: %w", d.path, err)
	}
	return foreign, nil
}

// remember notes the file now under name as this Dir's.
func (d *Dir) remember(name string) {
	var st unix.Stat_t
	if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		d.written[name] = st
	}
}

// foreign describes what name holds when it is not the file this Dir wrote
// there: "" when it is, or when nothing is there. The file is the same when
// its device, inode, size and change time are: an inode number alone can
// be reused by a file made after the record was removed, and a new link to
// the record changes its change time.
func (d *Dir) foreign(name string) string {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return ""
	}
	if was, ok := d.written[name]; ok && st.Dev == was.Dev && st.Ino == was.Ino && st.Size == was.Size &&
		st.Ctim == was.Ctim && st.Nlink == 1 {
		return ""
	}
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1:
		return fmt.Sprintf("a file with %d hard links", st.Nlink)
	case st.Mode&unix.S_IFMT == unix.S_IFREG:
		return fmt.Sprintf("another file, %d bytes", st.Size)
	}
	return safefile.Kind(st.Mode)
}

// FileSHA256 is the SHA-256 of Marshal's file for the record encoded
// compact, escaped and hashed as Marshal would indent it, without building
// the file.
func FileSHA256(compact []byte) [sha256.Size]byte {
	compact = termsafe.JSON(compact) // as Marshal escapes: only inside strings, where indenting adds nothing
	h := sha256.New()
	var out [4096]byte
	b := out[:0]
	flush := func() {
		h.Write(b)
		b = b[:0]
	}
	depth := 0
	open := false // the last byte opened an object or array
	inString, escaped := false, false
	newline := func(d int) {
		if len(b)+1+2*d > cap(b) {
			flush()
		}
		b = append(b, '\n')
		for range d {
			if len(b)+2 > cap(b) {
				flush()
			}
			b = append(b, ' ', ' ')
		}
	}
	for _, c := range compact {
		if len(b)+2 > cap(b) {
			flush()
		}
		if inString {
			b = append(b, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if open && c != '}' && c != ']' {
			newline(depth)
		}
		switch c {
		case '{', '[':
			b = append(b, c)
			open = true
			depth++
			continue
		case '}', ']':
			depth--
			if !open {
				newline(depth)
			}
			b = append(b, c)
		case ',':
			b = append(b, c)
			open = false
			newline(depth)
			continue
		case ':':
			b = append(b, ':', ' ')
		case '"':
			b = append(b, c)
			inString = true
		default:
			b = append(b, c)
		}
		open = false
	}
	b = append(b, '\n')
	flush()
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
