package image

import (
	"path"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/ldso"
)

// dlopenList is a set of libraries an object opens by name at run time,
// which no DT_NEEDED entry names.
type dlopenList struct {
	// By is the caller, a library name without ".so" or a soname prefix
	// ("libcudnn.so.9"); names are what it opens, in its order.
	by     string
	names  []string
	source string
}

// cudnn9Subs and cudnn8Subs are the sub-libraries libcudnn.so opens: since
// cuDNN 8 libcudnn.so is a shim that loads the library that implements a
// call on first use (NVIDIA cuDNN documentation, "API Overview" and the
// 8.x "Library Dependencies"; the 9.x sub-library list is the one the
// nvidia-cudnn-cu12 9.x wheels ship).
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

// cuda12Libs and cuda11Libs are the sonames of the CUDA libraries that
// TensorFlow's and XLA's DSO loader (tsl/platform/default/dso_loader.cc)
// and Paddle's dynload (paddle/phi/backends/dynload/dynamic_loader.cc)
// open by name for a CUDA 12 or 11 build, instead of linking them.
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
		// BUILD_LAZY_CUDA_LINALG: libtorch_cuda opens its linear
		// algebra library on the first such call
		// (aten/src/ATen/native/cuda/LinearAlgebraStubs.cpp; the name
		// libtorch_cuda_linalg.so is in Debian's libtorch_cuda.so.2.6
		// too). Modelled as opened by its path in torch/lib, where the
		// wheels and Debian (a link) both put it.
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

// kernels finds the framework's kernel libraries: the load closure of its
// extension modules and module-list libraries under sp (patterns relative
// to sp) for a GPU build, the listed libraries alone for a CPU one. It
// sets f.Kernels and f.Archs, the latter merging the archs the version
// files record with those found in the libraries.
func (s *scanner) kernels(f *facts.Framework, sp string, patterns []string, recorded []string) {
	var roots []string
	seen := map[string]bool{} // host paths recorded
	record := func(k facts.KernelLibrary) {
		if host, err := s.root.Resolve(k.Path); err == nil {
			seen[host] = true
		}
		f.Kernels = append(f.Kernels, k)
	}
	// The framework's own libraries are recorded whatever they hold, so
	// that a manifest notices one appearing or changing.
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
	// The CUDA stack check loads the same roots, and the libraries
	// opened by path, without the dlopen model: what loads eventually.
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

// expand returns the paths pat (relative to sp) names, listing a glob's
// directory once through the scan's cache.
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

// kernelLibrary scans one library; ok is false when p is not a regular
// file. A library scanned before in this scan, or recorded by the manifest
// this scan replaces with the same size and modification time, is not
// read again.
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

// libraryKey identifies a library file for the scan cache: its path, size
// and modification time to the second (what survives an image layer; see
// unixSeconds).
type libraryKey struct {
	path    string
	size    int64
	modTime int64
}

// knownLibraries is the library cache a manifest gives a rescan: every
// kernel library it recorded, by identity.
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
