package image

import (
	"reflect"
	"testing"
)

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

// torchCU130Metadata is torch 2.11.0+cu130's CUDA requirements, as pip
// resolves them from the wheel's METADATA (the cu130 pins of pytorch's
// .github/scripts/generate_binary_build_matrix.py moved into cuda-toolkit
// extras; the versions are those of a pip freeze of torch 2.11.0+cu130).
const torchCU130Metadata = `Metadata-Version: 2.4
Name: torch
Version: 2.11.0+cu130
Requires-Dist: cuda-toolkit[cublas,cudart,cufft,cufile,cupti,curand,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.0.2; platform_system == "Linux"
Requires-Dist: cuda-bindings<14,>=13.0.3; platform_system == "Linux"
Requires-Dist: nvidia-cudnn-cu13==9.19.0.56; platform_system == "Linux"
Requires-Dist: nvidia-cusparselt-cu13==0.8.0; platform_system == "Linux"
Requires-Dist: nvidia-nccl-cu13==2.28.9; platform_system == "Linux"
Requires-Dist: nvidia-nvshmem-cu13==3.4.5; platform_system == "Linux"
`

// cudaToolkitMetadata is NVIDIA's cuda-toolkit 13.0.2 metapackage: one
// extra per component, each pinning its unsuffixed wheel with ".*".
const cudaToolkitMetadata = `Metadata-Version: 2.1
Name: cuda-toolkit
Version: 13.0.2
Provides-Extra: cudart
Requires-Dist: nvidia-cuda-runtime==13.0.96.*; extra == "cudart"
Provides-Extra: cublas
Requires-Dist: nvidia-cublas==13.1.0.3.*; extra == "cublas"
Provides-Extra: cufft
Requires-Dist: nvidia-cufft==12.0.0.61.*; extra == "cufft"
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
			{Name: "typing_extensions", Op: ">=", Version: "4.8.0"},
			{Name: "nvidia_cuda_runtime_cu12", Op: "==", Version: "12.1.105"},
			{Name: "nvidia_cudnn_cu12", Op: "==", Version: "9.1.0.70"},
			{Name: "nvidia_cublas_cu12", Op: "==", Version: "12.1.3.1"},
			{Name: "nvidia_nccl_cu12", Op: "==", Version: "2.20.5"},
			{Name: "triton", Op: "==", Version: "3.0.0"},
		}},
		"jax plugin": {jaxPluginMetadata, []requirement{
			{Name: "jax_cuda12_pjrt", Op: "==", Version: "0.4.30"},
			{Name: "nvidia_cublas_cu12", Op: ">=", Version: "12.1.3.1", Extra: "with_cuda"},
			{Name: "nvidia_cudnn_cu12", Op: ">=", Version: "9.1", Extra: "with_cuda"},
			{Name: "nvidia_nccl_cu12", Op: ">=", Version: "2.18.1"},
		}},
		"torch cu130": {torchCU130Metadata, []requirement{
			{Name: "cuda_toolkit", Op: "==", Version: "13.0.2", Extras: []string{"cublas", "cudart", "cufft", "cufile", "cupti", "curand", "cusolver", "cusparse", "nvjitlink", "nvrtc", "nvtx"}},
			{Name: "cuda_bindings", Op: ">=", Version: "13.0.3"},
			{Name: "nvidia_cudnn_cu13", Op: "==", Version: "9.19.0.56"},
			{Name: "nvidia_cusparselt_cu13", Op: "==", Version: "0.8.0"},
			{Name: "nvidia_nccl_cu13", Op: "==", Version: "2.28.9"},
			{Name: "nvidia_nvshmem_cu13", Op: "==", Version: "3.4.5"},
		}},
		"cuda-toolkit": {cudaToolkitMetadata, []requirement{
			{Name: "nvidia_cuda_runtime", Op: "==", Version: "13.0.96", Extra: "cudart"},
			{Name: "nvidia_cublas", Op: "==", Version: "13.1.0.3", Extra: "cublas"},
			{Name: "nvidia_cufft", Op: "==", Version: "12.0.0.61", Extra: "cufft"},
		}},
	} {
		if got := parseRequiresDist([]byte(tt.src)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %v\nwant %v", name, got, tt.want)
		}
	}
}

func FuzzParseRequiresDist(f *testing.F) {
	f.Add([]byte(torchMetadata))
	f.Add([]byte(torchCU130Metadata))
	f.Add([]byte(cudaToolkitMetadata))
	f.Add([]byte(jaxPluginMetadata))
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, r := range parseRequiresDist(src) {
			if r.Name == "" || r.Version == "" || (r.Op != "==" && r.Op != ">=") {
				t.Fatalf("incomplete requirement %+v", r)
			}
		}
	})
}
