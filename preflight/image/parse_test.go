package image

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
)

// Real inputs, in the forms docs/sources.md, "Framework build info on disk"
// record. They seed the fuzz targets too.

// torch/version.py as tools/generate_torch_version.py writes it (2.1).
const torchVersionCU118 = `from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']
__version__ = '2.1.0+cu118'
debug = False
cuda: Optional[str] = '11.8'
git_version = '7bcf7da3a268b435777fe87c7794c382f444e86d'
hip: Optional[str] = None
`

// Newer releases add rocm and xpu.
const torchVersionCU124 = `from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']
__version__ = '2.5.1+cu124'
debug = False
cuda: Optional[str] = '12.4'
git_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'
hip: Optional[str] = None
rocm: Optional[str] = None
xpu: Optional[str] = None
`

// A CPU build: cuda is None.
const torchVersionCPU = `from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']
__version__ = '2.1.0+cpu'
debug = False
cuda: Optional[str] = None
git_version = '7bcf7da3a268b435777fe87c7794c382f444e86d'
hip: Optional[str] = None
`

// NGC's PyTorch 23.10 build.
const torchVersionNGC = `from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']
__version__ = '2.1.0a0+32f93b1'
debug = False
cuda: Optional[str] = '12.2'
git_version = '32f93b1'
hip: Optional[str] = None
`

// paddle/version/__init__.py of a 2.6 GPU wheel (2.5 added xpu and cinn).
const paddleVersion26 = `# THIS FILE IS GENERATED FROM PADDLEPADDLE SETUP.PY
#
full_version    = '2.6.0'
major           = '2'
minor           = '6'
patch           = '0'
rc              = '0'
cuda_version    = '11.8'
cudnn_version   = '8.6.0'
xpu_version     = 'False'
xpu_xccl_version = 'False'
istaged         = True
commit          = 'e032331a5d55d7cbb5b6bf06c8b6ff5f4a53b3c4'
with_mkl        = 'ON'
cinn_version      = 'False'

__all__ = ['cuda', 'cudnn', 'show', 'xpu', 'xpu_xccl']

def show():
    """Get the version of paddle if ` + "`paddle`" + ` package if tagged. Otherwise, output the corresponding commit id.

    Returns:
        If paddle package is not tagged, the commit-id of paddle will be output.
        full_version = '9.9.9'
    """
    if istaged:
        print('full_version:', full_version)
        print('major:', major)
    else:
        print('commit:', commit)
    print('cuda:', cuda_version)

def cuda():
    return cuda_version
`

// paddle/version/__init__.py of a 3.x wheel from the cu126 index:
// nccl_version, is_tagged and compiled_cuda_archs.
const paddleVersion30 = `# THIS FILE IS GENERATED FROM PADDLEPADDLE SETUP.PY
#
full_version     = '3.0.0'
major            = '3'
minor            = '0'
patch            = '0'
nccl_version     = '2203'
rc               = '0'
cuda_version     = '12.6'
cudnn_version    = '9.5.1'
xpu_xre_version  = 'False'
xpu_xccl_version = 'False'
xpu_xhpc_version = 'False'
is_tagged          = True
commit           = 'cbf3469113cd76b7d5f4cba7b8d7d5f55d9e9911'
with_mkl         = 'ON'
with_pip_cuda_libraries = 'ON'
with_pip_tensorrt = 'OFF'
tensorrt_version = 'None'
compiled_cuda_archs = [80, 86, 90]
cinn_version      = 'False'

__all__ = ['cuda', 'cudnn', 'nccl', 'show', 'xpu', 'xpu_xre', 'xpu_xccl', 'xpu_xhpc']
`

// paddle/version.py of 2.1: no cuda_version yet.
const paddleVersion21 = `# THIS FILE IS GENERATED FROM PADDLEPADDLE SETUP.PY
#
full_version    = '2.1.3'
major           = '2'
minor           = '1'
patch           = '3'
rc              = '0'
istaged         = True
commit          = '6c1a5a7d2bdb5b1a6b1e6b1f6c0e6a7b1c1c6b2a'
with_mkl        = 'ON'
`

// A CPU wheel writes 'False'.
const paddleVersionCPU = `full_version    = '2.6.1'
cuda_version    = 'False'
cudnn_version   = 'False'
compiled_cuda_archs = []
`

// build_info.py as tensorflow/tools/build_info/gen_build_info.py writes it.
const tfBuildInfo112 = `# Copyright 2020 The TensorFlow Authors. All Rights Reserved.
"""Auto-generated module providing information about the build."""
import collections

build_info = collections.OrderedDict([('cpu_compiler', '/dt9/usr/bin/gcc'), ('cuda_compute_capabilities', ['sm_35', 'sm_50', 'sm_60', 'sm_70', 'sm_75', 'compute_80']), ('cuda_version', '11.2'), ('cudnn_version', '8'), ('is_cuda_build', True), ('is_rocm_build', False), ('is_tensorrt_build', True)])
`

const tfBuildInfo121 = `"""Auto-generated module providing information about the build."""
import collections

build_info = collections.OrderedDict([('cpu_compiler', '/usr/lib/llvm-17/bin/clang'), ('cuda_compute_capabilities', ['sm_52', 'sm_60', 'sm_61', 'sm_70', 'sm_75', 'sm_80', 'sm_86', 'compute_90']), ('cuda_version', '12.1'), ('cudnn_version', '8'), ('is_cuda_build', True), ('is_rocm_build', False), ('is_tensorrt_build', True)])
`

const tfBuildInfo125 = `import collections

build_info = collections.OrderedDict([('cpu_compiler', '/usr/lib/llvm-18/bin/clang'), ('cuda_compute_capabilities', ['sm_60', 'sm_70', 'sm_80', 'sm_89', 'compute_90']), ('cuda_version', '12.5.1'), ('cudnn_version', '9'), ('is_cuda_build', True), ('is_rocm_build', False), ('is_tensorrt_build', False)])
`

const tfBuildInfoCPU = `import collections

build_info = collections.OrderedDict([('cpu_compiler', '/usr/bin/gcc'), ('is_cuda_build', False), ('is_rocm_build', False), ('is_tensorrt_build', False)])
`

// cudnn_version.h of cuDNN 9 (CUDNN_VERSION = M*10000+m*100+p).
const cudnnVersionH9 = `/**
 * \file: The master cuDNN version file.
 */

#ifndef CUDNN_VERSION_H_
#define CUDNN_VERSION_H_

#define CUDNN_MAJOR 9
#define CUDNN_MINOR 1
#define CUDNN_PATCHLEVEL 0

#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)

/* cannot use constexpr here since this is a C-only file */
#endif /* CUDNN_VERSION_H */
`

// cudnn.h of cuDNN 7, which held the version itself.
const cudnnH7 = `#if !defined(CUDNN_H_)
#define CUDNN_H_

#define CUDNN_MAJOR 7
#define CUDNN_MINOR 6
#define CUDNN_PATCHLEVEL 5

#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)
`

const ncclH = `#ifndef NCCL_H_
#define NCCL_H_

#include <cuda_runtime.h>
#include <cuda_fp16.h>

#define NCCL_MAJOR 2
#define NCCL_MINOR 19
#define NCCL_PATCH 3
#define NCCL_SUFFIX ""

#define NCCL_VERSION_CODE 21903
#define NCCL_VERSION(X,Y,Z) (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))
`

// NvInferVersion.h of TensorRT 8.
const nvInferVersionH8 = `#ifndef NV_INFER_VERSION_H
#define NV_INFER_VERSION_H

#define NV_TENSORRT_MAJOR 8 //!< TensorRT major version.
#define NV_TENSORRT_MINOR 6 //!< TensorRT minor version.
#define NV_TENSORRT_PATCH 1 //!< TensorRT patch version.
#define NV_TENSORRT_BUILD 6 //!< TensorRT build number.
`

// NvInferVersion.h of TensorRT 10, whose public macros name others.
const nvInferVersionH10 = `#define TRT_MAJOR_ENTERPRISE 10
#define TRT_MINOR_ENTERPRISE 3
#define TRT_PATCH_ENTERPRISE 0
#define TRT_BUILD_ENTERPRISE 26
#define NV_TENSORRT_MAJOR TRT_MAJOR_ENTERPRISE //!< TensorRT major version.
#define NV_TENSORRT_MINOR TRT_MINOR_ENTERPRISE //!< TensorRT minor version.
#define NV_TENSORRT_PATCH TRT_PATCH_ENTERPRISE //!< TensorRT patch version.
`

func TestParseTorchVersion(t *testing.T) {
	tests := []struct {
		name, src     string
		version, cuda string
	}{
		{"cu118 wheel", torchVersionCU118, "2.1.0+cu118", "11.8"},
		{"with rocm and xpu fields", torchVersionCU124, "2.5.1+cu124", "12.4"},
		{"cpu build has cuda None", torchVersionCPU, "2.1.0+cpu", ""},
		{"NGC build", torchVersionNGC, "2.1.0a0+32f93b1", "12.2"},
		{"double quotes and CRLF", "__version__ = \"2.0.1\"\r\ncuda = \"11.7\"\r\n", "2.0.1", "11.7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := parseTorchVersion([]byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if v.Version != tt.version || v.CUDA != tt.cuda {
				t.Errorf("got %+v, want version %q cuda %q", v, tt.version, tt.cuda)
			}
		})
	}
}

func TestParseTorchVersionRejectsFilesWithoutVersion(t *testing.T) {
	for _, src := range []string{"", "cuda = '11.8'\n", "__version__ = None\n", "    __version__ = '1.0'\n", "def f():\n    __version__ = '1'\n"} {
		if v, err := parseTorchVersion([]byte(src)); err == nil {
			t.Errorf("%q: got %+v, want an error", src, v)
		}
	}
}

func TestParsePaddleVersion(t *testing.T) {
	tests := []struct {
		name, src            string
		version, cuda, cudnn string
		archs                []string
	}{
		{"2.6 with functions and docstrings", paddleVersion26, "2.6.0", "11.8", "8.6.0", nil},
		{"3.0 compiled_cuda_archs", paddleVersion30, "3.0.0", "12.6", "9.5.1", []string{"sm_80", "sm_86", "sm_90"}},
		{"2.1 records no CUDA", paddleVersion21, "2.1.3", "", "", nil},
		{"CPU build writes False", paddleVersionCPU, "2.6.1", "", "", nil},
		{"single arch", "full_version = '3.1.0'\ncompiled_cuda_archs = [86]\n", "3.1.0", "", "", []string{"sm_86"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := parsePaddleVersion([]byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if v.Version != tt.version || v.CUDA != tt.cuda || v.CuDNN != tt.cudnn || !slices.Equal(v.Archs, tt.archs) {
				t.Errorf("got %+v, want %q %q %q %q", v, tt.version, tt.cuda, tt.cudnn, tt.archs)
			}
		})
	}
}

func TestParseTFBuildInfo(t *testing.T) {
	tests := []struct {
		name, src   string
		cuda, cudnn string
		archs       []string
		cudaBuild   bool
	}{
		{"CUDA 11.2", tfBuildInfo112, "11.2", "8", []string{"sm_35", "sm_50", "sm_60", "sm_70", "sm_75", "compute_80"}, true},
		{"CUDA 12.1", tfBuildInfo121, "12.1", "8", []string{"sm_52", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "compute_90"}, true},
		{"CUDA 12.5.1 clang", tfBuildInfo125, "12.5.1", "9", []string{"sm_60", "sm_70", "sm_80", "sm_89", "compute_90"}, true},
		{"CPU build", tfBuildInfoCPU, "", "", nil, false},
		{"module-level assignments", "is_cuda_build = True\ncuda_version = '11.0'\ncudnn_version = '8'\n", "11.0", "8", nil, true},
		{"Windows packed version is not a version", "build_info = {'is_cuda_build': True, 'cuda_version': '64_112'}\n", "", "", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := parseTFBuildInfo([]byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if v.CUDA != tt.cuda || v.CuDNN != tt.cudnn || v.CUDABuild != tt.cudaBuild || !slices.Equal(v.Archs, tt.archs) {
				t.Errorf("got %+v", v)
			}
		})
	}
	if _, err := parseTFBuildInfo([]byte("import collections\n")); err == nil {
		t.Error("a file without build facts parsed")
	}
}

func TestParseDistInfoName(t *testing.T) {
	tests := []struct {
		dir           string
		name, version string
		ok            bool
	}{
		{"torch-2.1.0+cu118.dist-info", "torch", "2.1.0+cu118", true},
		{"paddlepaddle_gpu-2.6.0.post118.dist-info", "paddlepaddle_gpu", "2.6.0.post118", true},
		{"nvidia_cudnn_cu12-9.1.0.70.dist-info", "nvidia_cudnn_cu12", "9.1.0.70", true},
		{"jaxlib-0.4.28+cuda12.cudnn89.dist-info", "jaxlib", "0.4.28+cuda12.cudnn89", true},
		{"Jax_CUDA12_Plugin-0.4.30.dist-info", "jax_cuda12_plugin", "0.4.30", true},
		{"torch-1.13.1-py3.10.egg-info", "torch", "1.13.1", true},
		{"torch", "", "", false},
		{"torch.dist-info", "", "", false},
		{"-1.0.dist-info", "", "", false},
		{"torch-abc.dist-info", "", "", false},
	}
	for _, tt := range tests {
		d, ok := parseDistInfoName(tt.dir)
		if ok != tt.ok || d.Name != tt.name || d.Version != tt.version {
			t.Errorf("%s: got %+v %v", tt.dir, d, ok)
		}
	}
}

func TestVersionTags(t *testing.T) {
	cu := []struct{ in, want string }{
		{"2.1.0+cu118", "11.8"}, {"2.1.0+cu121", "12.1"}, {"2.7.0+cu128", "12.8"},
		{"1.7.1+cu92", "9.2"}, {"2.1.0+cpu", ""}, {"2.1.0", ""}, {"2.1.0a0+32f93b1", ""},
		{"2.9.0+cu130", "13.0"},
	}
	for _, tt := range cu {
		if got := localCUDA(tt.in); got != tt.want {
			t.Errorf("localCUDA(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	post := []struct{ in, want string }{
		{"2.6.0.post118", "11.8"}, {"2.6.0.post120", "12.0"}, {"2.5.2.post117", "11.7"},
		{"2.6.0", ""}, {"1.8.5.post107", ""}, // CUDA 10.0 + cuDNN 7: not a CUDA version
		{"3.0.0", ""}, {"2.6.0.postabc", ""},
	}
	for _, tt := range post {
		if got := paddlePostCUDA(tt.in); got != tt.want {
			t.Errorf("paddlePostCUDA(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	jax := []struct {
		in          string
		cuda, cudnn string
		ok          bool
	}{
		{"0.4.28+cuda12.cudnn89", "12", "8.9", true},
		{"0.4.13+cuda11.cudnn86", "11", "8.6", true},
		{"0.1.75+cuda111", "11.1", "", true},
		{"0.1.69+cuda110.cudnn805", "11.0", "8.0.5", true},
		{"0.4.30", "", "", false},
	}
	for _, tt := range jax {
		got, ok := parseJaxlibVersion(tt.in)
		if ok != tt.ok || got.CUDA != tt.cuda || got.CuDNN != tt.cudnn {
			t.Errorf("parseJaxlibVersion(%q) = %+v %v", tt.in, got, ok)
		}
	}
	env := []struct{ in, want string }{
		{"2.25.1-1", "2.25.1"}, {"9.8.0.87-1", "9.8.0.87"}, {"2.19.3", "2.19.3"},
		{"8.9.5.29", "8.9.5.29"}, {"2.19.3+cuda12.2", "2.19.3"}, {"latest", ""}, {"", ""},
	}
	for _, tt := range env {
		if got := envVersion(tt.in); got != tt.want {
			t.Errorf("envVersion(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseHeaders(t *testing.T) {
	tests := []struct {
		name  string
		parse func([]byte) (string, bool)
		src   string
		want  string
	}{
		{"cudnn_version.h v9", parseCuDNNHeader, cudnnVersionH9, "9.1.0"},
		{"cudnn.h v7", parseCuDNNHeader, cudnnH7, "7.6.5"},
		{"cudnn.h v8 includes the version file", parseCuDNNHeader, "#include \"cudnn_version.h\"\n", ""},
		{"nccl.h", parseNCCLHeader, ncclH, "2.19.3"},
		{"NvInferVersion.h 8", parseTensorRTHeader, nvInferVersionH8, "8.6.1"},
		{"NvInferVersion.h 10 through other macros", parseTensorRTHeader, nvInferVersionH10, "10.3.0"},
		{"self-referencing macro", parseNCCLHeader, "#define NCCL_MAJOR NCCL_MAJOR\n#define NCCL_MINOR 1\n#define NCCL_PATCH 1\n", ""},
		{"spaced directive", parseNCCLHeader, "#  define NCCL_MAJOR 2\n# define NCCL_MINOR (21)\n#define\tNCCL_PATCH 5 /* patch */\n", "2.21.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.parse([]byte(tt.src))
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("got %q %v, want %q", got, ok, tt.want)
			}
		})
	}
}

func TestSonameVersion(t *testing.T) {
	tests := []struct{ file, base, want string }{
		{"libcudnn.so.8.9.7", "libcudnn.so", "8.9.7"},
		{"libnccl.so.2.19.3", "libnccl.so", "2.19.3"},
		{"libnccl.so.2", "libnccl.so", "2"},
		{"libnvinfer.so.10.3.0", "libnvinfer.so", "10.3.0"},
		{"libcudnn_ops.so.9.1.0", "libcudnn.so", ""},
		{"libcudnn.so", "libcudnn.so", ""},
		{"libnvinfer.so.8.6.1.bak", "libnvinfer.so", ""},
	}
	for _, tt := range tests {
		got, ok := sonameVersion(tt.file, tt.base)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("sonameVersion(%q) = %q %v, want %q", tt.file, got, ok, tt.want)
		}
	}
}

func TestSortArchs(t *testing.T) {
	got := []string{"compute_90", "sm_90a", "sm_100", "sm_80", "weird", "sm_90", "compute_80", "sm_86"}
	sortArchs(got)
	want := []string{"sm_80", "compute_80", "sm_86", "sm_90", "sm_90a", "compute_90", "sm_100", "weird"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The fuzz targets: every parser must return, never panic, on any input,
// and what it returns must be well-formed.

func FuzzParseTorchVersion(f *testing.F) {
	for _, s := range []string{torchVersionCU118, torchVersionCU124, torchVersionCPU, torchVersionNGC, paddleVersion26} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		v, err := parseTorchVersion(src)
		if err == nil && v.Version == "" {
			t.Fatal("no error and no version")
		}
	})
}

func FuzzParsePaddleVersion(f *testing.F) {
	for _, s := range []string{paddleVersion26, paddleVersion30, paddleVersion21, paddleVersionCPU} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		v, err := parsePaddleVersion(src)
		if err != nil {
			return
		}
		if v.Version == "" {
			t.Fatal("no error and no version")
		}
		for _, a := range v.Archs {
			if _, err := gpuarch.Parse(a); err != nil {
				t.Fatalf("arch %q does not parse: %v", a, err)
			}
		}
	})
}

func FuzzParseTFBuildInfo(f *testing.F) {
	for _, s := range []string{tfBuildInfo112, tfBuildInfo121, tfBuildInfo125, tfBuildInfoCPU} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		v, err := parseTFBuildInfo(src)
		if err != nil {
			return
		}
		if v.CUDA != "" && !dotted(v.CUDA) {
			t.Fatalf("cuda %q is not a version", v.CUDA)
		}
		for _, a := range v.Archs {
			if _, err := gpuarch.Parse(a); err != nil {
				t.Fatalf("arch %q does not parse: %v", a, err)
			}
		}
	})
}

func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{cudnnVersionH9, cudnnH7, ncclH, nvInferVersionH8, nvInferVersionH10} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, parse := range []func([]byte) (string, bool){parseCuDNNHeader, parseNCCLHeader, parseTensorRTHeader} {
			v, ok := parse(src)
			if ok && (strings.Count(v, ".") != 2 || !dotted(v)) {
				t.Fatalf("version %q is not X.Y.Z", v)
			}
		}
	})
}

func FuzzParseDistInfo(f *testing.F) {
	for _, s := range []string{
		"torch-2.1.0+cu118.dist-info", "paddlepaddle_gpu-2.6.0.post118.dist-info",
		"nvidia_cudnn_cu12-9.1.0.70.dist-info", "jaxlib-0.4.28+cuda12.cudnn89.dist-info",
		"torch-1.13.1-py3.10.egg-info",
	} {
		f.Add(s, []byte("Metadata-Version: 2.1\nName: "+s+"\nVersion: 1.0\n\n"))
	}
	// The second value is unused since the METADATA Name/Version reader
	// went (nothing read it); it stays so the committed corpus still loads.
	f.Fuzz(func(t *testing.T, dir string, _ []byte) {
		if d, ok := parseDistInfoName(dir); ok && (d.Name == "" || d.Version == "" || !isDigit(d.Version[0])) {
			t.Fatalf("parseDistInfoName(%q) = %+v", dir, d)
		}
	})
}

func FuzzVersionTags(f *testing.F) {
	for _, s := range []string{
		"2.1.0+cu118", "2.6.0.post118", "0.4.28+cuda12.cudnn89", "0.1.69+cuda110.cudnn805",
		"2.25.1-1", "9.8.0.87-1", "libcudnn.so.8.9.7", "libnccl.so.2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, v := range []string{localCUDA(s), paddlePostCUDA(s)} {
			if v != "" && !dotted(v) {
				t.Fatalf("CUDA %q from %q is not a version", v, s)
			}
		}
		if tag, ok := parseJaxlibVersion(s); ok && tag.CUDA == "" {
			t.Fatalf("parseJaxlibVersion(%q) ok without CUDA", s)
		}
		if v := envVersion(s); v != "" && !dotted(v) && !digitsOnly(v) {
			t.Fatalf("envVersion(%q) = %q", s, v)
		}
		for _, base := range []string{"libcudnn.so", "libnccl.so"} {
			if v, ok := sonameVersion(s, base); ok && !dotted(v) && !digitsOnly(v) {
				t.Fatalf("sonameVersion(%q) = %q", s, v)
			}
		}
	})
}

// Requires-Dist lines as torch, TensorFlow and jax's CUDA plugin write
// them (METADATA of the cu12 wheels; reconstructed, the registries are not
// reachable from here).
const torchMetadata = `Metadata-Version: 2.1
Name: torch
Version: 2.4.0
Requires-Python: >=3.8.0
Requires-Dist: filelock
Requires-Dist: typing-extensions>=4.8.0
Requires-Dist: nvidia-cuda-runtime-cu12==12.1.105; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-cublas-cu12==12.1.3.1; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-nccl-cu12==2.20.5; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: triton==3.0.0; platform_system == "Linux" and platform_machine == "x86_64" and python_version < "3.13"
Provides-Extra: opt-einsum

Requires-Dist: nvidia-cusparse-cu12==99.0; this is the description, not a header
`

const jaxPluginMetadata = `Metadata-Version: 2.1
Name: jax-cuda12-plugin
Version: 0.4.30
Requires-Dist: jax-cuda12-pjrt ==0.4.30
Provides-Extra: with_cuda
Requires-Dist: nvidia-cublas-cu12 >=12.1.3.1 ; extra == 'with_cuda'
Requires-Dist: nvidia-cudnn-cu12 <10.0,>=9.1 ; extra == 'with_cuda'
Requires-Dist: nvidia-nccl-cu12 (>=2.18.1)
Requires-Dist: nvidia-cuda-nvcc-cu12 !=12.4.*; extra == 'with_cuda'
`

func TestParseRequiresDist(t *testing.T) {
	for name, tt := range map[string]struct {
		src  string
		want []requirement
	}{
		"torch": {torchMetadata, []requirement{
			{"typing_extensions", ">=", "4.8.0"},
			{"nvidia_cuda_runtime_cu12", "==", "12.1.105"},
			{"nvidia_cudnn_cu12", "==", "9.1.0.70"},
			{"nvidia_cublas_cu12", "==", "12.1.3.1"},
			{"nvidia_nccl_cu12", "==", "2.20.5"},
			{"triton", "==", "3.0.0"},
		}},
		"jax plugin": {jaxPluginMetadata, []requirement{
			{"jax_cuda12_pjrt", "==", "0.4.30"},
			{"nvidia_cublas_cu12", ">=", "12.1.3.1"},
			{"nvidia_cudnn_cu12", ">=", "9.1"},
			{"nvidia_nccl_cu12", ">=", "2.18.1"},
		}},
	} {
		if got := parseRequiresDist([]byte(tt.src)); !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %v\nwant %v", name, got, tt.want)
		}
	}
}

func FuzzParseRequiresDist(f *testing.F) {
	f.Add([]byte(torchMetadata))
	f.Add([]byte(jaxPluginMetadata))
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, r := range parseRequiresDist(src) {
			if r.Name == "" || r.Version == "" || (r.Op != "==" && r.Op != ">=") {
				t.Fatalf("incomplete requirement %+v", r)
			}
		}
	})
}
