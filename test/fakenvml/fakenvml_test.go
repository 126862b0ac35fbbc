package fakenvml

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/nvml"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

var (
	buildOnce sync.Once
	libPath   string
	probePath string
	buildErr  error
)

// built compiles the fake library and, with this host's cgo, the probe.
// (The e2e suite runs the bullseye-built probe; here the mapping through
// go-nvml's real dlopen path is what is tested.)
func built(t *testing.T) (lib, probe string) {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fakenvml-")
		if err != nil {
			buildErr = err
			return
		}
		if libPath, buildErr = Build(dir); buildErr != nil {
			return
		}
		probePath = filepath.Join(dir, nvml.ProbeName)
		cmd := exec.Command("go", "build", "-o", probePath, "github.com/gpu-preflight/gpu-preflight/cmd/gpu-preflight-nvml")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "CGO_CFLAGS=-O2 -Wno-deprecated-declarations")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = &buildError{err, out}
		}
	})
	if buildErr != nil {
		t.Fatalf("building the fake library and the probe: %v", buildErr)
	}
	return libPath, probePath
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + string(e.out) }

func TestLibraryExportsEveryEntryPointOfTheHeader(t *testing.T) {
	lib, _ := built(t)
	header, err := Header()
	if err != nil {
		t.Fatal(err)
	}
	h, err := os.ReadFile(header)
	if err != nil {
		t.Fatal(err)
	}
	exported, err := Exported(lib)
	if err != nil {
		t.Fatal(err)
	}
	want := EntryPoints(h)
	want["nvmlErrorString"] = ""
	for _, name := range []string{"nvmlInit", "nvmlInit_v2", "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetCount_v2"} {
		if _, ok := want[name]; !ok {
			t.Errorf("the header parse missed %s", name)
		}
	}
	for name := range want {
		if !exported[name] {
			t.Errorf("fake library lacks %s", name)
		}
	}
	if len(want) < 400 {
		t.Errorf("only %d entry points found in nvml.h", len(want))
	}
}

func TestStubsSkipWhatFakeCDefines(t *testing.T) {
	header := []byte(`
/* nvmlReturn_t DECLDIR nvmlInComment(void); */
nvmlReturn_t DECLDIR nvmlA(nvmlDevice_t device,
                           unsigned int *count);
DEPRECATED(13.0) nvmlReturn_t DECLDIR nvmlB (void);
`)
	got := EntryPoints(header)
	if len(got) != 2 || got["nvmlA"] != "nvmlDevice_t device, unsigned int *count" || got["nvmlB"] != "void" {
		t.Fatalf("EntryPoints = %q", got)
	}
	defined := Defined([]byte("nvmlReturn_t nvmlA(void)\n{\n}\nUINT_GETTER(nvmlC, \"c\", int)\nconst char *nvmlErrorString(nvmlReturn_t r)\n"))
	if !defined["nvmlA"] || !defined["nvmlC"] || !defined["nvmlErrorString"] {
		t.Errorf("Defined = %v", defined)
	}
}

// runProbe runs the probe on the fake library playing s.
func runProbe(t *testing.T, s Scenario, timeout time.Duration) nvml.Result {
	t.Helper()
	lib, probe := built(t)
	path, err := s.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return nvml.Probe(context.Background(), nvml.Options{
		Library: lib, Timeout: timeout, Path: probe, NoMemfd: true,
		Env: append(os.Environ(), EnvScenario+"="+path),
	})
}

func TestProbeReadsScriptedGPUs(t *testing.T) {
	tests := []struct {
		s                                   Scenario
		driver, cuda, name, brand, cc, arch string
		gpus                                int
	}{
		{H100x8("550.54.15", 12040), "550.54.15", "12.4", "NVIDIA H100 80GB HBM3", "Nvidia", "9.0", "Hopper", 8},
		{H100x8("545.23.08", 12030), "545.23.08", "12.3", "NVIDIA H100 80GB HBM3", "Nvidia", "9.0", "Hopper", 8},
		{V100x4(), "470.57.02", "11.4", "Tesla V100-SXM2-16GB", "Tesla", "7.0", "Volta", 4},
		{RTX4090x2(), "535.129.03", "12.2", "NVIDIA GeForce RTX 4090", "GeForceRTX", "8.9", "Ada", 2},
	}
	for _, tt := range tests {
		t.Run(tt.s.Name, func(t *testing.T) {
			r := runProbe(t, tt.s, 10*time.Second)
			d := r.Document
			if r.NVML.Outcome != facts.ProbeOK || d == nil {
				t.Fatalf("NVML = %+v, stderr %q", r.NVML, r.Stderr)
			}
			if d.DriverVersion != tt.driver || d.CUDAVersion != tt.cuda || d.CUDAVersionCall != "v2" || len(d.GPUs) != tt.gpus || len(d.Errors) != 0 {
				t.Fatalf("document: driver %q cuda %q via %q, %d GPUs, errors %v", d.DriverVersion, d.CUDAVersion, d.CUDAVersionCall, len(d.GPUs), d.Errors)
			}
			for i, g := range d.GPUs {
				if g.Index != i || g.Name != tt.name || g.Brand != tt.brand || g.ComputeCapability != tt.cc || g.Architecture != tt.arch {
					t.Errorf("GPU %d = %+v", i, g)
				}
				if !strings.HasPrefix(g.UUID, "GPU-") || !strings.HasPrefix(g.PCIBusID, "00000000:") || g.MemoryBytes == 0 {
					t.Errorf("GPU %d identity = %q %q %d", i, g.UUID, g.PCIBusID, g.MemoryBytes)
				}
			}
		})
	}
}

func TestProbeMapsModesAndHealth(t *testing.T) {
	d := runProbe(t, Unhealthy(), 10*time.Second).Document
	if d == nil || len(d.GPUs) != 4 {
		t.Fatalf("document %+v", d)
	}
	g := d.GPUs
	if g[0].MIGMode != "enabled" || g[0].MIGDevices == nil || *g[0].MIGDevices != 0 {
		t.Errorf("GPU 0 MIG %q devices %v", g[0].MIGMode, g[0].MIGDevices)
	}
	if g[1].ECCUncorrectedVolatile == nil || *g[1].ECCUncorrectedVolatile != 3 || g[1].MIGMode != "disabled" {
		t.Errorf("GPU 1 ECC %v MIG %q", g[1].ECCUncorrectedVolatile, g[1].MIGMode)
	}
	if g[2].RetiredPagesPending == nil || !*g[2].RetiredPagesPending || g[0].Errors["retiredPagesPending"] != "Not Supported" {
		t.Errorf("GPU 2 retired %v, GPU 0 errors %v", g[2].RetiredPagesPending, g[0].Errors)
	}
	if g[3].PersistenceMode != "disabled" || g[0].PersistenceMode != "enabled" {
		t.Errorf("persistence %q %q", g[3].PersistenceMode, g[0].PersistenceMode)
	}
	// GeForce: MIG NOT_SUPPORTED is "no MIG", not an error.
	r := runProbe(t, RTX4090x2(), 10*time.Second).Document.GPUs[0]
	if r.MIGMode != "" || r.Errors["migMode"] != "" || r.Errors["eccUncorrectedVolatile"] != "Not Supported" || r.PersistenceMode != "disabled" {
		t.Errorf("RTX 4090: MIG %q persistence %q errors %v", r.MIGMode, r.PersistenceMode, r.Errors)
	}
}

func TestProbeReportsFieldErrorsWithNVMLStrings(t *testing.T) {
	r := runProbe(t, FieldErrors(), 10*time.Second)
	d := r.Document
	if r.NVML.Outcome != facts.ProbeOK || d == nil || len(d.GPUs) != 3 {
		t.Fatalf("NVML = %+v, document %+v", r.NVML, d)
	}
	if d.CUDAVersion != "12.4" || d.CUDAVersionCall != "v1" {
		t.Errorf("CUDA %q via %q, want 12.4 from v1 when v2 fails", d.CUDAVersion, d.CUDAVersionCall)
	}
	checks := []struct {
		gpu          int
		field, error string
	}{
		{0, "uuid", "Insufficient Permissions"},
		{1, "persistenceMode", "GPU is lost"},
		{1, "name", "Unknown Error"},
		{2, "handle", "Insufficient Permissions"},
	}
	for _, c := range checks {
		if got := d.GPUs[c.gpu].Errors[c.field]; got != c.error {
			t.Errorf("GPU %d %s error = %q, want %q", c.gpu, c.field, got, c.error)
		}
	}
	if d.GPUs[0].UUID != "" || d.GPUs[0].Name == "" || d.GPUs[1].PersistenceMode != "" {
		t.Errorf("values: %+v %+v", d.GPUs[0], d.GPUs[1])
	}
}

func TestProbeReportsDriverNotLoaded(t *testing.T) {
	r := runProbe(t, DriverNotLoaded(), 10*time.Second)
	if r.NVML.Outcome != facts.ProbeDriverNotLoaded || r.NVML.Error != "Driver Not Loaded" {
		t.Fatalf("NVML = %+v", r.NVML)
	}
}

func TestProbeReportsMissingLibrary(t *testing.T) {
	_, probe := built(t)
	r := nvml.Probe(context.Background(), nvml.Options{Library: "/nonexistent/libnvidia-ml.so.1", Path: probe, NoMemfd: true})
	if r.NVML.Outcome != facts.ProbeLibraryNotFound || !strings.Contains(r.NVML.Error, "/nonexistent/libnvidia-ml.so.1") {
		t.Fatalf("NVML = %+v", r.NVML)
	}
}

func TestProbeHangingInitIsKilledAtTheDeadline(t *testing.T) {
	built(t)
	answer := func() time.Duration {
		start := time.Now()
		if r := runProbe(t, H100x8("550.54.15", 12040), 10*time.Second); r.NVML.Outcome != facts.ProbeOK {
			t.Fatalf("NVML = %+v", r.NVML)
		}
		return time.Since(start)
	}
	answered := answer()
	start := time.Now()
	r := runProbe(t, Hang(), time.Second)
	if r.NVML.Outcome != facts.ProbeTimeout {
		t.Fatalf("NVML = %+v", r.NVML)
	}
	harness.WithinDeadline(t, "a probe whose nvmlInit hangs", time.Since(start), time.Second, answered, answer)
}

func TestScenarioText(t *testing.T) {
	got := FieldErrors().Text()
	for _, want := range []string{"init ok\n", "cuda_v2 !12\n", "0 uuid !4\n", "2 handle !4\n", "1 persistence !15\n"} {
		if !bytes.Contains([]byte(got), []byte(want)) {
			t.Errorf("scenario text lacks %q:\n%s", want, got)
		}
	}
}
