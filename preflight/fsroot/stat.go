package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

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

// Readlink returns the target of the symbolic link p names, as stored.
func (r Root) Readlink(p string) (string, error) {
	host, err := r.lookup("readlink", p, false)
	if err != nil {
		return "", err
	}
	return os.Readlink(host)
}

// IsFile reports whether p names a regular file, links followed.
func (r Root) IsFile(p string) bool {
	fi, err := r.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// IsDir reports whether p names a directory, links followed.
func (r Root) IsDir(p string) bool {
	fi, err := r.Stat(p)
	return err == nil && fi.IsDir()
}

// Exists reports whether p names anything, links followed.
func (r Root) Exists(p string) bool {
	_, err := r.Stat(p)
	return err == nil
}

// RealPath returns p with every symbolic link resolved inside the root, as
// a path inside it; p itself when it cannot be resolved.
func (r Root) RealPath(p string) string {
	if p == "" {
		return ""
	}
	if r.IsHost() {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return real
		}
		return p
	}
	host, err := r.Resolve(p)
	if err != nil {
		return p
	}
	rel, ok := strings.CutPrefix(host, r.Path("/"))
	if !ok {
		return p
	}
	return path.Clean("/" + rel)
}

// Missing reports whether err means the file is not there (ENOENT or
// ENOTDIR): a fact to the gatherers, not a failure.
func Missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
