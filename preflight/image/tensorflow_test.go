package image

import (
	"slices"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
)

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
