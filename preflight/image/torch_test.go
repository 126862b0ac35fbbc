package image

import "testing"

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
