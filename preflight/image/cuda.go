package image

import (
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// cudaLib is a CUDA library as a process loads it and a pip wheel ships it.
type cudaLib struct {
	name  string // the soname up to ".so": "libcublasLt"
	wheel string // its wheel: nvidia-<wheel>-cuNN, its files in nvidia/<wheel>/lib
	// toolkit marks a CUDA Toolkit component: from CUDA 13 its wheel drops
	// the -cuNN suffix and all of them share nvidia/cuNN/lib.
	toolkit      bool
	torchPreload bool // from its wheel, when libtorch_global_deps.so fails
}

// cudaLibs are the CUDA libraries the scan follows, in the order torch
// preloads them (torch/__init__.py's cuda_libs; the wheels' layouts and the
// CUDA 13 toolkit components: docs/cuda-stack.md, "The wheels"). The cuDNN
// sub-libraries go with libcudnn (cudaLibrary).
var cudaLibs = []cudaLib{
	{"libcublas", "cublas", true, true},
	{"libcublasLt", "cublas", true, false},
	{"libcudnn", "cudnn", false, true},
	{"libnvrtc", "cuda_nvrtc", true, true},
	{"libcudart", "cuda_runtime", true, true},
	{"libcupti", "cuda_cupti", true, true},
	{"libcufft", "cufft", true, true},
	{"libcurand", "curand", true, true},
	{"libnvJitLink", "nvjitlink", true, true},
	{"libcusparse", "cusparse", true, true},
	{"libcusparseLt", "cusparselt", false, true},
	{"libcusolver", "cusolver", true, true},
	{"libnccl", "nccl", false, true},
	{"libnvshmem_host", "nvshmem", false, true},
	{"libcufile", "cufile", true, true},
	{"libnvToolsExt", "nvtx", true, true},
}

// cudaLibrary returns the library of a soname ("libcudnn_ops.so.9" ->
// "libcudnn_ops") and its wheel; ok is false for one not CUDA's.
func cudaLibrary(soname string) (lib, wheel string, ok bool) {
	lib, _, found := strings.Cut(soname, ".so")
	if !found {
		return "", "", false
	}
	for _, l := range cudaLibs {
		if l.name == lib {
			return lib, l.wheel, true
		}
	}
	if strings.HasPrefix(lib, "libcudnn_") {
		return lib, "cudnn", true
	}
	return "", "", false
}

// wheelMajors are the CUDA majors wheels are looked for, newest first.
var wheelMajors = []string{"13", "12", "11"}

// unsuffixed reports whether wheel's CUDA major release drops -cuNN: the
// toolkit components from CUDA 13 (nvidia-cuda-runtime 13.0.96).
func unsuffixed(wheel, major string) bool {
	n, _ := strconv.Atoi(major)
	return n >= 13 && slices.ContainsFunc(cudaLibs, func(l cudaLib) bool { return l.wheel == wheel && l.toolkit })
}

// wheelDist is the normalized name of wheel for a CUDA major:
// "nvidia_cudnn_cu12", "nvidia_cuda_runtime" for 13.
func wheelDist(wheel, major string) string {
	if unsuffixed(wheel, major) {
		return "nvidia_" + wheel
	}
	return "nvidia_" + wheel + "_cu" + major
}

// wheelProject is that distribution as pip spells it: "nvidia-cudnn-cu12".
func wheelProject(wheel, major string) string {
	return strings.ReplaceAll(wheelDist(wheel, major), "_", "-")
}

// isWheelOf reports whether distribution name is wheel's, for any major.
func isWheelOf(name, wheel string) bool {
	return strings.HasPrefix(name, "nvidia_"+wheel+"_cu") || name == "nvidia_"+wheel && unsuffixed(wheel, wheelMajors[0])
}

func wheelDists(wheel string) []string {
	var out []string
	for _, m := range wheelMajors {
		out = append(out, wheelDist(wheel, m))
	}
	return slices.Compact(out)
}

// wheelLibDir is where wheel puts its libraries for a CUDA major, under
// site-packages: nvidia/cudnn/lib, nvidia/cu13/lib for the CUDA 13 toolkit
// (NVIDIA cuda-python's cuda_pathfinder, SITE_PACKAGES_LIBDIRS_LINUX).
func wheelLibDir(wheel, major string) string {
	if unsuffixed(wheel, major) {
		return "nvidia/cu" + major + "/lib"
	}
	return "nvidia/" + wheel + "/lib"
}

// wheelLibDirs are wheel's library directories of every major.
func wheelLibDirs(wheel string) []string {
	var out []string
	for _, m := range wheelMajors {
		if d := wheelLibDir(wheel, m); !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// wheelHomes are the directories wheel's lib and include sit in.
func wheelHomes(wheel string) []string {
	var out []string
	for _, d := range wheelLibDirs(wheel) {
		out = append(out, path.Dir(d))
	}
	return out
}

// libDirs are where apt, the CUDA and TensorRT tarballs and NGC images put
// the CUDA libraries.
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

// libraryCopy describes the library file at p, its version from the real
// file's name, else from its wheel, else from the cuDNN header beside it.
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
	libDir := path.Dir(p)
	if path.Base(libDir) == "lib" && path.Base(path.Dir(path.Dir(libDir))) == "nvidia" {
		sp := path.Dir(path.Dir(path.Dir(libDir)))
		wheel := path.Base(path.Dir(libDir))
		if d, ok := s.recordOwner(sp, path.Join("nvidia", wheel, "lib", path.Base(p))); ok {
			c.Version, c.VersionSource = d.Version, path.Join(distPath(sp, d), "RECORD")
			return c
		}
		dists := s.distInfos(sp)
		if major, shared := strings.CutPrefix(wheel, "cu"); shared && digitsOnly(major) {
			if d, ok := dists[wheelDist(dir, major)]; ok {
				c.Version, c.VersionSource = d.Version, distPath(sp, d)
			}
			return c
		}
		for name, d := range dists {
			if isWheelOf(name, wheel) {
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
