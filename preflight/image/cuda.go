package image

import (
	"path"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
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

// libDirs are where apt, the CUDA tarballs and NGC images put the CUDA
// libraries (Debian multiarch, RHEL lib64, /usr/local/cuda, TensorRT
// tarballs). LD_LIBRARY_PATH entries are searched after them.
var libDirs = []string{
	"/usr/lib/x86_64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu",
	"/usr/lib64",
	"/usr/lib",
	"/usr/local/cuda/lib64",
	"/usr/local/cuda/targets/x86_64-linux/lib",
	"/usr/local/cuda/targets/sbsa-linux/lib",
	"/usr/local/lib",
	"/usr/local/tensorrt/lib",
	"/opt/tensorrt/lib",
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
