package image

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
)

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

// `pip install paddlepaddle` over paddlepaddle-gpu leaves both dist-infos
// and the CPU wheel's files: its version module (cuda_version 'False',
// Paddle's setup.py write_version_py) is what Python imports, so the copy
// is a CPU build, named by the CPU distribution, whatever the GPU wheel's
// .post120 says.
func TestPaddleVersionModuleOutranksAGPUDistInfoLeftBeside(t *testing.T) {
	tr := newTree(t)
	baseCPython(tr, "/usr/local/bin", "python3.10")
	sp := "/usr/local/lib/python3.10/site-packages"
	tr.file(sp+"/paddle/__init__.py", "")
	tr.file(sp+"/paddle/version/__init__.py", strings.NewReplacer("'11.8'", "'False'", "'8.6.0'", "'False'", "'2.6.0'", "'2.6.2'").Replace(paddleVersion26))
	tr.dir(sp + "/paddlepaddle-2.6.2.dist-info")
	tr.dir(sp + "/paddlepaddle_gpu-2.6.2.post120.dist-info")
	env := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"}
	_, _, f, _ := judgedOne(t, tr, env, []string{"python3", "train.py"}, "paddlepaddle")
	if f.Build != facts.BuildCPU || f.CUDAVersion != "" || f.Version != "2.6.2" {
		t.Errorf("paddle %s, build %q, CUDA %q; want the CPU wheel's 2.6.2", f.Version, f.Build, f.CUDAVersion)
	}
}
