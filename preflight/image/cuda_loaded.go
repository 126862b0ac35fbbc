package image

import (
	"path"
	"slices"
	"sort"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/ldso"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

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

func distsOf(name string) []string {
	for _, f := range frameworkDists {
		if f.framework == name {
			return f.dists
		}
	}
	return nil
}

// cudaLibraries fills s.res.CUDALibraries: the CUDA libraries each CUDA
// framework loads, as ld.so would find them in this image.
func (s *scanner) cudaLibraries() {
	env := s.loaderEnv()
	fs := scanFS{s}
	// An object read in part is warned of once.
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
				cl.Wheel = wheelProject(dir, major)
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

// missingCUDALib reports whether a CUDA library was asked for and not found.
func missingCUDALib(objs []ldso.Object) bool {
	return slices.ContainsFunc(objs, func(o ldso.Object) bool {
		_, _, ok := cudaLibrary(path.Base(o.Name))
		return ok && o.Path == ""
	})
}

// loaderRoots are the roots kernels found for fw, in load order.
func (s *scanner) loaderRoots(fw facts.Framework) []string {
	return s.roots[fw.Location]
}

// torchPreloads are the paths torch's _preload_cuda_deps would load: for
// each library, the first match of <lib>.so.*[0-9] (glob order, taken as
// sorted) under the first sys.path entry of fw's environment holding one,
// in nvidia/<wheel>/lib, nvidia/cu<major>/lib (from CUDA 13) or <wheel>/lib
// (torch/__init__.py _get_cuda_dep_paths).
func (s *scanner) torchPreloads(fw facts.Framework) []string {
	dirs := s.res.SitePackages
	if v, ok := s.views[fw.Location]; ok {
		dirs = v.dirs()
	}
	var out []string
	for _, l := range cudaLibs {
		if !l.torchPreload {
			continue
		}
		for _, sp := range dirs {
			if p, ok := s.preloadIn(sp, l, cudaMajor(fw.CUDAVersion)); ok {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// preloadIn is the library torch's glob finds for l under sys.path entry sp.
func (s *scanner) preloadIn(sp string, l cudaLib, major string) (string, bool) {
	dirs := []string{path.Join(sp, "nvidia", l.wheel, "lib")}
	if major != "" {
		dirs = append(dirs, path.Join(sp, "nvidia", "cu"+major, "lib"))
	}
	for _, dir := range append(dirs, path.Join(sp, l.wheel, "lib")) {
		var match []string
		for _, n := range s.list(dir) {
			if ok, _ := path.Match(l.name+".so.*[0-9]", n); ok {
				match = append(match, n)
			}
		}
		if len(match) > 0 {
			sort.Strings(match)
			return path.Join(dir, match[0]), true
		}
	}
	return "", false
}

// builtVersion is a version a framework was built against.
type builtVersion struct{ Version, Source string }

// builtFor returns, per CUDA library, the version fw was built against: its
// METADATA's pins of the wheels, else its own records of CUDA and cuDNN.
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
			if r.Name == cudaToolkitDist {
				s.toolkitPins(out, r, md, dist)
				continue
			}
			pinWheels(out, r, md)
		}
		break
	}
	return out
}

// cudaToolkitDist is NVIDIA's cuda-toolkit metapackage, whose extras pin
// the CUDA 13 wheels (torch from 2.11: cuda-toolkit[cublas,cudart,...]==13.0.2).
const cudaToolkitDist = "cuda_toolkit"

// pinWheels records what requirement r of METADATA md pins of the wheels.
func pinWheels(out map[string]builtVersion, r requirement, md string) {
	for _, l := range cudaLibs {
		if isWheelOf(r.Name, l.wheel) {
			out[l.name] = builtVersion{r.Version, md + " (" + r.Name + r.Op + r.Version + ")"}
		}
	}
}

// toolkitPins records the wheels cuda-toolkit's own METADATA pins for the
// extras r asks for; without it installed, the toolkit release r pins is
// the CUDA runtime's.
func (s *scanner) toolkitPins(out map[string]builtVersion, r requirement, md string, dist func(string) (distInfo, bool)) {
	if slices.Contains(r.Extras, "cudart") {
		out["libcudart"] = builtVersion{r.Version, md + " (" + r.Name + r.Op + r.Version + ")"}
	}
	if d, ok := dist(cudaToolkitDist); ok && d.dir() != "" {
		tmd := path.Join(d.dir(), "METADATA")
		for _, pin := range parseRequiresDist(s.read(tmd)) {
			if pin.Extra != "" && slices.Contains(r.Extras, pin.Extra) {
				pinWheels(out, pin, tmd)
			}
		}
	}
}

// otherCopies lists the files of lib but the loaded one where a second
// CUDA stack lives: the loader's search path, libDirs, the wheels' lib
// directories and conda's. Links to one file count once.
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
		for _, d := range wheelLibDirs(dir) {
			dirs = append(dirs, path.Join(sp, d))
		}
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

const maxOtherCopies = 32

// condaLibDirs are the lib directories of the conda environments found.
func (s *scanner) condaLibDirs() []string {
	var out []string
	for _, e := range s.res.Environments {
		if e.Kind == pyenv.KindConda {
			out = append(out, path.Join(e.Prefix, "lib"))
		}
	}
	return out
}
