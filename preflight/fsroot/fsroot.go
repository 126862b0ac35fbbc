// Package fsroot reads files under one configurable root directory
// (PREFLIGHT_ROOT, default "/"), so that every gatherer can be pointed at a
// prepared tree: a test fixture, or an image unpacked at /mnt/image.
//
// Paths given to a Root are always read as absolute paths inside it:
// "proc/driver/nvidia/version" and "/proc/driver/nvidia/version" name the
// same file, and ".." never climbs above the root. When the root is not "/",
// symbolic links are also resolved inside the root, the way chroot would:
// an image's absolute link /usr/local/cuda -> /etc/alternatives/cuda must
// land in the image, not on the machine running the check. When the root is
// "/" the kernel resolves paths itself and nothing is rewritten.
package fsroot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// Root is the directory every path is read under. The empty Root means "/".
type Root string

// maxLinks bounds symbolic-link resolution, as the kernel's MAXSYMLINKS
// (40) bounds path walks; past it Resolve fails with ELOOP.
const maxLinks = 40

// IsHost reports whether r is the real root "/", where paths are used as
// they are.
func (r Root) IsHost() bool {
	return r.dir() == "/"
}

func (r Root) dir() string {
	if r == "" {
		return "/"
	}
	return filepath.Clean(string(r))
}

// clean makes p absolute and removes "." and ".." lexically; ".." at the
// top stays at the top.
func clean(p string) string {
	return path.Clean("/" + p)
}

// Path joins p under the root lexically: it never leaves the root through
// "..", but it does not follow symbolic links (use Resolve for that).
func (r Root) Path(p string) string {
	return filepath.Join(r.dir(), clean(p))
}

// Resolve returns the path on this machine that p names inside the root,
// with every symbolic link, final component included, resolved inside the
// root. Components that do not exist are kept as written, so the caller's
// next operation reports the missing file.
func (r Root) Resolve(p string) (string, error) {
	w, err := r.resolve(p, true)
	return w.host, err
}

// touched is the path a Root was last asked about, inside its root: every
// method resolves first, so resolve notes it. The gatherers read one file
// at a time, so when a deadline passes while one hangs (a hung or lazily
// pulled mount blocks the call that touches it), this names where. A
// mutex, not an atomic pointer: a start asks about a hundred paths, and a
// pointer would be an allocation each.
var touched struct {
	sync.Mutex
	root Root
	path string
	set  bool
}

// LastPath returns the path on this machine that a Root was last asked to
// read, stat or list, or "" before any.
func LastPath() string {
	touched.Lock()
	root, p, set := touched.root, touched.path, touched.set
	touched.Unlock()
	if !set {
		return ""
	}
	return root.Path(p)
}

// walk is where resolve found that a path leads.
type walk struct {
	host string // the path on this machine
	// absent is the error (ENOENT or ENOTDIR) of a component resolve found
	// missing: then nothing below it is there, the kernel would answer
	// the caller's own call with the same error, and the call is not made.
	// A GPU-less image's scan asks for a hundred paths under a missing
	// /usr/local/cuda or /opt; each costs one lstat, not two system calls.
	absent syscall.Errno
}

// absentErrno is err's errno when it says a path is not there (ENOENT,
// ENOTDIR), else 0.
func absentErrno(err error) syscall.Errno {
	if errno, ok := errors.AsType[syscall.Errno](err); ok && (errno == syscall.ENOENT || errno == syscall.ENOTDIR) {
		return errno
	}
	return 0
}

// lookup resolves p for the call op (stat, lstat, readlink, open) that a
// method makes on the path it returns. When resolve found p missing, the
// call is not made: the error is the one it would have returned.
func (r Root) lookup(op, p string, followLast bool) (string, error) {
	w, err := r.resolve(p, followLast)
	if err != nil {
		return "", err
	}
	if w.absent != 0 {
		return "", &fs.PathError{Op: op, Path: w.host, Err: w.absent}
	}
	return w.host, nil
}

// resolve walks p one component at a time. followLast is false for Lstat
// and Readlink, which act on a final link itself.
func (r Root) resolve(p string, followLast bool) (walk, error) {
	touched.Lock()
	touched.root, touched.path, touched.set = r, p, true
	touched.Unlock()
	if r.IsHost() {
		return walk{host: clean(p)}, nil
	}
	base := r.dir()
	cleaned := clean(p)
	// The common case first: no component is a link, so each component's
	// path on this machine is a prefix of full, and the walk needs no
	// string but full (base is not "/": the host root returned above). At
	// the first link the general walk takes over.
	full := base + cleaned
	var st syscall.Stat_t
	start := len(base) + 1 // of the component walked
	for end := start; end <= len(full); end++ {
		if end < len(full) && full[end] != '/' {
			continue
		}
		if end == len(full) && !followLast {
			break
		}
		err := syscall.Lstat(full[:end], &st)
		switch absent := absentErrno(err); {
		case absent != 0:
			// Not there: nothing below it is either, so keep the rest as
			// written without a lookup per component.
			return walk{host: full, absent: absent}, nil
		case err != nil:
			// Not readable (EACCES): the caller's call says so.
			return walk{host: full}, nil
		case st.Mode&syscall.S_IFMT == syscall.S_IFLNK:
			var done []string
			if start > len(base)+1 {
				done = strings.Split(full[len(base)+1:start-1], "/")
			}
			return r.walkLinks(p, base, done, strings.Split(full[start:], "/"), followLast)
		}
		start = end + 1
	}
	return walk{host: full}, nil
}

// walkLinks resolves rest below the components done, which are resolved,
// when a link was met: the link's target replaces it, an absolute target
// starts again at the root, and ".." in a target climbs lexically, never
// above the root.
func (r Root) walkLinks(p, base string, done, rest []string, followLast bool) (walk, error) {
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) > 0 {
				done = done[:len(done)-1]
			}
			continue
		}
		if len(rest) == 0 && !followLast {
			done = append(done, c)
			break
		}
		host := filepath.Join(base, filepath.Join(append(slices.Clip(done), c)...))
		fi, err := os.Lstat(host)
		if err != nil && !slices.Contains(rest, "..") {
			// Not there (or not readable): keep the rest as written, as the
			// walk without links does.
			done = append(append(done, c), rest...)
			return walk{host: filepath.Join(base, filepath.Join(done...)), absent: absentErrno(err)}, nil
		}
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			// Not a link, or not there but climbed out of: keep it as
			// written.
			done = append(done, c)
			continue
		}
		links++
		if links > maxLinks {
			return walk{}, &fs.PathError{Op: "resolve", Path: r.Path(p), Err: syscall.ELOOP}
		}
		target, err := os.Readlink(host)
		if err != nil {
			return walk{}, err
		}
		if strings.HasPrefix(target, "/") {
			done = done[:0]
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return walk{host: filepath.Join(base, filepath.Join(done...))}, nil
}

// ReadFile reads the regular file p names inside the root. Like
// ReadFileMax it refuses anything but a regular file without blocking.
func (r Root) ReadFile(p string) ([]byte, error) {
	f, err := r.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// ErrTooLarge is wrapped by ReadFileMax when a file exceeds its limit.
var ErrTooLarge = errors.New("file larger than the limit")

// ErrNotRegular is wrapped by Open, ReadFile and ReadFileMax when the path
// names something other than a regular file (a FIFO, a socket, a device or
// a directory).
var ErrNotRegular = errors.New("not a regular file")

// ReadFileMax reads the regular file p names inside the root, failing
// (wrapping ErrTooLarge) when it holds more than max bytes. procfs and
// sysfs files are regular files that report size 0; they are read to the
// end like any other.
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

// Open opens the regular file p names inside the root for reading. It
// opens without blocking and refuses (wrapping ErrNotRegular, with the
// path and the file's type in the message) anything but a regular file:
// open(2) of a FIFO for reading waits for a writer forever, and a
// character device may never answer a read, so either planted where a
// text file belongs would hang the preflight. O_NONBLOCK has no effect on
// reads of a regular file, so it is left set.
func (r Root) Open(p string) (*os.File, error) {
	host, err := r.lookup("open", p, true)
	if err != nil {
		return nil, err
	}
	// Go adds O_CLOEXEC to every open.
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

// typeName names a file type for an error message.
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

// ReadDir lists the directory p names inside the root, sorted by name: at
// most MaxDirEntries of them, which then come with an error wrapping
// ErrTooManyEntries.
func (r Root) ReadDir(p string) ([]fs.DirEntry, error) {
	var entries []fs.DirEntry
	err := r.listDir(p, func(f *os.File) (int, error) {
		batch, err := f.ReadDir(dirBatch)
		entries = append(entries, batch...)
		return len(entries), err
	})
	entries = entries[:min(len(entries), MaxDirEntries)]
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// ReadDirNames is ReadDir's names alone, which cost a string each rather
// than a string and a DirEntry: sorted, at most MaxDirEntries, and past
// that the first read with an error wrapping ErrTooManyEntries.
func (r Root) ReadDirNames(p string) ([]string, error) {
	var names []string
	err := r.listDir(p, func(f *os.File) (int, error) {
		batch, err := f.Readdirnames(dirBatch)
		names = append(names, batch...)
		return len(names), err
	})
	names = slices.Clip(names[:min(len(names), MaxDirEntries)])
	slices.Sort(names)
	return names, err
}

// listDir opens the directory p names and calls batch, which reads the
// next entries and says how many it holds in all, until the directory
// ends or more than MaxDirEntries were read (an error wrapping
// ErrTooManyEntries).
func (r Root) listDir(p string, batch func(*os.File) (int, error)) error {
	host, err := r.lookup("open", p, true)
	if err != nil {
		return err
	}
	// os.ReadDir would open a FIFO planted where a directory belongs and
	// wait for a writer; O_DIRECTORY refuses it at once with ENOTDIR, which
	// Missing reads as "not there", the same as a regular file in its place.
	f, err := os.OpenFile(host, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		n, err := batch(f)
		switch {
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		case n > MaxDirEntries:
			return &fs.PathError{Op: "readdir", Path: host, Err: fmt.Errorf("%w: the first %d read, in the directory's own order", ErrTooManyEntries, MaxDirEntries)}
		}
	}
}

// MaxDirEntries bounds the entries ReadDir and ReadDirNames return: a
// DirEntry costs about a hundred bytes held, and the largest directories of
// real images (/usr/lib/x86_64-linux-gnu, a conda environment's
// site-packages) hold hundreds to a few thousand (502 in that of a root of
// Debian trixie's CUDA torch).
const MaxDirEntries = 1 << 15

// dirBatch is how many entries one getdents round asks for.
const dirBatch = 1024

// ErrTooManyEntries is wrapped by ReadDir's and ReadDirNames' error for a
// directory of more than MaxDirEntries entries; the entries read come with
// it.
var ErrTooManyEntries = errors.New("more directory entries than gpu-preflight lists")

// Stat describes the file p names inside the root, following links.
func (r Root) Stat(p string) (fs.FileInfo, error) {
	host, err := r.lookup("stat", p, true)
	if err != nil {
		return nil, err
	}
	return os.Stat(host)
}

// Lstat describes the file p names inside the root without following a
// final symbolic link.
func (r Root) Lstat(p string) (fs.FileInfo, error) {
	host, err := r.lookup("lstat", p, false)
	if err != nil {
		return nil, err
	}
	return os.Lstat(host)
}

// Readlink returns the target of the symbolic link p names inside the
// root, exactly as stored (an absolute target is absolute inside the root).
func (r Root) Readlink(p string) (string, error) {
	host, err := r.lookup("readlink", p, false)
	if err != nil {
		return "", err
	}
	return os.Readlink(host)
}

// Glob returns the paths inside the root (absolute, "/"-separated, as a
// caller would write them) that match pattern, sorted. The pattern syntax
// is path.Match's; a wildcard may appear in any component. Directories
// that cannot be read match nothing; only a malformed pattern is an error.
func (r Root) Glob(pattern string) ([]string, error) {
	pattern = clean(pattern)
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, err
	}
	matches := []string{"/"}
	for _, part := range strings.Split(pattern, "/") {
		if part == "" {
			continue
		}
		var next []string
		for _, dir := range matches {
			if !hasMeta(part) {
				candidate := path.Join(dir, part)
				if _, err := r.Lstat(candidate); err == nil {
					next = append(next, candidate)
				}
				continue
			}
			entries, err := r.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range entries {
				if ok, _ := path.Match(part, e.Name()); ok {
					next = append(next, path.Join(dir, e.Name()))
				}
			}
		}
		matches = next
		if len(matches) == 0 {
			return nil, nil
		}
	}
	if len(matches) == 1 && matches[0] == "/" {
		return matches, nil
	}
	slices.Sort(matches)
	return matches, nil
}

func hasMeta(s string) bool {
	return strings.ContainsAny(s, `*?[\`)
}

// Missing reports whether err means the file is not there: it does not
// exist, or a component of its path is not a directory. Gatherers treat a
// missing file as a fact, not as a failure.
func Missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
