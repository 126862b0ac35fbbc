// Package fsroot reads files under one root directory (PREFLIGHT_ROOT,
// default "/"), a test fixture or an unpacked image. Paths are absolute
// inside the root, ".." never climbs above it, and symbolic links resolve
// inside it as chroot would.
package fsroot

import (
	"errors"
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

// maxLinks bounds link resolution as the kernel's MAXSYMLINKS does.
const maxLinks = 40

// IsHost reports whether r is "/", where paths are used as they are.
func (r Root) IsHost() bool {
	return r.dir() == "/"
}

func (r Root) dir() string {
	if r == "" {
		return "/"
	}
	return filepath.Clean(string(r))
}

func clean(p string) string {
	return path.Clean("/" + p)
}

// Path joins p under the root lexically, following no link.
func (r Root) Path(p string) string {
	return filepath.Join(r.dir(), clean(p))
}

// Resolve returns the path on this machine that p names inside the root,
// every link resolved inside the root; missing components stay as written.
func (r Root) Resolve(p string) (string, error) {
	w, err := r.resolve(p, true)
	return w.host, err
}

// touched is the path a Root was last asked about, so that a deadline
// passing while a read hangs (a hung mount) can name where.
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

// walk is where resolve found that a path leads; absent is the errno of a
// missing component, so that the caller's call, bound to fail, is not made.
type walk struct {
	host   string
	absent syscall.Errno
}

func absentErrno(err error) syscall.Errno {
	if errno, ok := errors.AsType[syscall.Errno](err); ok && (errno == syscall.ENOENT || errno == syscall.ENOTDIR) {
		return errno
	}
	return 0
}

// lookup resolves p for the call op, failing as op would when p is missing.
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

// resolve walks p one component at a time; followLast is false for Lstat
// and Readlink.
func (r Root) resolve(p string, followLast bool) (walk, error) {
	touched.Lock()
	touched.root, touched.path, touched.set = r, p, true
	touched.Unlock()
	if r.IsHost() {
		return walk{host: clean(p)}, nil
	}
	base := r.dir()
	// Until the first link every component's host path is a prefix of full.
	full := base + clean(p)
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
			return walk{host: full, absent: absent}, nil
		case err != nil:
			return walk{host: full}, nil // unreadable: the caller's call says so
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

// walkLinks resolves rest below the resolved components done: an absolute
// target starts again at the root, ".." climbs lexically.
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
			done = append(append(done, c), rest...)
			return walk{host: filepath.Join(base, filepath.Join(done...)), absent: absentErrno(err)}, nil
		}
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
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
