package check

import (
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
)

// lib is a scanned kernel library holding targets ("sm_80",
// "compute_80@7.8" for PTX of ISA 7.8).
func lib(path string, targets ...string) facts.KernelLibrary {
	l := facts.KernelLibrary{Path: path}
	for _, t := range targets {
		arch, isa, _ := cutAt(t)
		kind := "cubin"
		if len(arch) > 8 && arch[:8] == "compute_" {
			kind = "ptx"
		}
		l.Images = append(l.Images, facts.KernelImage{Kind: kind, Arch: arch, PTXVersion: isa, Count: 1})
	}
	return l
}

func cutAt(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '@' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// withKernels is a framework whose scanned libraries are libs.
func withKernels(f facts.Framework, libs ...facts.KernelLibrary) facts.Framework {
	f.Kernels = libs
	return f
}

// withArchs is a framework with only a version file's targets.
func withArchs(f facts.Framework, archs ...string) facts.Framework {
	f.Archs = archs
	f.Source = "/usr/lib/python3/dist-packages/" + f.Name + "/version.py"
	return f
}

var (
	thor  = facts.GPU{Index: 0, Name: "NVIDIA Jetson Thor", Brand: "Nvidia", ComputeCapability: "11.0"}
	rubin = facts.GPU{Index: 0, Name: "NVIDIA Rubin", Brand: "Nvidia", ComputeCapability: "10.7"}
)

const libpaddle = "/usr/local/lib/python3.10/dist-packages/paddle/base/libpaddle.so"

func TestGPUArchDoneWhen(t *testing.T) {
	paddle := fw("paddlepaddle", "2.6.0.post118", "11.8")
	cubinsOnly := withKernels(paddle, lib(libpaddle, "sm_70", "sm_80"))
	withPTX := withKernels(paddle, lib(libpaddle, "sm_70", "sm_80", "compute_80@7.8"))

	t.Run("sm_70 and sm_80 cubins only on an H100 is an error naming sm_90 and the compiled list", func(t *testing.T) {
		f := GPUArch.Run(archInput("535.104.05", "12.2", "11.8", []facts.Framework{cubinsOnly}, h100))
		expectFinding(t, f, "gpu-arch", Error, "GPU 0 (NVIDIA H100 80GB HBM3, compute capability 9.0)",
			"paddlepaddle 2.6.0.post118", "sm_90 missing", "compiled: sm_70, sm_80", libpaddle)
	})
	t.Run("compute_80 PTX the driver can JIT is a warning", func(t *testing.T) {
		f := GPUArch.Run(archInput("535.104.05", "12.2", "11.8", []facts.Framework{withPTX}, h100))
		expectFinding(t, f, "gpu-arch", Warn, "sm_90 missing", "JIT-compile compute_80 PTX at first launch")
	})
	t.Run("compute_80 PTX newer than the driver's CUDA is an error", func(t *testing.T) {
		f := GPUArch.Run(archInput("515.65.01", "11.7", "11.8", []facts.Framework{withPTX}, h100))
		expectFinding(t, f, "gpu-arch", Error, "sm_90 missing", "compute_80 PTX (PTX ISA 7.8)", "CUDA >= 11.8",
			"supports CUDA 11.7", "520.61.05")
	})
}

func TestGPUArchRules(t *testing.T) {
	torch := fw("torch", "2.5.1+cu124", "12.4")
	one := func(gpu facts.GPU, targets ...string) Input {
		return archInput("550.54.15", "12.4", "", []facts.Framework{withKernels(torch, lib("/t/libtorch_cuda.so", targets...))}, gpu)
	}
	tests := []struct {
		name     string
		in       Input
		status   Status
		contains []string
	}{
		{"cubin of the same major and a lower minor runs", one(facts.GPU{Name: "A10", ComputeCapability: "8.6"}, "sm_80"), Pass, []string{"sm_80"}},
		{"cubin of the same capability runs", one(h100, "sm_80", "sm_90"), Pass, []string{"sm_90 cubins"}},
		{"cubin of a higher minor does not run", one(a100, "sm_86"), Error, []string{"sm_80 missing", "compiled: sm_86"}},
		{"cubin of another major does not run", one(h100, "sm_80", "sm_86"), Error, []string{"sm_90 missing"}},
		{"cubin of an older major does not run on a newer GPU", one(b200, "sm_90"), Error, []string{"sm_100 missing"}},
		{"'a' cubin runs on exactly its capability", one(h100, "sm_90a"), Pass, nil},
		{"'a' cubin does not run on a higher minor", one(b300, "sm_100a"), Error, []string{"sm_103 missing"}},
		{"'f' cubin runs on the same major with a higher minor", one(b300, "sm_100f"), Pass, nil},
		{"'f' cubin does not run on another major", one(rtx50, "sm_100f"), Error, nil},
		{"PTX of a lower capability JITs on a newer major", one(b200, "sm_90", "compute_90@8.4"), Warn, []string{"compute_90 PTX at first launch"}},
		{"PTX of a higher capability does not run", one(a100, "compute_90@8.4"), Error, []string{"no PTX the driver could JIT"}},
		{"PTX newer than the driver's CUDA does not JIT", one(h100, "compute_80@8.5"), Error, []string{"CUDA >= 12.5", "supports CUDA 12.4", "555.42.02"}},
		{"'a' PTX JITs only on exactly its capability", one(b200, "compute_90a@8.4"), Error, nil},
		{"'a' PTX JITs on its own capability", one(h100, "compute_90a@8.4"), Warn, nil},
		{"'f' PTX JITs within its major", one(b300, "compute_100f@8.8"), Error, []string{"CUDA >= 12.9"}},
		{"'f' PTX does not JIT on another major", one(rtx50, "compute_100f@8.4"), Error, []string{"no PTX the driver could JIT"}},
		{"PTX ISA older than the table is a warning", one(h100, "compute_80@6.0"), Warn, []string{"not in the PTX table"}},
		// CUDA 13.2+ PTX-only on an R550 driver fails with error 222.
		{"PTX ISA 9.2 on a CUDA 12.4 driver does not JIT", one(h100, "compute_80@9.2"), Error, []string{"CUDA >= 13.2", "595.45.04"}},
		{"PTX ISA newer than the table on a driver the table knows does not JIT", one(h100, "compute_80@9.9"), Error,
			[]string{"PTX ISA 9.9", "newer than any CUDA up to 13.5"}},
		{"GPU of unknown capability is a skip", one(facts.GPU{Name: "mystery"}, "sm_80"), Skip, nil},
		{"no visible GPU is a skip",
			archInput("550.54.15", "12.4", "", []facts.Framework{withKernels(torch, lib("/t/x.so", "sm_80"))}), Skip, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expectFinding(t, GPUArch.Run(tt.in), "gpu-arch", tt.status, tt.contains...)
		})
	}
}

func TestGPUArchFFamilyPTXOnSupportingDriver(t *testing.T) {
	in := archInput("575.51.03", "12.9", "", []facts.Framework{withKernels(fw("torch", "2.8.0+cu129", "12.9"), lib("/t/x.so", "compute_100f@8.8"))}, b300)
	expectFinding(t, GPUArch.Run(in), "gpu-arch", Warn, "compute_100f")
}

func TestGPUArchVersionFileTargets(t *testing.T) {
	tf := fw("tensorflow", "2.15.0", "12.1")
	tests := []struct {
		name     string
		in       Input
		status   Status
		contains []string
	}{
		{"recorded cubin list is used without scanned kernels",
			archInput("535.104.05", "12.2", "", []facts.Framework{withArchs(tf, "sm_70", "sm_80")}, a100), Pass, nil},
		{"recorded PTX takes the framework CUDA's ISA: JIT when the driver is as new",
			archInput("535.104.05", "12.2", "", []facts.Framework{withArchs(tf, "sm_80", "compute_90")}, b200), Warn,
			[]string{"compute_90 PTX at first launch"}},
		{"recorded PTX takes the framework CUDA's ISA: no JIT on an older driver",
			archInput("525.60.13", "12.0", "", []facts.Framework{withArchs(tf, "sm_80", "compute_90")}, b200), Error,
			[]string{"PTX of CUDA 12.1", "CUDA >= 12.1", "530.30.02", "tensorflow/version.py"}},
		{"libraries without device code fall back to the recorded list",
			archInput("535.104.05", "12.2", "", []facts.Framework{withKernels(withArchs(tf, "sm_80"), lib("/t/libc10_cuda.so"))}, h100), Error,
			[]string{"sm_90 missing", "compiled: sm_80"}},
		{"a framework without any target information is not judged",
			archInput("535.104.05", "12.2", "", []facts.Framework{tf}, h100), Skip, nil},
		{"driver CUDA unknown with only PTX is a warning",
			archInput("", "", "", []facts.Framework{withArchs(tf, "compute_80")}, h100), Warn, []string{"cannot be told"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expectFinding(t, GPUArch.Run(tt.in), "gpu-arch", tt.status, tt.contains...)
		})
	}
}

// Each library is judged alone, and every one that has nothing for the GPU
// is named.
func TestGPUArchNamesEachLibraryWithoutAnImage(t *testing.T) {
	paddle := withKernels(fw("paddlepaddle", "3.0.0", "12.6"),
		lib("/p/libs/libphi_core.so", "sm_80", "sm_90"),
		lib("/p/libs/libphi_gpu.so", "sm_80"),
		lib("/p/libs/libflashattn.so", "sm_80"))
	f := GPUArch.Run(archInput("560.35.03", "12.6", "", []facts.Framework{paddle}, h100))
	expectFinding(t, f, "gpu-arch", Error, "libphi_gpu.so", "libflashattn.so")
	if strings.Contains(f.Message, "libphi_core.so") {
		t.Errorf("the library that runs is named among those that do not: %s", f.Message)
	}
}

func TestGPUArchToolkitRange(t *testing.T) {
	torch := withKernels(fw("torch", "2.9.0+cu130", "13.0"), lib("/t/libtorch_cuda.so", "sm_75", "sm_80", "sm_90", "sm_100", "sm_120"))
	tests := []struct {
		name     string
		in       Input
		status   Status
		contains []string
	}{
		{"CUDA 13 has no Volta",
			archInput("580.65.06", "13.0", "13.0", nil, v100), Error, []string{"compute capability 7.0", "older than every target of the image's CUDA 13.0", "7.5, 8.0"}},
		{"a GPU newer than the toolkit is a warning",
			archInput("570.124.06", "12.8", "11.8", nil, b200), Warn, []string{"not a target of the image's CUDA 11.8", "8.9, 9.0)", "PTX JIT"}},
		// CUDA 12.8 and 12.9 build for Thor as sm_101; CUDA 13.0 renamed it
		// sm_110, which is what a driver of R580 or later reports.
		{"Jetson Thor (11.0) on a CUDA 12.9 image is not a pass",
			archInput("580.65.06", "13.0", "12.9", nil, thor), Warn, []string{"not a target of the image's CUDA 12.9", "10.1", "10.3"}},
		{"Jetson Thor (11.0) on a CUDA 12.8 image is not a pass",
			archInput("580.65.06", "13.0", "12.8", nil, thor), Warn, []string{"not a target of the image's CUDA 12.8"}},
		{"Jetson Thor (11.0) on a CUDA 13.0 image passes",
			archInput("580.65.06", "13.0", "13.0", nil, thor), Pass, nil},
		{"Orin (8.7) runs the sm_80 of CUDA 11.0",
			archInput("580.65.06", "13.0", "11.0", nil, facts.GPU{Name: "Orin", ComputeCapability: "8.7"}), Pass, nil},
		{"Rubin (10.7) is a target from CUDA 13.4 on",
			archInput("615.20", "13.4", "13.4", nil, rubin), Pass, nil},
		{"Rubin (10.7) before CUDA 13.4 runs its sm_100 and sm_103 cubins",
			archInput("610.43.02", "13.3", "13.3", nil, rubin), Pass, nil},
		{"a GPU inside the range passes",
			archInput("580.65.06", "13.0", "13.0", []facts.Framework{torch}, h100), Pass, nil},
		{"both the toolkit and the framework fail on Volta",
			archInput("580.65.06", "13.0", "13.0", []facts.Framework{torch}, v100), Error, []string{"CUDA 13.0", "sm_70 missing"}},
		{"no toolkit and no framework is a skip",
			archInput("580.65.06", "13.0", "", nil, h100), Skip, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expectFinding(t, GPUArch.Run(tt.in), "gpu-arch", tt.status, tt.contains...)
		})
	}
}

func TestGPUArchGroupsGPUsOfOneModel(t *testing.T) {
	g0, g1, g2 := h100, h100, a100
	g1.Index, g2.Index = 1, 2
	in := archInput("535.104.05", "12.2", "", []facts.Framework{withKernels(fw("torch", "2.1.0+cu121", "12.1"), lib("/t/x.so", "sm_80"))}, g0, g1, g2)
	expectFinding(t, GPUArch.Run(in), "gpu-arch", Error, "GPU 0,1 (NVIDIA H100 80GB HBM3, compute capability 9.0)")
}

func TestCubinAndPTXRulesAgainstTheCompatibilityGuides(t *testing.T) {
	// docs/fatbin.md "Loading rules", NVIDIA Ada compatibility
	// guide: "cubin generated for 8.6 is supported to run on 8.9 ... 8.9 is
	// not supported on 8.6 ... 8.x is not supported on 9.0".
	parse := func(s string) gpuarch.Arch {
		a, err := gpuarch.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	cases := []struct {
		target, cc string
		cubin, ptx bool
	}{
		{"sm_86", "8.9", true, true},
		{"sm_89", "8.6", false, false},
		{"sm_80", "9.0", false, true},
		{"sm_90a", "9.0", true, true},
		{"sm_90a", "10.0", false, false},
		{"sm_100f", "10.3", true, true},
		{"sm_100f", "12.0", false, false},
		{"sm_120", "12.1", true, true},
	}
	for _, c := range cases {
		target, cc := parse(c.target), parse(c.cc)
		if got := cubinRuns(target, cc); got != c.cubin {
			t.Errorf("cubin %s on %s: %v, want %v", c.target, c.cc, got, c.cubin)
		}
		if got := ptxTargets(target, cc); got != c.ptx {
			t.Errorf("PTX %s on %s: %v, want %v", c.target, c.cc, got, c.ptx)
		}
	}
}
