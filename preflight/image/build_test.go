package image

import (
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// Each framework's CPU wheel, as it lays itself out in site-packages, is
// told apart from its GPU wheel; a framework whose files do not say stays
// unknown rather than being called a CPU build.
func TestScanFrameworkBuild(t *testing.T) {
	paddleCPU := strings.Replace(strings.Replace(paddleVersion26, "cuda_version    = '11.8'", "cuda_version    = 'False'", 1),
		"cudnn_version   = '8.6.0'", "cudnn_version   = 'False'", 1)
	for _, tt := range []struct {
		name      string
		files     map[string]string
		dirs      []string
		framework string
		build     string
	}{
		{"torch +cpu wheel", map[string]string{"torch/version.py": torchVersionCPU}, []string{"torch-2.1.0+cpu.dist-info"}, "torch", facts.BuildCPU},
		{"torch CUDA wheel", map[string]string{"torch/version.py": torchVersionCU118}, nil, "torch", facts.BuildCUDA},
		{"torch ROCm wheel", map[string]string{"torch/version.py": strings.Replace(torchVersionCPU, "hip: Optional[str] = None", "hip: Optional[str] = '6.1.40091'", 1)}, nil, "torch", facts.BuildROCm},
		{"torch +cpu dist-info only", nil, []string{"torch-2.3.1+cpu.dist-info"}, "torch", facts.BuildCPU},
		{"torch PyPI dist-info only", nil, []string{"torch-2.3.1.dist-info"}, "torch", ""},
		{"paddlepaddle CPU wheel", map[string]string{"paddle/version/__init__.py": paddleCPU}, []string{"paddlepaddle-2.6.0.dist-info"}, "paddlepaddle", facts.BuildCPU},
		{"paddlepaddle CPU dist-info only", nil, []string{"paddle", "paddlepaddle-2.6.1.dist-info"}, "paddlepaddle", facts.BuildCPU},
		{"paddlepaddle-gpu wheel", map[string]string{"paddle/version/__init__.py": paddleVersion26}, []string{"paddlepaddle_gpu-2.6.0.post118.dist-info"}, "paddlepaddle", facts.BuildCUDA},
		{"tensorflow-cpu", map[string]string{"tensorflow/python/platform/build_info.py": tfBuildInfoCPU}, []string{"tensorflow_cpu-2.15.0.dist-info"}, "tensorflow", facts.BuildCPU},
		{"tensorflow CUDA", map[string]string{"tensorflow/python/platform/build_info.py": tfBuildInfo121}, []string{"tensorflow-2.15.0.dist-info"}, "tensorflow", facts.BuildCUDA},
		{"tensorflow-cpu without build_info", nil, []string{"tensorflow", "tensorflow_cpu-2.15.0.dist-info"}, "tensorflow", facts.BuildCPU},
		{"jaxlib alone", nil, []string{"jaxlib", "jaxlib-0.4.30.dist-info"}, "jax", facts.BuildCPU},
		{"jaxlib with the CUDA plugin", nil, []string{"jaxlib-0.4.30.dist-info", "jax_cuda12_plugin-0.4.30.dist-info"}, "jax", facts.BuildCUDA},
		{"old jaxlib with a CUDA tag", nil, []string{"jaxlib-0.4.28+cuda12.cudnn89.dist-info"}, "jax", facts.BuildCUDA},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTree(t)
			for p, c := range tt.files {
				tr.file(debianSP+"/"+p, c)
			}
			for _, d := range tt.dirs {
				tr.dir(debianSP + "/" + d)
			}
			res, _ := Scan(tr.Root(), nil)
			if f := findFramework(t, res, tt.framework); f.Build != tt.build {
				t.Errorf("build %q, want %q (%+v)", f.Build, tt.build, f)
			}
		})
	}
}
