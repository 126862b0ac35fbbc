package image

import (
	"errors"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/ldso"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// cudaLibDirs maps a CUDA library (its soname without the version) to the
// pip wheel directory that ships it, site-packages/nvidia/<dir>/lib, and
// so to the wheel nvidia-<dir>-cuNN. The cuDNN sub-libraries
// (libcudnn_ops, libcudnn_cnn, ...) go with libcudnn. Source: the
// nvidia-*-cu12 wheels' layouts (docs/sources.md, "CUDA stack versions on disk") and
// torch/__init__.py's cuda_libs table.
var cudaLibDirs = []struct{ lib, dir string }{
	{"libcudart", "cuda_runtime"},
	{"libcudnn", "cudnn"},
	{"libnccl", "nccl"},
	{"libcublas", "cublas"},
	{"libcublasLt", "cublas"},
	{"libcusparse", "cusparse"},
	{"libcusparseLt", "cusparselt"},
	{"libcufft", "cufft"},
	{"libcurand", "curand"},
	{"libcusolver", "cusolver"},
	{"libnvrtc", "cuda_nvrtc"},
	{"libnvJitLink", "nvjitlink"},
	{"libcupti", "cuda_cupti"},
	{"libnvToolsExt", "nvtx"},
}

// cudaLibrary returns the library of a soname ("libcudnn_ops.so.9" ->
// "libcudnn_ops") and its wheel directory, ok false for a library that is
// not one of CUDA's.
func cudaLibrary(soname string) (lib, dir string, ok bool) {
	lib, _, found := strings.Cut(soname, ".so")
	if !found {
		return "", "", false
	}
	for _, l := range cudaLibDirs {
		if l.lib == lib {
			return lib, l.dir, true
		}
	}
	if strings.HasPrefix(lib, "libcudnn_") {
		return lib, "cudnn", true
	}
	return "", "", false
}

// torchPreload is what torch/__init__.py's _load_global_deps preloads when
// loading libtorch_global_deps.so fails for a missing CUDA library: for
// each wheel directory, the first match of the pattern under
// <sys.path entry>/nvidia/<dir>/lib, in sys.path order (torch 2.1 to 2.6;
// glob order, taken here as sorted).
var torchPreload = []struct{ dir, pattern string }{
	{"cublas", "libcublas.so.*[0-9]"},
	{"cudnn", "libcudnn.so.*[0-9]"},
	{"cuda_nvrtc", "libnvrtc.so.*[0-9]"},
	{"cuda_runtime", "libcudart.so.*[0-9]"},
	{"cuda_cupti", "libcupti.so.*[0-9]"},
	{"cufft", "libcufft.so.*[0-9]"},
	{"curand", "libcurand.so.*[0-9]"},
	{"nvjitlink", "libnvJitLink.so.*[0-9]"},
	{"cusparse", "libcusparse.so.*[0-9]"},
	{"cusparselt", "libcusparseLt.so.*[0-9]"},
	{"cusolver", "libcusolver.so.*[0-9]"},
	{"nccl", "libnccl.so.*[0-9]"},
	{"nvtx", "libnvToolsExt.so.*[0-9]"},
}

// frameworkDists are the distributions whose METADATA pins a framework's
// CUDA wheels.
var frameworkDists = []struct {
	framework string
	dists     []string
}{
	{"torch", []string{"torch"}},
	{"paddlepaddle", []string{"paddlepaddle_gpu"}},
	{"tensorflow", []string{"tensorflow", "tensorflow_gpu"}},
	{"jax", []string{"jax_cuda13_plugin", "jax_cuda12_plugin", "jaxlib"}},
}

// distsOf are frameworkDists' distributions of the framework named name.
func distsOf(name string) []string {
	for _, f := range frameworkDists {
		if f.framework == name {
			return f.dists
		}
	}
	return nil
}

// cudaLibraries fills s.res.CUDALibraries: for every framework with a CUDA
// build, the CUDA libraries its kernel libraries load, following ld.so's
// search order in this image.
func (s *scanner) cudaLibraries() {
	env := s.loaderEnv()
	fs := scanFS{s}
	// The loader model goes on with what it could read of an object (one
	// read in part says what was cut); each such object is warned of once.
	warned := map[string]bool{}
	warn := func(objs []ldso.Object) {
		for _, o := range objs {
			if o.Error != "" && !warned[o.Path] {
				warned[o.Path] = true
				s.warnf("image: the dynamic section of %s: %s", o.Path, o.Error)
			}
		}
	}
	for _, fw := range s.res.Frameworks {
		if fw.Build != facts.BuildCUDA && fw.CUDAVersion == "" {
			continue
		}
		roots := s.loaderRoots(fw)
		if len(roots) == 0 {
			continue
		}
		objs := ldso.Load(fs, env, nil, roots)
		warn(objs)
		if fw.Name == "torch" && missingCUDALib(objs) {
			if pre := s.torchPreloads(fw); len(pre) > 0 {
				objs = ldso.Load(fs, env, pre, roots)
				warn(objs)
			}
		}
		built := s.builtFor(fw)
		for _, o := range objs {
			lib, dir, ok := cudaLibrary(path.Base(o.Name))
			if !ok {
				continue
			}
			cl := facts.CUDALibrary{Framework: fw.Name, FrameworkLocation: fw.Location, Name: path.Base(o.Name), Library: lib}
			if major := cudaMajor(fw.CUDAVersion); major != "" {
				cl.Wheel = "nvidia-" + strings.ReplaceAll(dir, "_", "-") + "-cu" + major
			}
			if o.Path != "" {
				cl.Loaded = s.libraryCopy(o.Path, lib, dir)
				cl.Loaded.Via, cl.Loaded.ViaObject = o.Via, o.By
			}
			if b, ok := built[lib]; ok {
				cl.BuiltFor, cl.BuiltForSource = b.Version, b.Source
			}
			cl.Others = s.otherCopies(lib, dir, cl.Loaded.Path, env)
			s.res.CUDALibraries = append(s.res.CUDALibraries, cl)
		}
	}
}

// cudaMajor is "12" for "12.1"; "" when cuda is not a version.
func cudaMajor(cuda string) string {
	major, _, _ := strings.Cut(cuda, ".")
	if major == "" || !digitsOnly(major) {
		return ""
	}
	return major
}

// missingCUDALib reports whether a CUDA library was asked for and not found.
func missingCUDALib(objs []ldso.Object) bool {
	return slices.ContainsFunc(objs, func(o ldso.Object) bool {
		_, _, ok := cudaLibrary(path.Base(o.Name))
		return ok && o.Path == ""
	})
}

// loaderRoots are the framework's libraries in the order the framework
// loads them: the roots of its kernel closure (kernels.go), torch's
// libtorch_global_deps.so first (torch/__init__.py loads it with
// RTLD_GLOBAL before importing torch._C).
func (s *scanner) loaderRoots(fw facts.Framework) []string {
	return s.roots[fw.Location]
}

// torchPreloads are the paths torch's _preload_cuda_deps would load, from
// the sys.path of fw's environment.
func (s *scanner) torchPreloads(fw facts.Framework) []string {
	dirs := s.res.SitePackages
	if v, ok := s.views[fw.Location]; ok {
		dirs = v.dirs()
	}
	var out []string
	for _, p := range torchPreload {
		for _, sp := range dirs {
			dir := path.Join(sp, "nvidia", p.dir, "lib")
			var match []string
			for _, n := range s.list(dir) {
				if ok, _ := path.Match(p.pattern, n); ok {
					match = append(match, n)
				}
			}
			if len(match) > 0 {
				sort.Strings(match)
				out = append(out, path.Join(dir, match[0]))
				break
			}
		}
	}
	return out
}

// builtVersion is a version a framework was built against.
type builtVersion struct{ Version, Source string }

// builtFor returns, per CUDA library, the version the framework was built
// against: its METADATA's pins of the nvidia-* wheels (exact for torch,
// minimums for the jax plugin), else its own records of CUDA and cuDNN.
func (s *scanner) builtFor(fw facts.Framework) map[string]builtVersion {
	out := map[string]builtVersion{}
	if fw.CUDAVersion != "" {
		out["libcudart"] = builtVersion{fw.CUDAVersion, fw.Source}
	}
	if fw.CuDNNVersion != "" {
		out["libcudnn"] = builtVersion{fw.CuDNNVersion, fw.Source}
	}
	sp := path.Dir(fw.Location)
	dist := func(name string) (distInfo, bool) { d, ok := s.distInfos(sp)[name]; return d, ok }
	if v, ok := s.views[fw.Location]; ok {
		dist = v.dist
	}
	for _, name := range distsOf(fw.Name) {
		d, ok := dist(name)
		if !ok {
			continue
		}
		md := path.Join(distPath(sp, d), "METADATA")
		for _, r := range parseRequiresDist(s.read(md)) {
			for _, l := range cudaLibDirs {
				if strings.HasPrefix(r.Name, "nvidia_"+l.dir+"_cu") {
					out[l.lib] = builtVersion{r.Version, md + " (" + r.Name + r.Op + r.Version + ")"}
				}
			}
		}
		break
	}
	return out
}

// libraryCopy describes the library file at p: its version from the real
// file's name (libcudnn.so.9 -> libcudnn.so.9.1.0), else from the pip
// wheel it belongs to, else from the cuDNN header beside it.
func (s *scanner) libraryCopy(p, lib, dir string) facts.LibraryCopy {
	c := facts.LibraryCopy{Path: p}
	real := p
	if host, err := s.root.Resolve(p); err == nil {
		real = path.Base(host)
	}
	if v, ok := sonameVersion(path.Base(real), lib+".so"); ok {
		c.Version, c.VersionSource = v, facts.VersionFromFileName
		if path.Base(real) != path.Base(p) {
			c.VersionSource = facts.VersionFromFileName + " " + path.Base(real)
		}
	}
	if components(c.Version) > 1 {
		return c
	}
	// <site-packages>/nvidia/<dir>/lib/<file>: the wheel's release.
	libDir := path.Dir(p)
	if path.Base(libDir) == "lib" && path.Base(path.Dir(path.Dir(libDir))) == "nvidia" {
		sp := path.Dir(path.Dir(path.Dir(libDir)))
		wheelDir := path.Base(path.Dir(libDir))
		for name, d := range s.distInfos(sp) {
			if strings.HasPrefix(name, "nvidia_"+wheelDir+"_cu") {
				c.Version, c.VersionSource = d.Version, distPath(sp, d)
				return c
			}
		}
	}
	if dir == "cudnn" {
		for _, h := range []string{"cudnn_version.h", "cudnn.h"} {
			hp := path.Join(path.Dir(libDir), "include", h)
			if v, ok := parseCuDNNHeader(s.read(hp)); ok {
				c.Version, c.VersionSource = v, hp
				return c
			}
		}
	}
	return c
}

// otherCopies lists the files of lib, other than the loaded one, in the
// places a second CUDA stack lives: the loader's search path
// (LD_LIBRARY_PATH, the cache's entries for lib, the system directories),
// the usual library directories (/usr/local/cuda, TensorRT), every
// site-packages' nvidia/<dir>/lib, and conda's lib directories. Copies
// that are the same file (links) count once.
func (s *scanner) otherCopies(lib, dir, loaded string, env ldso.Env) []facts.LibraryCopy {
	var dirs []string
	dirs = append(dirs, env.LibraryPath...)
	for _, e := range env.Cache {
		if l, _, ok := cudaLibrary(e.Name); ok && l == lib {
			dirs = append(dirs, path.Dir(e.Path))
		}
	}
	dirs = append(dirs, env.SystemDirs...)
	dirs = append(dirs, libDirs...)
	for _, sp := range s.res.SitePackages {
		dirs = append(dirs, path.Join(sp, "nvidia", dir, "lib"), path.Join(sp, "nvidia", "cu13", "lib"))
	}
	dirs = append(dirs, s.condaLibDirs()...)
	seen := map[string]bool{}
	if loaded != "" {
		if h, err := s.root.Resolve(loaded); err == nil {
			seen[h] = true
		}
	}
	var out []facts.LibraryCopy
	listed := map[string]bool{}
	for _, d := range dirs {
		d = path.Clean(d)
		if listed[d] || len(out) >= maxOtherCopies {
			continue
		}
		listed[d] = true
		for _, n := range s.list(d) {
			v, ok := sonameVersion(n, lib+".so")
			if !ok || v == "" {
				continue
			}
			p := path.Join(d, n)
			h, err := s.root.Resolve(p)
			if err != nil || seen[h] || !s.isFile(p) {
				continue
			}
			seen[h] = true
			out = append(out, s.libraryCopy(p, lib, dir))
		}
	}
	return out
}

// maxOtherCopies bounds the copies listed per library.
const maxOtherCopies = 32

// condaLibDirs are the lib directories of the conda environments found
// (preflight/pyenv: CONDA_PREFIX, PATH, the installers' default prefixes
// and their named environments).
func (s *scanner) condaLibDirs() []string {
	var out []string
	for _, e := range s.res.Environments {
		if e.Kind == pyenv.KindConda {
			out = append(out, path.Join(e.Prefix, "lib"))
		}
	}
	return out
}

// loaderEnv is ld.so's configuration in the image: LD_LIBRARY_PATH, the
// image's /etc/ld.so.cache, and its glibc's system directories (Debian's
// multiarch ones when the image has them, else /lib64 and /usr/lib64).
func (s *scanner) loaderEnv() ldso.Env {
	var env ldso.Env
	env.LibraryPath, _ = searchPath(s.env, "LD_LIBRARY_PATH")
	env.Cache = s.ldCache("/etc/ld.so.cache")
	for _, triplet := range []string{"x86_64-linux-gnu", "aarch64-linux-gnu"} {
		if fi, err := s.root.Stat("/usr/lib/" + triplet); err == nil && fi.IsDir() {
			env.SystemDirs = ldso.DebianSystemDirs(triplet)
			env.LibDir = "lib/" + triplet
			return env
		}
	}
	env.SystemDirs = []string{"/lib64", "/usr/lib64"}
	env.LibDir = "lib64"
	return env
}

// ldCache reads the image's ld.so cache at p in place (ldso.ReadCache):
// its memory is bounded by the entries kept, not by the file's size.
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

// isFile reports whether p is a regular file, from its directory's listing
// (stamped, so a manifest sees a file appear) and a stat.
func (s *scanner) isFile(p string) bool {
	if _, ok := slices.BinarySearch(s.list(path.Dir(p)), path.Base(p)); !ok {
		return false
	}
	fi, err := s.root.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// scanFS is the scanner as the loader model's file system.
type scanFS struct{ s *scanner }

func (f scanFS) IsFile(p string) bool { return f.s.isFile(p) }

// Dynamic reads each object once per scan: the kernel closure and the
// CUDA stack walk the same objects, and libtorch_cuda.so's dynamic string
// table alone is 11 MiB.
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
