package check

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

func TestCPUBuild(t *testing.T) {
	h100 := gpus(2, "NVIDIA H100 80GB HBM3", "Nvidia", "9.0")
	cpuTorch := facts.Framework{Name: "torch", Version: "2.3.1+cpu", Build: facts.BuildCPU}
	cpuPaddle := facts.Framework{Name: "paddlepaddle", Version: "2.6.1", Build: facts.BuildCPU}
	cpuTF := facts.Framework{Name: "tensorflow", Version: "2.15.0", Build: facts.BuildCPU}
	cpuJax := facts.Framework{Name: "jax", Version: "0.4.30", Build: facts.BuildCPU}
	gpuTorch := facts.Framework{Name: "torch", Version: "2.3.1+cu121", CUDAVersion: "12.1", Build: facts.BuildCUDA}
	unknown := facts.Framework{Name: "torch", Version: "2.3.1"}
	for _, tt := range []struct {
		name       string
		fws        []facts.Framework
		visible    []facts.GPU
		requireGPU bool
		status     Status
		contains   []string
	}{
		{"no framework", nil, h100, false, Skip, nil},
		{"GPU build", []facts.Framework{gpuTorch}, h100, false, Pass, nil},
		{"build unknown is not called CPU", []facts.Framework{unknown}, h100, false, Pass, nil},
		{"CPU build without visible GPUs stays quiet", []facts.Framework{cpuTorch}, nil, false, Pass, nil},
		{"CPU build without visible GPUs, GPU required: still quiet here (gpu-count says it)", []facts.Framework{cpuTorch}, nil, true, Pass, nil},
		{"torch +cpu", []facts.Framework{cpuTorch}, h100, false, Warn,
			[]string{"torch 2.3.1+cpu", "2 GPU(s)", "CUDA <= 12.4", "torch 2.3 (CUDA 12.1, wheel)", "--index-url https://download.pytorch.org/whl/cu121"}},
		{"torch +cpu, GPU required", []facts.Framework{cpuTorch}, h100, true, Error, []string{"torch 2.3.1+cpu"}},
		{"paddlepaddle", []facts.Framework{cpuPaddle}, h100, false, Warn, []string{"paddlepaddle 2.6.1", "paddlepaddle-gpu==2.6.2.post120", "CUDA <= 12.4"}},
		{"tensorflow-cpu", []facts.Framework{cpuTF}, h100, false, Warn, []string{"tensorflow[and-cuda]==2.15.*"}},
		{"jaxlib alone", []facts.Framework{cpuJax}, h100, false, Warn, []string{"jax[cuda12]"}},
		{"one CPU build among GPU builds is named", []facts.Framework{gpuTorch, cpuPaddle}, h100, false, Warn, []string{"paddlepaddle 2.6.1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := input(host("550.54.15", "12.4"), facts.Container{Frameworks: tt.fws})
			in.Visible = tt.visible
			in.Options.RequireGPU = tt.requireGPU
			wantFinding(t, cpuBuild(in), tt.status, tt.contains...)
		})
	}
}

// A CUDA 13 driver points jax at its cuda13 plugin.
func TestCPUBuildJaxFollowsTheDriverMajor(t *testing.T) {
	in := input(host("580.65.06", "13.0", gpus(1, "B200", "Nvidia", "10.0")...),
		facts.Container{Frameworks: []facts.Framework{{Name: "jax", Version: "0.7.0", Build: facts.BuildCPU}}})
	wantFinding(t, cpuBuild(in), Warn, "jax[cuda13]")
}

// A driver too old for every GPU build in the release table still gets the
// package name and its CUDA line.
func TestCPUBuildWithoutATableRowNamesThePackage(t *testing.T) {
	for fw, want := range map[string]string{
		"torch":        "--index-url https://download.pytorch.org/whl/cuXYZ",
		"paddlepaddle": "paddlepaddle-gpu==2.6.1",
		"tensorflow":   "tensorflow[and-cuda]==2.6.1",
	} {
		in := input(host("410.48", "10.0"), facts.Container{Frameworks: []facts.Framework{{Name: fw, Version: "2.6.1", Build: facts.BuildCPU}}})
		in.Visible = gpus(1, "Tesla V100", "Tesla", "7.0")
		wantFinding(t, cpuBuild(in), Warn, want, "CUDA <= 10.0")
	}
}
