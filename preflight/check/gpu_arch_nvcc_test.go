package check

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin"
)

// nvccFixture scans one of the libraries NVIDIA's nvcc built
// (preflight/fatbin/testdata/nvcc, listed against cuobjdump there).
func nvccFixture(t *testing.T, name string) facts.KernelLibrary {
	t.Helper()
	path := filepath.Join("..", "fatbin", "testdata", "nvcc", name)
	r, err := fatbin.ScanFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return facts.KernelLibrary{Path: "/opt/lib/" + name, Images: r.Images, Fatbins: r.Fatbins}
}

// Every real fixture against GPUs of compute capability 3.5 to 12.0, on a
// driver of CUDA 12.4: P a cubin runs in every fatbin, W some fatbin runs
// only through PTX JIT or has nothing the GPU can run while others do, E no
// fatbin has anything it can run. The expectations are CUDA's loading rules
// applied by hand to what each fixture was built with
// (scripts/nvcc-fixtures.sh), not the check's output.
func TestGPUArchOnNvccBuiltLibraries(t *testing.T) {
	ccs := []string{"3.5", "5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"}
	tests := []struct {
		lib  string
		want string // one letter per cc
	}{
		{"sm70.so", "EEEPPEEEEEE"},          // sm_70: the 7.x family from 7.0 up
		{"ptx80.so", "EEEEEWWWWWW"},         // compute_80 PTX JITs from 8.0 up; no relocatable cubins count
		{"mix.so", "EEEPPPPPWWW"},           // sm_70, sm_80 cubins; compute_80 JIT beyond
		{"compressed.so", "EEEEPEPPWWW"},    // sm_75, sm_86; 8.0 has neither; compute_86 JIT from 9.0
		{"rdc.so", "EEEEEPPPEEE"},           // the device-linked sm_80 kernel
		{"static.so", "EEEEPPPPEEE"},        // sm_75, sm_80 from the static library
		{"split.so", "EEEEWEWWEEE"},         // one unit sm_75 only, the other sm_86 only: no GPU runs both; where one runs, a warning
		{"sm90-90a.so", "EEEEEEEEPWW"},      // sm_90 (and 90a) on 9.0, compute_90 JIT beyond
		{"ptx90a.so", "EEEEEEEEWEE"},        // compute_90a JITs on exactly 9.0, never on 10.0 or 12.0
		{"compressed90a.so", "EEEEEEEEPEE"}, // sm_90a and compute_90a: 9.0 only
		{"cuda124-sm80.so", "EEEEEPPPWWW"},  // sm_80; compute_80 of PTX ISA 8.4 JIT on a CUDA 12.4 driver
	}
	letter := map[Status]string{Pass: "P", Warn: "W", Error: "E"}
	for _, tt := range tests {
		t.Run(tt.lib, func(t *testing.T) {
			lib := nvccFixture(t, tt.lib)
			var got strings.Builder
			for _, cc := range ccs {
				gpu := facts.GPU{Name: "GPU " + cc, ComputeCapability: cc}
				in := archInput("550.54.15", "12.4", "", []facts.Framework{withKernels(fw("torch", "2.5.1", "12.4"), lib)}, gpu)
				f := GPUArch.Run(in)
				l, ok := letter[f.Status]
				if !ok {
					l = "?"
				}
				got.WriteString(l)
				if f.Status == Error && !strings.Contains(f.Message, "no kernel image") {
					t.Errorf("CC %s: error without saying why: %s", cc, f.Message)
				}
			}
			if got.String() != tt.want {
				t.Errorf("verdicts for CC %s: %s, want %s", strings.Join(ccs, " "), got.String(), tt.want)
			}
		})
	}
}

// The same CUDA 12.4 PTX on a CUDA 12.2 driver (R535) cannot be JIT-compiled
// (error 222): an error naming the PTX ISA and the driver that would.
func TestGPUArchNvccPTXNewerThanDriver(t *testing.T) {
	lib := nvccFixture(t, "cuda124-sm80.so")
	in := archInput("535.104.05", "12.2", "", []facts.Framework{withKernels(fw("torch", "2.5.1", "12.4"), lib)}, h100)
	expectFinding(t, GPUArch.Run(in), "gpu-arch", Error, "PTX ISA 8.4", "CUDA >= 12.4", "550.54.14")
}

// split.so on a T4: one of its two fatbins has nothing for sm_75, and the
// finding counts them; on an A100 neither has anything: an error. Judging
// the union of its images (sm_75, sm_86) would pass the A10 outright.
func TestGPUArchCountsFatbinsWithoutImage(t *testing.T) {
	lib := nvccFixture(t, "split.so")
	t4 := facts.GPU{Name: "Tesla T4", ComputeCapability: "7.5"}
	in := archInput("550.54.15", "12.4", "", []facts.Framework{withKernels(fw("torch", "2.5.1", "12.4"), lib)}, t4)
	expectFinding(t, GPUArch.Run(in), "gpu-arch", Warn, "1 of 2 fatbins", "those carry only sm_86", "picks kernels by architecture")
	in = archInput("550.54.15", "12.4", "", []facts.Framework{withKernels(fw("torch", "2.5.1", "12.4"), lib)}, a100)
	expectFinding(t, GPUArch.Run(in), "gpu-arch", Error, "no kernel image", "compiled: sm_75, sm_86")
}

// Narrow fatbins among many (flash attention built for sm_80 and sm_90
// only) warn rather than abort.
func TestGPUArchFewNarrowFatbinsWarn(t *testing.T) {
	l := lib("/t/libtorch_cuda.so", "sm_75", "sm_80", "sm_90")
	l.Fatbins = []facts.FatbinGroup{
		{Images: lib("", "sm_75", "sm_80", "sm_90").Images, Count: 950},
		{Images: lib("", "sm_80", "sm_90").Images, Count: 50},
	}
	t4 := facts.GPU{Name: "Tesla T4", ComputeCapability: "7.5"}
	in := archInput("550.54.15", "12.4", "", []facts.Framework{withKernels(fw("torch", "2.5.1", "12.4"), l)}, t4)
	expectFinding(t, GPUArch.Run(in), "gpu-arch", Warn, "50 of 1000 fatbins", "those carry only sm_80, sm_90", "if the library launches them")
	in = archInput("550.54.15", "12.4", "", []facts.Framework{withKernels(fw("torch", "2.5.1", "12.4"), l)}, a100)
	expectFinding(t, GPUArch.Run(in), "gpu-arch", Pass)
}
