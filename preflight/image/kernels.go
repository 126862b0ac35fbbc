package image

import (
	"path"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/ldso"
)

// dlopenList is what a library (by, a name up to ".so" or a soname
// prefix) opens by name at run time, which no DT_NEEDED entry names.
type dlopenList struct {
	by     string
	names  []string
	source string
}

// cudnn9Subs and cudnn8Subs are what libcudnn.so, a shim since cuDNN 8,
// loads on first use (cuDNN's "API Overview"; the 9.x wheels' files).
var (
	cudnn9Subs = []string{
		"libcudnn_graph.so.9", "libcudnn_engines_precompiled.so.9", "libcudnn_engines_runtime_compiled.so.9",
		"libcudnn_heuristic.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9",
	}
	cudnn8Subs = []string{
		"libcudnn_ops_infer.so.8", "libcudnn_ops_train.so.8", "libcudnn_cnn_infer.so.8",
		"libcudnn_cnn_train.so.8", "libcudnn_adv_infer.so.8", "libcudnn_adv_train.so.8",
	}
)

// cuda12Libs and cuda11Libs are what TensorFlow's and XLA's DSO loader
// (tsl/platform/default/dso_loader.cc) and Paddle's dynload open by name.
var (
	cuda12Libs = []string{
		"libcudart.so.12", "libcublas.so.12", "libcublasLt.so.12", "libcufft.so.11", "libcurand.so.10",
		"libcusolver.so.11", "libcusparse.so.12", "libnccl.so.2", "libcudnn.so.9", "libcudnn.so.8",
	}
	cuda11Libs = []string{
		"libcudart.so.11.0", "libcublas.so.11", "libcublasLt.so.11", "libcufft.so.10", "libcurand.so.10",
		"libcusolver.so.11", "libcusparse.so.11", "libnccl.so.2", "libcudnn.so.8",
	}
)

// dlopenLists returns what the framework's process opens by name.
func dlopenLists(fw facts.Framework) []dlopenList {
	lists := []dlopenList{
		{"libcudnn.so.9", cudnn9Subs, "cuDNN 9 sub-libraries"},
		{"libcudnn.so.8", cudnn8Subs, "cuDNN 8 sub-libraries"},
	}
	libs := cuda12Libs
	if cudaMajor(fw.CUDAVersion) == "11" {
		libs = cuda11Libs
	}
	switch fw.Name {
	case "torch":
		// BUILD_LAZY_CUDA_LINALG (LinearAlgebraStubs.cpp): opened by its
		// path in torch/lib on the first linear algebra call.
		lists = append(lists, dlopenList{"libtorch_cuda", []string{path.Join(fw.Location, "lib/libtorch_cuda_linalg.so")}, "torch's lazy linalg library"})
	case "tensorflow":
		lists = append(lists, dlopenList{"libtensorflow_framework", libs, "TensorFlow's DSO loader"})
	case "jax":
		lists = append(lists, dlopenList{"xla_cuda_plugin", libs, "XLA's DSO loader"})
	case "paddlepaddle":
		lists = append(lists, dlopenList{"libpaddle", libs, "Paddle's dynload"}, dlopenList{"libphi", libs, "Paddle's dynload"})
	}
	return lists
}

// kernels sets f.Kernels and f.Archs: the libraries with device code in
// the load closure of the framework's modules (patterns under sp) and what
// dlopenLists opens, or the modules alone for a CPU build. Every object the
// process maps can hold kernels (docs/fatbin.md, "Which libraries are
// scanned").
func (s *scanner) kernels(f *facts.Framework, sp string, patterns []string, recorded []string) {
	var roots []string
	seen := map[string]bool{} // host paths recorded
	record := func(k facts.KernelLibrary) {
		if host, err := s.root.Resolve(k.Path); err == nil {
			seen[host] = true
		}
		f.Kernels = append(f.Kernels, k)
	}
	// Its own modules are recorded whatever they hold, for the manifest.
	for _, pat := range patterns {
		for _, p := range s.expand(sp, pat) {
			if slices.Contains(roots, p) {
				continue
			}
			if k, ok := s.kernelLibrary(p); ok {
				roots = append(roots, p)
				k.Soname, k.Why, k.Via = path.Base(p), "framework module", ldso.ViaPath
				record(k)
			}
		}
	}
	if f.Build == facts.BuildCPU || s.outOfTime() {
		f.Archs = mergeArchs(recorded, f.Kernels)
		return
	}
	var dl []ldso.Dlopen
	source := map[string]string{}
	for _, l := range dlopenLists(*f) {
		for _, n := range l.names {
			dl = append(dl, ldso.Dlopen{By: l.by, Name: n})
			source[n] = l.source
		}
	}
	objs := ldso.LoadDlopen(scanFS{s}, s.ldEnv(), nil, roots, dl)
	// cudaLibraries loads these roots without the dlopen model.
	if s.roots == nil {
		s.roots = map[string][]string{}
	}
	stack := slices.Clone(roots)
	for _, o := range objs {
		if o.DlopenBy != "" && strings.HasPrefix(o.Name, "/") && o.Path != "" {
			stack = append(stack, o.Path)
		}
	}
	s.roots[f.Location] = stack
	lazy := map[string]bool{} // paths loaded by dlopen, or needed by one that was
	for _, o := range objs {
		if o.Path == "" || o.Error != "" {
			continue
		}
		if o.DlopenBy != "" || lazy[o.NeededBy] {
			lazy[o.Path] = true
		}
		host, err := s.root.Resolve(o.Path)
		if err != nil || seen[host] {
			continue
		}
		k, ok := s.kernelLibrary(o.Path)
		if !ok || (len(k.Images) == 0 && len(k.Fatbins) == 0 && k.Error == "") {
			continue // no device code: not a kernel library
		}
		k.Soname, k.Via, k.Lazy = path.Base(o.Name), o.Via, lazy[o.Path]
		switch {
		case o.DlopenBy != "":
			k.Why = "dlopen by " + o.DlopenBy + " (" + source[o.Name] + ")"
		case o.NeededBy != "":
			k.Why = "DT_NEEDED of " + o.NeededBy
		}
		lib, dir, isCUDA := cudaLibrary(k.Soname)
		k.CUDA = isCUDA
		if lib == "" {
			lib, _, _ = strings.Cut(k.Soname, ".so")
		}
		k.Version = s.libraryCopy(o.Path, lib, dir).Version
		record(k)
	}
	f.Archs = mergeArchs(recorded, f.Kernels)
}

// expand returns the paths pat names under sp.
func (s *scanner) expand(sp, pat string) []string {
	if !strings.ContainsAny(pat, "*?[") {
		return []string{path.Join(sp, pat)}
	}
	dir, filePat := path.Split(path.Join(sp, pat))
	dir = path.Clean(dir)
	if strings.ContainsAny(dir, "*?[") {
		m, _ := s.root.Glob(path.Join(sp, pat))
		return m
	}
	var out []string
	for _, n := range s.list(dir) {
		if ok, _ := path.Match(filePat, n); ok {
			out = append(out, path.Join(dir, n))
		}
	}
	return out
}

// kernelLibrary scans one library, unless known holds it; ok is false when
// p is not a regular file.
func (s *scanner) kernelLibrary(p string) (facts.KernelLibrary, bool) {
	if s.outOfTime() {
		return facts.KernelLibrary{}, false
	}
	s.stamp(p)
	fi, err := s.root.Stat(p)
	if err != nil {
		return facts.KernelLibrary{}, false
	}
	if !fi.Mode().IsRegular() {
		return facts.KernelLibrary{}, false
	}
	k := facts.KernelLibrary{Path: p, Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	key := libraryKey{p, k.Size, unixSeconds(k.ModTime)}
	if known, ok := s.known[key]; ok {
		k.Images, k.Fatbins, k.Error = known.Images, known.Fatbins, known.Error
		return k, true
	}
	host, err := s.root.Resolve(p)
	if err != nil {
		k.Error = err.Error()
		return k, true
	}
	r, err := s.scanFile(host)
	k.Images, k.Fatbins = r.Images, r.Fatbins
	if err != nil {
		k.Error = err.Error()
		s.warnf("image: scanning kernels of %s: %v", p, err)
	}
	for _, w := range r.Warnings {
		s.warnf("image: %s: %s", p, w)
	}
	if s.known == nil {
		s.known = map[libraryKey]facts.KernelLibrary{}
	}
	s.known[key] = k
	return k, true
}

// libraryKey identifies a library file: path, size and time to the second.
type libraryKey struct {
	path    string
	size    int64
	modTime int64
}

// knownLibraries are a manifest's kernel libraries, for a rescan to reuse.
func knownLibraries(m Manifest) map[libraryKey]facts.KernelLibrary {
	out := map[libraryKey]facts.KernelLibrary{}
	for _, f := range m.Frameworks {
		for _, k := range f.Kernels {
			if k.Error == "" {
				out[libraryKey{k.Path, k.Size, unixSeconds(k.ModTime)}] = k
			}
		}
	}
	return out
}
