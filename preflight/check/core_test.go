package check

import (
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/check/scenarios"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// The four kinds of NVIDIA_REQUIRE_CUDA the tests use (the nvidia/cuda
// images' values, preflight/require/testdata/nvidia_require_cuda.txt). The
// 11.8 value is the short form from the acceptance test.
const (
	require118Short = "cuda>=11.8 brand=tesla,driver>=470,driver<471"
	require128      = "cuda>=12.8 brand=unknown,driver>=470,driver<471 brand=nvidia,driver>=470,driver<471 " +
		"brand=nvidia,driver>=535,driver<536 brand=nvidia,driver>=550,driver<551 brand=tesla,driver>=550,driver<551 " +
		"brand=nvidia,driver>=560,driver<561 brand=nvidia,driver>=565,driver<566"
	require122 = "cuda>=12.2 brand=tesla,driver>=450,driver<451 brand=tesla,driver>=470,driver<471 " +
		"brand=geforcertx,driver>=470,driver<471 brand=tesla,driver>=525,driver<526 brand=geforcertx,driver>=525,driver<526"
)

// The scenario nodes' constructors, so these tests and the shared
// scenarios describe hosts alike.
var (
	host = scenarios.Host
	gpus = scenarios.GPUs
)

func input(h facts.Host, c facts.Container) Input {
	return Input{Facts: facts.Facts{Host: h, Container: c}, Visible: h.GPUs}
}

func reqs(value string) facts.Container {
	return facts.Container{Requirements: []facts.Requirement{{Var: "NVIDIA_REQUIRE_CUDA", Value: value}}, Env: map[string]string{}}
}

func wantFinding(t *testing.T, f Finding, status Status, contains ...string) {
	t.Helper()
	if f.Status != status {
		t.Errorf("%s status = %s, want %s (message: %s)", f.ID, f.Status, status, f.Message)
	}
	text := f.Message + " | " + f.Remedy
	for _, c := range contains {
		if !strings.Contains(text, c) {
			t.Errorf("%s: %q does not name %q", f.ID, text, c)
		}
	}
	if f.Status != Pass && f.Status != Skip && f.Remedy == "" && f.Status != Info {
		t.Errorf("%s: %s finding without a remedy", f.ID, f.Status)
	}
}

func TestCUDARequirement(t *testing.T) {
	h100 := gpus(8, "NVIDIA H100 80GB HBM3", "Nvidia", "9.0")
	rtx := gpus(2, "NVIDIA GeForce RTX 4090", "GeForceRTX", "8.9")
	for _, tt := range []struct {
		name     string
		in       Input
		status   Status
		contains []string
	}{
		{"DriverBelowCUDAFloorOutsideBranchesFails", input(host("515.65.01", "11.7"), reqs(require118Short)),
			Error, []string{"515.65.01", "11.7", "11.8", "520.61.05", "470.x"}},
		{"MissingBrandSatisfiesBrandFactor", input(host("470.57.02", "11.4"), reqs(require118Short)),
			Pass, []string{"brand=tesla,driver>=470,driver<471"}},
		{"NewerDriverSatisfiesCUDAFloor", input(host("535.129.03", "12.2"), reqs(require118Short)),
			Pass, []string{"cuda>=11.8"}},
		{"DataCenterGPUOnAcceptedBranchRuns", input(host("550.54.15", "12.4", h100...), reqs(require128)),
			Pass, []string{"brand=nvidia,driver>=550,driver<551", "8 GPU(s)"}},
		{"DataCenterGPUOutsideBranchesFails", input(host("545.23.08", "12.3", h100...), reqs(require128)),
			Error, []string{"545.23.08", "12.3", "12.8", "570.26", "550.x", "GPU 0", "7 more of 8"}},
		{"GeForceHasNoForwardCompatTerm", input(host("535.129.03", "12.2", rtx...), reqs(require128)),
			Error, []string{"GeForceRTX", "570.26"}},
		{"GeForceRunsNativeCUDA", input(host("535.129.03", "12.2", rtx...), reqs(require122)),
			Pass, []string{"cuda>=12.2"}},
		{"NoDriverSkips", input(facts.Host{}, reqs(require118Short)), Skip, nil},
		{"NoRequirementsSkip", input(host("535.129.03", "12.2"), facts.Container{}), Skip, nil},
		{"InvalidExpressionNamesFactor", input(host("535.129.03", "12.2"), reqs("cuda>=abc")),
			Error, []string{"cuda>=abc"}},
		{"DisabledRequireSkips", input(host("515.65.01", "11.7"), facts.Container{
			Requirements: []facts.Requirement{{Var: "NVIDIA_REQUIRE_CUDA", Value: require118Short}}, RequireDisabled: true,
			Env: map[string]string{"NVIDIA_DISABLE_REQUIRE": "true"}}), Skip, []string{"NVIDIA_DISABLE_REQUIRE"}},
		{"LegacyRuleErrorIsReported", input(host("535.129.03", "12.2"), facts.Container{RequireError: "invalid CUDA_VERSION \"x\""}),
			Error, []string{"CUDA_VERSION"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantFinding(t, cudaRequirement(tt.in), tt.status, tt.contains...)
		})
	}
}

func TestExtraRequireIsANDed(t *testing.T) {
	in := input(host("535.129.03", "12.2"), reqs(require118Short))
	in.Options.ExtraRequire = "driver>=550"
	wantFinding(t, cudaRequirement(in), Error, []string{"PREFLIGHT_REQUIRE"}...)
	// PREFLIGHT_REQUIRE still applies when the toolkit's check is disabled.
	in.Facts.Container.RequireDisabled = true
	wantFinding(t, cudaRequirement(in), Error, "PREFLIGHT_REQUIRE")
}

func TestCUDADriver(t *testing.T) {
	img := func(cuda string, compat ...facts.CompatLib) facts.Container {
		return facts.Container{CUDA: facts.CUDAToolkit{Version: cuda}, Compat: compat, Env: map[string]string{}}
	}
	compat570 := facts.CompatLib{Path: "/usr/local/cuda/compat/libcuda.so.570.124.06", DriverVersion: "570.124.06"}
	compat615 := facts.CompatLib{Path: "/usr/local/cuda/compat/libcuda.so.615.20", DriverVersion: "615.20"}
	h100 := gpus(1, "NVIDIA H100", "Nvidia", "9.0")
	rtx := gpus(1, "NVIDIA GeForce RTX 4090", "GeForceRTX", "8.9")
	for _, tt := range []struct {
		name     string
		in       Input
		status   Status
		contains []string
	}{
		{"NativeWhenDriverCUDAIsNewer", input(host("535.129.03", "12.2"), img("11.8")), Pass, []string{"natively"}},
		{"NativeWhenEqual", input(host("550.54.15", "12.4"), img("12.4.1")), Pass, nil},
		{"MinorVersionCompatIsAWarning", input(host("515.65.01", "11.7"), img("11.8")),
			Warn, []string{"515.65.01", "11.7", "11.8", "520.61.05", "minor-version", "450.80.02"}},
		{"BelowMVCFloorIsAnError", input(host("450.51.06", "11.0"), img("11.8")),
			Error, []string{"insufficient", "520.61.05"}},
		{"OtherMajorIsAnError", input(host("535.129.03", "12.2"), img("13.0")),
			Error, []string{"13.0", "580.65.06"}},
		{"ForwardCompatOnDataCenterGPU", input(host("535.129.03", "12.2", h100...), img("12.8", compat570)),
			Pass, []string{"forward compatibility", "570.124.06"}},
		{"ForwardCompatNotOnGeForce", input(host("470.57.02", "11.4", rtx...), img("12.8", compat570)),
			Error, []string{"803"}},
		{"ForwardCompatUnknownBrandWarns", input(host("470.57.02", "11.4"), img("12.8", compat570)),
			Warn, []string{"data-center"}},
		{"CompatOfTheHostsOwnBranchIsNeverUsed", input(host("525.60.13", "12.0", h100...),
			img("12.2", facts.CompatLib{Path: "/usr/local/cuda/compat/libcuda.so.525.147.05", DriverVersion: "525.147.05"})),
			Warn, []string{"minor-version"}},
		{"NoImageCUDASkips", input(host("535.129.03", "12.2"), img("")), Skip, nil},
		{"NoDriverSkips", input(facts.Host{}, img("12.2")), Skip, nil},
		// NVIDIA: New Feature Branches are not forward-compatibility targets.
		{"ForwardCompatNotOnANewFeatureBranch", input(host("610.43.02", "13.3", h100...), img("13.4", compat615)),
			Error, []string{"R610", "New Feature Branch"}},
		// A driver whose branch is not in the table gets the CUDA of the
		// branch below, a guess that never aborts.
		{"AssumedDriverCUDAOnlyWarns", input(assumedHost("430.64", "10.1"), img("11.0")),
			Warn, []string{"CUDA 10.1 is assumed", "branch 430", "does not abort"}},
		{"AssumedDriverCUDASaysSoInAWarning", input(assumedHost("600.10", "13.2"), img("13.3")),
			Warn, []string{"minor-version", "CUDA 13.2 is assumed"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantFinding(t, cudaDriver(tt.in), tt.status, tt.contains...)
		})
	}
}

// Past its end of life, R535 is no longer a supported forward-compatibility
// target: the job may run, with a warning; before it, it passes.
func TestCUDADriverForwardCompatOnEndOfLifeBranch(t *testing.T) {
	compat570 := facts.CompatLib{Path: "/usr/local/cuda/compat/libcuda.so.570.124.06", DriverVersion: "570.124.06"}
	in := input(host("535.129.03", "12.2", gpus(1, "NVIDIA H100", "Nvidia", "9.0")...),
		facts.Container{CUDA: facts.CUDAToolkit{Version: "12.8"}, Compat: []facts.CompatLib{compat570}, Env: map[string]string{}})
	in.Now = time.Date(2026, time.July, 1, 0, 0, 0, 0, time.UTC)
	wantFinding(t, cudaDriver(in), Warn, "R535", "end of life (June 2026)")
	in.Now = time.Date(2026, time.June, 30, 12, 0, 0, 0, time.UTC)
	wantFinding(t, cudaDriver(in), Pass, "forward compatibility")
}

// The done-when case: driver 600.10 (no such branch in the table) with a
// CUDA 13.3 image, its requirement and a CUDA 13.3 framework: nothing
// aborts on the guessed 13.2, and every finding that used it says so.
func TestAssumedDriverCUDANeverAbortsAlone(t *testing.T) {
	in := input(assumedHost("600.10", "13.2", gpus(1, "NVIDIA H100", "Nvidia", "9.0")...), facts.Container{
		CUDA:         facts.CUDAToolkit{Version: "13.3"},
		Requirements: []facts.Requirement{{Var: "NVIDIA_REQUIRE_CUDA", Value: "cuda>=13.3"}},
		Frameworks: []facts.Framework{{Name: "torch", Version: "2.11.0+cu133", CUDAVersion: "13.3",
			Kernels: []facts.KernelLibrary{{Path: "/t/libtorch_cuda.so", Images: []facts.KernelImage{
				{Kind: "cubin", Arch: "sm_80", Count: 1}, {Kind: "ptx", Arch: "compute_80", PTXVersion: "9.3", Count: 1}}}}}},
		Env: map[string]string{},
	})
	for _, f := range Run(in) {
		if f.Status == Error {
			t.Errorf("%s is an error on a guessed CUDA version: %s", f.ID, f.Message)
		}
		switch f.ID {
		case "cuda-requirement", "cuda-driver", "framework-cuda", "gpu-arch":
			if f.Status != Warn || !strings.Contains(f.Message, "assumed") {
				t.Errorf("%s: %s %q, want a warning that says the CUDA version is assumed", f.ID, f.Status, f.Message)
			}
		}
	}
	// The same facts with a known 13.2 driver are errors (the two others
	// are minor-version-compatibility warnings either way): the guess
	// alone is what turns them into warnings.
	in.Facts.Host.Driver.CUDAVersionSource = facts.CUDAFromBranchTable
	for _, id := range []string{"cuda-requirement", "gpu-arch"} {
		for _, f := range Run(in) {
			if f.ID == id && f.Status != Error {
				t.Errorf("%s on a known CUDA 13.2 driver: %s, want error", id, f.Status)
			}
		}
	}
}

// assumedHost is a host whose driver's CUDA version is a guess.
func assumedHost(driver, cuda string, g ...facts.GPU) facts.Host {
	h := host(driver, cuda, g...)
	h.Driver.CUDAVersionSource = facts.CUDAAssumed
	return h
}

func TestCUDADriverStaleCompatOnLibraryPath(t *testing.T) {
	c := facts.Container{CUDA: facts.CUDAToolkit{Version: "12.2"},
		Compat: []facts.CompatLib{{Path: "/usr/local/cuda/compat/libcuda.so.535.129.03", DriverVersion: "535.129.03"}},
		Env:    map[string]string{"LD_LIBRARY_PATH": "/usr/local/cuda/compat/lib:/usr/local/nvidia/lib64"}}
	wantFinding(t, cudaDriver(input(host("550.54.15", "12.4"), c)), Warn, "803")
}

func TestDriver(t *testing.T) {
	for _, tt := range []struct {
		name       string
		h          facts.Host
		requireGPU bool
		status     Status
	}{
		{"DriverFoundPasses", host("535.129.03", "12.2"), false, Pass},
		{"NoDriverWarns", facts.Host{}, false, Warn},
		{"NoDriverIsAnErrorWhenGPURequired", facts.Host{}, true, Error},
		{"DeviceNodesWithoutVersionWarn", facts.Host{DeviceNodes: []string{"/dev/nvidiactl"}}, false, Warn},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := input(tt.h, facts.Container{})
			in.Options.RequireGPU = tt.requireGPU
			wantFinding(t, driver(in), tt.status)
		})
	}
}

func TestGPUCount(t *testing.T) {
	for _, tt := range []struct {
		name       string
		h          facts.Host
		min        int
		requireGPU bool
		status     Status
	}{
		{"EnoughGPUsPass", host("550.54.15", "12.4", gpus(8, "H100", "Nvidia", "9.0")...), 8, false, Pass},
		{"TooFewGPUsFail", host("550.54.15", "12.4", gpus(4, "H100", "Nvidia", "9.0")...), 8, false, Error},
		{"NoGPUWithDriverWarns", host("550.54.15", "12.4"), 0, false, Warn},
		{"NoGPUWithoutDriverIsInfo", facts.Host{}, 0, false, Info},
		{"NoGPUIsAnErrorWhenRequired", facts.Host{}, 0, true, Error},
		{"MinGPUsWithoutDriverFails", facts.Host{}, 1, false, Error},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := input(tt.h, facts.Container{})
			in.Options.MinGPUs, in.Options.RequireGPU = tt.min, tt.requireGPU
			wantFinding(t, gpuCount(in), tt.status)
		})
	}
}

func TestShm(t *testing.T) {
	for _, tt := range []struct {
		name   string
		size   uint64
		status Status
	}{
		{"DockerDefaultWarns", 64 << 20, Warn},
		{"SmallerWarns", 32 << 20, Warn},
		{"LargerPasses", 8 << 30, Pass},
		{"UnknownSkips", 0, Skip},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantFinding(t, shm(input(facts.Host{ShmBytes: tt.size}, facts.Container{})), tt.status)
		})
	}
}
