package image

import (
	"errors"
	"path"
	"slices"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/ldso"
)

// loaderEnv is ld.so's configuration in the image: LD_LIBRARY_PATH, its
// ld.so.cache, and its glibc's system directories.
func (s *scanner) loaderEnv() ldso.Env {
	var env ldso.Env
	env.LibraryPath, _ = searchPath(s.env, "LD_LIBRARY_PATH")
	env.Cache = s.ldCache("/etc/ld.so.cache")
	for _, triplet := range []string{"x86_64-linux-gnu", "aarch64-linux-gnu"} {
		if s.root.IsDir("/usr/lib/" + triplet) {
			env.SystemDirs = ldso.DebianSystemDirs(triplet)
			env.LibDir = "lib/" + triplet
			return env
		}
	}
	env.SystemDirs = []string{"/lib64", "/usr/lib64"}
	env.LibDir = "lib64"
	return env
}

// ldEnv is the image's loader configuration, read once per scan.
func (s *scanner) ldEnv() ldso.Env {
	if s.loader == nil {
		env := s.loaderEnv()
		s.loader = &env
	}
	return *s.loader
}

// ldCache reads the image's ld.so cache at p in place.
func (s *scanner) ldCache(p string) []ldso.CacheEntry {
	if s.outOfTime() {
		return nil
	}
	s.stamp(p)
	f, err := s.root.Open(p)
	if err != nil {
		if !fsroot.Missing(err) {
			s.warnf("image: reading %s: %v", p, err)
		}
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		s.warnf("image: reading %s: %v", p, err)
		return nil
	}
	cache, err := ldso.ReadCache(f, fi.Size())
	if err != nil {
		s.warnf("image: %s: %v", p, err)
	}
	return cache
}

// isFile reports whether p is a regular file, through its directory's
// stamped listing, so that a manifest sees a file appear.
func (s *scanner) isFile(p string) bool {
	if _, ok := slices.BinarySearch(s.list(path.Dir(p)), path.Base(p)); !ok {
		return false
	}
	return s.root.IsFile(p)
}

// scanFS is the scanner as the loader model's file system.
type scanFS struct{ s *scanner }

func (f scanFS) IsFile(p string) bool { return f.s.isFile(p) }

// Dynamic reads each object once per scan: the kernel closure and the
// CUDA libraries walk the same objects.
func (f scanFS) Dynamic(p string) (ldso.Dynamic, error) {
	if d, ok := f.s.dynamics[p]; ok {
		return d.dyn, d.err
	}
	if f.s.outOfTime() {
		return ldso.Dynamic{}, errors.New("the scan's time budget is spent")
	}
	f.s.stamp(p)
	d, err := ldso.RootFS{Root: f.s.root}.Dynamic(p)
	if f.s.dynamics == nil {
		f.s.dynamics = map[string]dynamicRead{}
	}
	f.s.dynamics[p] = dynamicRead{d, err}
	return d, err
}

// dynamicRead is one object's dynamic section as read, or why not.
type dynamicRead struct {
	dyn ldso.Dynamic
	err error
}
