// Package image finds what a container image carries for GPU work, without
// running Python: the CUDA library stack (cuDNN, NCCL, TensorRT), the deep
// learning frameworks installed in its Python environments (PaddlePaddle,
// PyTorch, TensorFlow, JAX) with the CUDA they were built for, and the GPU
// architectures their kernel libraries were compiled for, read from the
// libraries' fatbins.
//
// A scan reads version files, directory listings and the headers of a few
// large shared objects. Bake records its result in an image manifest at
// build time; Load reuses the manifest at run time while nothing it depends
// on has changed, and rescans otherwise.
//
// Where each fact lives is documented in research/fatbin-frameworks.md
// sections 3 and 4.
package image

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// Result is what a scan found.
type Result struct {
	Stack      facts.Stack       `json:"stack"`
	Frameworks []facts.Framework `json:"frameworks"`
	// SitePackages are the Python package directories found, in search
	// order (paths inside the root).
	SitePackages []string `json:"sitePackages"`
	// Inputs are the directories the scan listed and the files it read
	// versions from, with their size and modification time, so that a
	// manifest can tell whether a rescan would see anything new.
	Inputs []Stamp `json:"inputs"`
}

// Stamp identifies one version of a file or directory without reading it.
type Stamp struct {
	Path string `json:"path"`
	// Dir is true for a directory, whose size is not compared.
	Dir bool `json:"dir,omitempty"`
	// Missing is true for a place the scan looked at and found nothing:
	// a file appearing there later changes what a scan would find.
	Missing bool  `json:"missing,omitempty"`
	Size    int64 `json:"size"`
	ModTime int64 `json:"modTime"` // Unix nanoseconds
}

// EnvKeys are the environment variables a scan reads. A manifest records
// their values; a change makes Load rescan.
var EnvKeys = []string{
	"CONDA_PREFIX", "CUDNN_VERSION", "LD_LIBRARY_PATH", "NCCL_VERSION",
	"NV_CUDNN_VERSION", "PYTHONPATH", "VIRTUAL_ENV",
}

// scanFileFunc reads a library's fatbins; fatbin.ScanFile outside tests.
type scanFileFunc func(path string) (fatbin.Result, error)

// Scan scans the image under root. env is the container's environment (only
// EnvKeys are read). It never fails: what cannot be read is missing, and
// the returned warnings say what went wrong beyond "not there".
func Scan(root fsroot.Root, env map[string]string) (Result, []string) {
	return scan(root, env, fatbin.ScanFile)
}

func scan(root fsroot.Root, env map[string]string, scanFile scanFileFunc) (Result, []string) {
	s := &scanner{root: root, env: env, scanFile: scanFile, seen: map[string]bool{}}
	s.res.SitePackages = SitePackages(root, env)
	s.sitePackages()
	s.stack()
	s.frameworks()
	slices.SortFunc(s.res.Inputs, func(a, b Stamp) int { return strings.Compare(a.Path, b.Path) })
	s.res.Inputs = slices.CompactFunc(s.res.Inputs, func(a, b Stamp) bool { return a.Path == b.Path })
	return s.res, s.warnings
}

type scanner struct {
	root     fsroot.Root
	env      map[string]string
	scanFile scanFileFunc
	res      Result
	warnings []string
	// listings caches directory listings by path: each site-packages
	// directory is read once for all frameworks.
	listings map[string][]fs.DirEntry
	seen     map[string]bool
}

func (s *scanner) warnf(format string, args ...any) {
	s.warnings = append(s.warnings, fmt.Sprintf(format, args...))
}

// stamp records p (a file the scan read, or a directory it listed) among
// the inputs.
func (s *scanner) stamp(p string) {
	if s.seen[p] {
		return
	}
	s.seen[p] = true
	fi, err := s.root.Stat(p)
	if err != nil {
		if fsroot.Missing(err) {
			s.res.Inputs = append(s.res.Inputs, Stamp{Path: p, Missing: true})
		}
		return
	}
	st := Stamp{Path: p, Dir: fi.IsDir(), ModTime: fi.ModTime().UnixNano()}
	if !st.Dir {
		st.Size = fi.Size()
	}
	s.res.Inputs = append(s.res.Inputs, st)
}

// list returns the names in directory dir (nil when it is missing) and
// stamps it.
func (s *scanner) list(dir string) []string {
	if s.listings == nil {
		s.listings = map[string][]fs.DirEntry{}
	}
	entries, ok := s.listings[dir]
	if !ok {
		var err error
		entries, err = s.root.ReadDir(dir)
		if err != nil && !fsroot.Missing(err) {
			s.warnf("image: listing %s: %v", dir, err)
		}
		s.listings[dir] = entries
		s.stamp(dir)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}

// read returns the contents of file p, stamping it; nil when missing.
func (s *scanner) read(p string) []byte {
	s.stamp(p)
	b, err := s.root.ReadFile(p)
	if err != nil {
		if !fsroot.Missing(err) {
			s.warnf("image: reading %s: %v", p, err)
		}
		return nil
	}
	return b
}

// sitePackagePatterns are where Python packages live in images: the
// system interpreters (Debian's dist-packages, /usr/local builds), RHEL's
// lib64, conda's base and named environments, and root's user site.
var sitePackagePatterns = []string{
	"/usr/local/lib/python3*/dist-packages",
	"/usr/local/lib/python3*/site-packages",
	"/usr/local/lib64/python3*/site-packages",
	"/usr/lib/python3*/dist-packages",
	"/usr/lib/python3*/site-packages",
	"/usr/lib64/python3*/site-packages",
	"/opt/conda/lib/python3*/site-packages",
	"/opt/conda/envs/*/lib/python3*/site-packages",
	"/root/.local/lib/python3*/site-packages",
}

// SitePackages returns the Python package directories under root: those of
// VIRTUAL_ENV, CONDA_PREFIX and PYTHONPATH first (they take precedence at
// run time), then the usual system and conda places. A directory reached
// twice (through a link) is listed once.
func SitePackages(root fsroot.Root, env map[string]string) []string {
	var candidates []string
	for _, key := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if dir := env[key]; strings.HasPrefix(dir, "/") {
			m, _ := root.Glob(path.Join(dir, "lib/python3*/site-packages"))
			candidates = append(candidates, m...)
		}
	}
	for _, dir := range strings.Split(env["PYTHONPATH"], ":") {
		if strings.HasPrefix(dir, "/") {
			candidates = append(candidates, path.Clean(dir))
		}
	}
	for _, pat := range sitePackagePatterns {
		m, _ := root.Glob(pat)
		candidates = append(candidates, m...)
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range candidates {
		fi, err := root.Stat(c)
		if err != nil || !fi.IsDir() {
			continue
		}
		real, err := root.Resolve(c)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		out = append(out, c)
	}
	return out
}

// sitePackages lists each site-packages directory once, so that the
// framework and stack passes share the listing.
func (s *scanner) sitePackages() {
	for _, sp := range s.res.SitePackages {
		s.list(sp)
	}
}

// distInfos returns the distributions installed in site-packages dir sp,
// by normalized name.
func (s *scanner) distInfos(sp string) map[string]DistInfo {
	out := map[string]DistInfo{}
	for _, name := range s.list(sp) {
		d, ok := ParseDistInfoName(name)
		if !ok {
			continue
		}
		if _, dup := out[d.Name]; !dup {
			out[d.Name] = d
		}
	}
	return out
}

// firstDist returns the first of names installed, and which one it was.
func firstDist(dists map[string]DistInfo, names ...string) (DistInfo, bool) {
	for _, n := range names {
		if d, ok := dists[n]; ok {
			return d, true
		}
	}
	return DistInfo{}, false
}
