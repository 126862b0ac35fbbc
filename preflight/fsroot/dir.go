package fsroot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
)

// MaxDirEntries bounds ReadDir and ReadDirNames: real images' largest
// directories hold a few thousand entries.
const MaxDirEntries = 1 << 15

const dirBatch = 1024

// ErrTooManyEntries is wrapped by a listing cut at its bound.
var ErrTooManyEntries = errors.New("more directory entries than gpu-preflight lists")

// ReadDir lists the directory p names inside the root, sorted by name: at
// most MaxDirEntries of them, then with an error wrapping ErrTooManyEntries.
func (r Root) ReadDir(p string) ([]fs.DirEntry, error) {
	var entries []fs.DirEntry
	err := r.listDir(p, MaxDirEntries, func(f *os.File) (int, error) {
		batch, err := f.ReadDir(dirBatch)
		entries = append(entries, batch...)
		return len(entries), err
	})
	entries = entries[:min(len(entries), MaxDirEntries)]
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// ReadDirNames is ReadDir's names alone.
func (r Root) ReadDirNames(p string) ([]string, error) {
	return r.ReadDirNamesFunc(p, MaxDirEntries, nil)
}

// ReadDirNamesFunc returns the sorted names in directory p that keep accepts
// (all for nil), looking at no more than max entries (then its error wraps
// ErrTooManyEntries). Only kept names are held.
func (r Root) ReadDirNamesFunc(p string, max int, keep func(string) bool) ([]string, error) {
	var names []string
	seen := 0
	err := r.listDir(p, max, func(f *os.File) (int, error) {
		batch, err := f.Readdirnames(dirBatch)
		seen += len(batch)
		for _, n := range batch {
			if keep == nil || keep(n) {
				names = append(names, n)
			}
		}
		return seen, err
	})
	names = slices.Clip(names[:min(len(names), max)])
	slices.Sort(names)
	return names, err
}

// listDir calls batch, which reads entries and says how many it has read in
// all, until the directory ends or more than max were read.
func (r Root) listDir(p string, max int, batch func(*os.File) (int, error)) error {
	host, err := r.lookup("open", p, true)
	if err != nil {
		return err
	}
	// O_DIRECTORY refuses a FIFO in a directory's place instead of blocking.
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
		case n > max:
			return &fs.PathError{Op: "readdir", Path: host, Err: fmt.Errorf("%w: the first %d read, in the directory's own order", ErrTooManyEntries, max)}
		}
	}
}

// Glob returns the sorted paths inside the root that match pattern
// (path.Match's syntax, in any component); unreadable directories match
// nothing.
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
