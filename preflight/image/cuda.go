package image

import (
	"path"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// cudaLib is a CUDA library as a process loads it and a pip wheel ships it.
type cudaLib struct {
	name         string // the soname up to ".so": "libcublasLt"
	wheel        string // its wheel's directory under site-packages/nvidia
	torchPreload bool   // from its wheel, when libtorch_global_deps.so fails
}

// cudaLibs are the CUDA libraries the scan follows, in the order torch
// 2.1-2.6 preloads them (torch/__init__.py's cuda_libs; the nvidia-*-cu12
// wheels' layouts: docs/sources.md, "CUDA stack versions on disk"). The
// cuDNN sub-libraries go with libcudnn (cudaLibrary).
var cudaLibs = []cudaLib{
	{"libcublas", "cublas", true},
	{"libcublasLt", "cublas", false},
	{"libcudnn", "cudnn", true},
	{"libnvrtc", "cuda_nvrtc", true},
	{"libcudart", "cuda_runtime", true},
	{"libcupti", "cuda_cupti", true},
	{"libcufft", "cufft", true},
	{"libcurand", "curand", true},
	{"libnvJitLink", "nvjitlink", true},
	{"libcusparse", "cusparse", true},
	{"libcusparseLt", "cusparselt", true},
	{"libcusolver", "cusolver", true},
	{"libnccl", "nccl", true},
	{"libnvToolsExt", "nvtx", true},
}

// cudaLibrary returns the library of a soname ("libcudnn_ops.so.9" ->
// "libcudnn_ops") and its wheel directory; ok is false for one not CUDA's.
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

// cuda13WheelDir is where CUDA 13's wheels put their libraries; earlier
// ones, nvidia-<wheel>-cuNN, in nvidia/<wheel>.
const cuda13WheelDir = "nvidia/cu13"

// wheelMajors are the CUDA majors wheels are looked for, newest first.
var wheelMajors = []string{"13", "12", "11"}

// wheelDist is the normalized name of wheel for a CUDA major.
func wheelDist(wheel, major string) string { return "nvidia_" + wheel + "_cu" + major }

// wheelProject is that distribution as pip spells it: "nvidia-cudnn-cu12".
func wheelProject(wheel, major string) string {
	return "nvidia-" + strings.ReplaceAll(wheel, "_", "-") + "-cu" + major
}

// isWheelOf reports whether distribution name is wheel's, for any major.
func isWheelOf(name, wheel string) bool { return strings.HasPrefix(name, "nvidia_"+wheel+"_cu") }

func wheelDists(wheel string) []string {
	var out []string
	for _, m := range wheelMajors {
		out = append(out, wheelDist(wheel, m))
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
		for name, d := range s.distInfos(sp) {
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
