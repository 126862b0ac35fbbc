package check

import (
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// A compat library of the host driver's own version (every NGC image puts
// /usr/local/cuda/compat on LD_LIBRARY_PATH) or a newer one is no 803
// risk; one older than the host driver, even in the same branch, is.
func TestCUDADriverCompatEqualOrNewerThanTheHostIsNoRisk(t *testing.T) {
	for _, tc := range []struct {
		compat string
		status Status
	}{
		{"550.54.15", Pass},  // equal to the host driver
		{"550.90.07", Pass},  // newer, same branch
		{"560.35.03", Pass},  // newer branch: forward compatibility
		{"550.54.14", Warn},  // older, same branch
		{"535.129.03", Warn}, // older branch
	} {
		c := facts.Container{CUDA: facts.CUDAToolkit{Version: "12.4"},
			Compat: []facts.CompatLib{{Path: "/usr/local/cuda/compat/libcuda.so." + tc.compat, DriverVersion: tc.compat}},
			Env:    map[string]string{"LD_LIBRARY_PATH": "/usr/local/cuda/compat/lib:/usr/local/nvidia/lib64"}}
		f := cudaDriver(input(host("550.54.15", "12.4"), c))
		if f.Status != tc.status || (tc.status == Warn) != strings.Contains(f.Message, "803") {
			t.Errorf("compat %s on host 550.54.15: %s %q, want %s", tc.compat, f.Status, f.Message, tc.status)
		}
	}
}

// cuda-driver judges the image's CUDA wherever it came from, and says
// whose it is when it is not the toolkit's.
func TestCUDADriverJudgesTheFrameworksRuntime(t *testing.T) {
	c := facts.Container{CUDA: facts.CUDAToolkit{Version: "12.4", Full: "12.4.127", Kind: facts.CUDAFromDistribution,
		Source: "/usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127"}}
	wantFinding(t, cudaDriver(input(host("535.129.03", "12.2"), c)), Warn, "needs CUDA 12.4 (the distribution's /usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127)")
}

// A framework the command does not import (shadowed, or in the system
// site a venv excludes) is not judged: no framework-cuda warning for it.
func TestFrameworkCUDAJudgesOnlyWhatTheCommandImports(t *testing.T) {
	venvTorch := facts.Framework{Name: "torch", Version: "2.5.1+cu124", CUDAVersion: "12.4", Build: facts.BuildCUDA, Location: "/opt/venv/lib/python3.11/site-packages/torch"}
	systemTorch := facts.Framework{Name: "torch", Version: "2.1.0+cu118", CUDAVersion: "11.8", Build: facts.BuildCUDA,
		Location: "/usr/lib/python3/dist-packages/torch", NotJudged: "not on the sys.path of /opt/venv/bin/python3: its pyvenv.cfg sets include-system-site-packages = false"}
	in := input(host("550.54.15", "12.4"), facts.Container{CUDA: facts.CUDAToolkit{Version: "12.4"}, Frameworks: []facts.Framework{venvTorch, systemTorch}})
	f := frameworkCUDA(in)
	if f.Status != Pass || strings.Contains(f.Message, "2.1.0") {
		t.Errorf("got %s %q: the system site's torch was judged", f.Status, f.Message)
	}
	in.Facts.Container.Frameworks = []facts.Framework{systemTorch}
	wantFinding(t, frameworkCUDA(in), Skip, "no framework the command imports", "include-system-site-packages = false")
}

// A ROCm build is named as one, and given no CUDA package as its fix.
func TestCPUBuildNamesROCmBuildsWithoutACUDAFix(t *testing.T) {
	h100 := gpus(2, "NVIDIA H100 80GB HBM3", "Nvidia", "9.0")
	for _, fw := range []facts.Framework{
		{Name: "jax", Version: "0.4.35", Build: facts.BuildROCm},
		{Name: "tensorflow", Version: "2.16.1", Build: facts.BuildROCm},
	} {
		in := input(host("550.54.15", "12.4"), facts.Container{Frameworks: []facts.Framework{fw}})
		in.Visible = h100
		f := cpuBuild(in)
		wantFinding(t, f, Warn, fw.Name+" "+fw.Version, "ROCm", "AMD GPUs")
		for _, cudaFix := range []string{"pip install", "jax[cuda", "and-cuda", "download.pytorch.org"} {
			if strings.Contains(f.Remedy, cudaFix) {
				t.Errorf("%s: remedy %q offers a CUDA package", fw.Name, f.Remedy)
			}
		}
	}
}

// cuda-stack says which source of the image's CUDA won and names the
// others that state another major.
func TestCUDAStackNamesDisagreeingCUDASources(t *testing.T) {
	img := facts.CUDAToolkit{Version: "12.1", Full: "12.1.105", Kind: facts.CUDAFromRuntime, Source: "torch 2.3.1 loads /opt/conda/lib/libcudart.so.12",
		Others: []facts.CUDASource{
			{Kind: facts.CUDAFromToolkit, Version: "11.8", Source: "/usr/local/cuda/version.json"},
			{Kind: facts.CUDAFromEnv, Version: "12.1", Source: "env CUDA_VERSION"},
		}}
	f := cudaStack(input(host("550.54.15", "12.4"), facts.Container{CUDA: img}))
	wantFinding(t, f, Warn, "the image's CUDA is 12.1, from framework-runtime", "toolkit says 11.8 (/usr/local/cuda/version.json)")
	if strings.Contains(f.Message, "env says") {
		t.Errorf("a source of the same major was reported as disagreeing: %q", f.Message)
	}
}

// Where the environment an entrypoint activates cannot be told, every
// candidate is judged and the findings name the one that would fail by its
// environment: a CUDA 12.8 torch on a CUDA 12.4 driver (minor-version compatibility), a CPU torch with
// GPUs visible.
func TestCandidateFrameworksAreNamedByTheirEnvironment(t *testing.T) {
	cuda := facts.Framework{Name: "torch", Version: "2.7.1", CUDAVersion: "12.8", Build: facts.BuildCUDA, Candidate: true,
		Environment: "/app/.pixi/envs/cuda", Location: "/app/.pixi/envs/cuda/lib/python3.12/site-packages/torch"}
	cpu := facts.Framework{Name: "torch", Version: "2.7.1+cpu", Build: facts.BuildCPU, Candidate: true,
		Environment: "/app/.pixi/envs/default", Location: "/app/.pixi/envs/default/lib/python3.12/site-packages/torch"}
	in := input(host("550.54.15", "12.4"), facts.Container{Frameworks: []facts.Framework{cuda, cpu}})
	in.Visible = gpus(2, "NVIDIA H100 80GB HBM3", "Nvidia", "9.0")
	wantFinding(t, frameworkCUDA(in), Warn, "torch 2.7.1 in /app/.pixi/envs/cuda is built for CUDA 12.8")
	wantFinding(t, cpuBuild(in), Warn, "torch 2.7.1+cpu in /app/.pixi/envs/default built for the CPU only")
}
