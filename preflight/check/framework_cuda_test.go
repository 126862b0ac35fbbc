package check

import (
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// archInput is an Input with one driver, the image's CUDA, frameworks and
// visible GPUs: what framework-cuda and gpu-arch read.
func archInput(driver, driverCUDA, imageCUDA string, fws []facts.Framework, visible ...facts.GPU) Input {
	return Input{
		Facts: facts.Facts{
			Host: facts.Host{Driver: facts.Driver{Version: driver, CUDAVersion: driverCUDA}, GPUs: visible},
			Container: facts.Container{
				CUDA:       facts.CUDAToolkit{Version: imageCUDA},
				Frameworks: fws,
			},
		},
		Visible: visible,
	}
}

func fw(name, ver, cuda string) facts.Framework {
	return facts.Framework{Name: name, Version: ver, CUDAVersion: cuda}
}

// expectFinding fails unless f has the id, status and every substring.
func expectFinding(t *testing.T, f Finding, id string, status Status, contains ...string) {
	t.Helper()
	if f.ID != id || f.Status != status {
		t.Errorf("got %s %s: %s (remedy %q), want %s", f.ID, f.Status, f.Message, f.Remedy, status)
		return
	}
	for _, s := range contains {
		if !strings.Contains(f.Message+" || "+f.Remedy, s) {
			t.Errorf("finding %q (remedy %q) does not mention %q", f.Message, f.Remedy, s)
		}
	}
	if status.Severity() > 0 && f.Remedy == "" {
		t.Errorf("a %s finding without remedy: %q", status, f.Message)
	}
}

var (
	h100  = facts.GPU{Index: 0, Name: "NVIDIA H100 80GB HBM3", Brand: "Nvidia", ComputeCapability: "9.0"}
	a100  = facts.GPU{Index: 0, Name: "NVIDIA A100-SXM4-80GB", Brand: "Nvidia", ComputeCapability: "8.0"}
	v100  = facts.GPU{Index: 0, Name: "Tesla V100-SXM2-16GB", Brand: "Tesla", ComputeCapability: "7.0"}
	rtx   = facts.GPU{Index: 0, Name: "NVIDIA GeForce RTX 4090", Brand: "GeForceRTX", ComputeCapability: "8.9"}
	b200  = facts.GPU{Index: 0, Name: "NVIDIA B200", Brand: "Nvidia", ComputeCapability: "10.0"}
	b300  = facts.GPU{Index: 0, Name: "NVIDIA B300", Brand: "Nvidia", ComputeCapability: "10.3"}
	rtx50 = facts.GPU{Index: 0, Name: "NVIDIA GeForce RTX 5090", Brand: "GeForceRTX", ComputeCapability: "12.0"}
)

func TestFrameworkCUDA(t *testing.T) {
	torch121 := fw("torch", "2.1.0+cu121", "12.1")
	compat := func(in Input, driver string) Input {
		in.Facts.Container.Compat = []facts.CompatLib{{Path: "/usr/local/cuda/compat/libcuda.so." + driver, DriverVersion: driver}}
		return in
	}
	tests := []struct {
		name     string
		in       Input
		status   Status
		contains []string
	}{
		{"no framework is a skip",
			archInput("535.104.05", "12.2", "12.2", nil, h100), Skip, []string{"no deep-learning framework"}},
		{"CPU builds are a skip",
			archInput("535.104.05", "12.2", "", []facts.Framework{fw("torch", "2.1.0+cpu", "")}, h100), Skip, []string{"torch 2.1.0+cpu"}},
		{"framework CUDA at or below the driver's runs",
			archInput("535.104.05", "12.2", "", []facts.Framework{fw("torch", "2.1.0+cu118", "11.8"), torch121}, h100), Pass,
			[]string{"torch 2.1.0+cu121 (CUDA 12.1) runs on driver 535.104.05 (CUDA 12.2)"}},
		{"higher CUDA major than the driver is an error",
			archInput("515.65.01", "11.7", "", []facts.Framework{torch121}, h100), Error,
			[]string{"torch 2.1.0+cu121", "CUDA 12.1", "CUDA <= 11.7", "driver >= 530.30.02", "does not cross CUDA major"}},
		{"higher minor at or above the MVC floor is a warning",
			archInput("535.104.05", "12.2", "", []facts.Framework{fw("torch", "2.5.1+cu124", "12.4")}, h100), Warn,
			[]string{"minor-version compatibility", "CUDA 12.4", "CUDA 12.2", "driver >= 525.60.13", "550.54.14"}},
		{"higher minor below the MVC floor is an error",
			archInput("450.51.06", "11.0", "", []facts.Framework{fw("paddlepaddle", "2.6.0.post118", "11.8")}, a100), Error,
			[]string{"needs driver >= 450.80.02", "CUDA 11.8", "CUDA <= 11.0", "520.61.05"}},
		{"CUDA 10 has no minor-version compatibility",
			archInput("410.48", "10.0", "", []facts.Framework{fw("torch", "1.5.0+cu102", "10.2")}, v100), Error,
			[]string{"CUDA 10.x has no minor-version compatibility", "440.33"}},
		{"forward compatibility on data-center GPUs is a warning",
			compat(archInput("470.82.01", "11.4", "", []facts.Framework{torch121}, h100), "535.129.03"), Warn,
			[]string{"forward-compatibility", "535.129.03", "CUDA 12.2", "CUDA 12.1", "CUDA <= 11.4"}},
		{"forward compatibility does not apply to GeForce",
			compat(archInput("470.82.01", "11.4", "", []facts.Framework{torch121}, rtx), "535.129.03"), Error,
			[]string{"CUDA 12.1"}},
		{"a compat library not newer than the host driver is not used",
			compat(archInput("515.65.01", "11.7", "", []facts.Framework{torch121}, h100), "470.82.01"), Error,
			[]string{"CUDA 12.1"}},
		{"a compat library too old for the framework is not used",
			compat(archInput("470.82.01", "11.4", "", []facts.Framework{fw("torch", "2.7.0+cu128", "12.8")}, h100), "535.129.03"), Error,
			[]string{"CUDA 12.8", "570.26"}},
		{"unknown driver CUDA is a skip, never a pass",
			archInput("", "", "", []facts.Framework{torch121}, h100), Skip, []string{"cannot be told"}},
		{"framework CUDA major unlike the image's is a warning",
			archInput("535.104.05", "12.2", "11.8", []facts.Framework{torch121}, h100), Warn,
			[]string{"CUDA 12.1", "image's CUDA toolkit is 11.8"}},
		{"framework CUDA minor unlike the image's is fine",
			archInput("535.104.05", "12.2", "12.2.2", []facts.Framework{torch121}, h100), Pass, nil},
		{"major-only CUDA build runs on the same major",
			archInput("535.104.05", "12.2", "", []facts.Framework{fw("jax", "0.4.28+cuda12.cudnn89", "12")}, h100), Pass, nil},
		{"major-only CUDA build fails on an older major",
			archInput("515.65.01", "11.7", "", []facts.Framework{fw("jax", "0.4.28+cuda12.cudnn89", "12")}, h100), Error,
			[]string{"CUDA 12 ", "525.60.13"}},
		{"the worst framework decides and only its message is kept",
			archInput("515.65.01", "11.7", "", []facts.Framework{fw("paddlepaddle", "2.5.2.post117", "11.7"), torch121}, h100), Error,
			[]string{"torch 2.1.0+cu121"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expectFinding(t, FrameworkCUDA.Run(tt.in), "framework-cuda", tt.status, tt.contains...)
		})
	}
}

func TestFrameworkCUDAKeepsOnlyTheWorstMessages(t *testing.T) {
	in := archInput("515.65.01", "11.7", "", []facts.Framework{fw("paddlepaddle", "2.5.2.post117", "11.7"), fw("torch", "2.1.0+cu121", "12.1")}, h100)
	if f := FrameworkCUDA.Run(in); strings.Contains(f.Message, "paddlepaddle") {
		t.Errorf("a passing framework is in the error message: %q", f.Message)
	}
}
