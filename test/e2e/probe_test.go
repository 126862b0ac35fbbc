//go:build e2e

package e2e

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/nvml"
	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

var glibcVersion = regexp.MustCompile(`^GLIBC_(\d+)\.(\d+)(?:\.(\d+))?$`)

// maxGLIBC returns the highest GLIBC_x.y[.z] symbol version path needs.
func maxGLIBC(t *testing.T, path string) (string, [3]int) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.ImportedSymbols()
	if err != nil {
		t.Fatalf("%s: reading its imported symbols: %v", path, err)
	}
	var best string
	var bestV [3]int
	for _, s := range syms {
		m := glibcVersion.FindStringSubmatch(s.Version)
		if m == nil {
			continue
		}
		var v [3]int
		for i := range v {
			v[i], _ = strconv.Atoi(m[i+1])
		}
		if best == "" || v[0] > bestV[0] || v[0] == bestV[0] && (v[1] > bestV[1] || v[1] == bestV[1] && v[2] > bestV[2]) {
			best, bestV = s.Version, v
		}
	}
	if best == "" {
		t.Fatalf("%s imports no GLIBC_ versioned symbol: not the dynamically linked probe?", path)
	}
	return best, bestV
}

// The probe must start in every image GPU jobs use, from Ubuntu 18.04
// (glibc 2.27) and UBI 8 (glibc 2.28) on (docs/sources.md, "What gpu-preflight is held to").
func TestProbeNeedsAtMostGLIBC228(t *testing.T) {
	name, v := maxGLIBC(t, probeBin(t))
	t.Logf("highest glibc symbol version the probe needs: %s", name)
	if v[0] > 2 || v[0] == 2 && v[1] > 28 {
		t.Fatalf("the probe needs %s, newer than GLIBC_2.28: it must be built in the bullseye root (make probe)", name)
	}
	f, err := elf.Open(probeBin(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	// go-nvml dlopens libnvidia-ml at run time; at link time the probe
	// needs glibc alone (libpthread and libdl are separate before 2.34).
	for _, l := range libs {
		switch l {
		case "libc.so.6", "libpthread.so.0", "libdl.so.2":
		default:
			t.Errorf("the probe links %s; it may need only glibc", l)
		}
	}
}

func TestShimIsStaticWithTheProbeEmbedded(t *testing.T) {
	shim := shimBin(t)
	f, err := elf.Open(shim)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s has a %v program header: not statically linked", shim, p.Type)
		}
	}
	st, err := os.Stat(shim)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > 15<<20 {
		t.Errorf("%s is %d bytes, over the 15 MiB budget (docs/sources.md, What gpu-preflight is held to)", shim, st.Size())
	}
	// The embedded probe answers from a memfd, so no probe file is needed.
	rec, _ := checkJSON(t, shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("550.54.15", 12040))))
	if rec.Host.NVML.Via != "memfd" || rec.Host.Driver.Source != "nvml-memfd" {
		t.Errorf("nvml via %q, driver source %q; want the embedded probe from a memfd", rec.Host.NVML.Via, rec.Host.Driver.Source)
	}
	t.Logf("probe from memfd, 8 fake H100s: %.1f ms", rec.Host.NVML.DurationMillis)
}

func ptr[T any](v T) *T { return &v }

// probe runs the bullseye-built probe file on lib with the scenario.
func probe(t *testing.T, lib string, s *fakenvml.Scenario, timeout time.Duration) nvml.Result {
	t.Helper()
	env := append(os.Environ(), "PREFLIGHT_NVML_LIBRARY="+lib)
	if s != nil {
		path, err := s.Write(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, fakenvml.EnvScenario+"="+path)
	}
	return nvml.Probe(context.Background(), nvml.Options{Path: probeBin(t), NoMemfd: true, Timeout: timeout, Env: env})
}

func TestProbeBinaryOnFakeScenarios(t *testing.T) {
	lib := fakeLibrary(t)
	tests := []struct {
		s       fakenvml.Scenario
		outcome string
		gpus    int
		brand   string
		cc      string
		cuda    string
	}{
		{fakenvml.H100x8("550.54.15", 12040), facts.ProbeOK, 8, "Nvidia", "9.0", "12.4"},
		{fakenvml.H100x8("545.23.08", 12030), facts.ProbeOK, 8, "Nvidia", "9.0", "12.3"},
		{fakenvml.V100x4(), facts.ProbeOK, 4, "Tesla", "7.0", "11.4"},
		{fakenvml.RTX4090x2(), facts.ProbeOK, 2, "GeForceRTX", "8.9", "12.2"},
		{fakenvml.FieldErrors(), facts.ProbeOK, 3, "Nvidia", "9.0", "12.4"},
		{fakenvml.DriverNotLoaded(), facts.ProbeDriverNotLoaded, 0, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.s.Name, func(t *testing.T) {
			r := probe(t, lib, &tt.s, 10*time.Second)
			if r.NVML.Outcome != tt.outcome {
				t.Fatalf("NVML = %+v, stderr %q", r.NVML, r.Stderr)
			}
			if tt.outcome != facts.ProbeOK {
				return
			}
			d := r.Document
			if len(d.GPUs) != tt.gpus || d.CUDAVersion != tt.cuda {
				t.Fatalf("%d GPUs, CUDA %q; want %d, %q", len(d.GPUs), d.CUDAVersion, tt.gpus, tt.cuda)
			}
			if g := d.GPUs[0]; g.Brand != tt.brand || g.ComputeCapability != tt.cc {
				t.Errorf("GPU 0 brand %q cc %q; want %q %q", g.Brand, g.ComputeCapability, tt.brand, tt.cc)
			}
			if tt.s.Name == "field-errors" {
				// NVML's own strings, per field, from the library's nvmlErrorString.
				if d.GPUs[0].Errors["uuid"] != "Insufficient Permissions" || d.GPUs[1].Errors["persistenceMode"] != "GPU is lost" ||
					d.GPUs[2].Errors["handle"] != "Insufficient Permissions" || d.CUDAVersionCall != "v1" {
					t.Errorf("field errors: %v %v %v, CUDA via %q", d.GPUs[0].Errors, d.GPUs[1].Errors, d.GPUs[2].Errors, d.CUDAVersionCall)
				}
			}
		})
	}
}

func TestProbeBinaryHangIsKilled(t *testing.T) {
	lib := fakeLibrary(t)
	answer := func() time.Duration {
		start := time.Now()
		if r := probe(t, lib, ptr(fakenvml.H100x8("550.54.15", 12040)), 10*time.Second); r.NVML.Outcome != facts.ProbeOK {
			t.Fatalf("NVML = %+v", r.NVML)
		}
		return time.Since(start)
	}
	answered := answer()
	start := time.Now()
	r := probe(t, lib, ptr(fakenvml.Hang()), time.Second)
	if r.NVML.Outcome != facts.ProbeTimeout {
		t.Fatalf("NVML = %+v after %v", r.NVML, time.Since(start))
	}
	harness.WithinDeadline(t, "the probe", time.Since(start), time.Second, answered, answer)
}

// Debian's non-free libnvidia-ml1 on this GPU-less machine: the real NVML
// loads and reports that no kernel driver is there, and the probe leaves
// /dev as it found it. Run as root, that library creates /dev/nvidiactl
// inside nvmlInit when it is missing; the probe drops CAP_MKNOD first, so
// a run never leaves the next one a device node to take for a driver.
func TestProbeBinaryOnRealLibraryReportsDriverNotLoaded(t *testing.T) {
	const node = "/dev/nvidiactl"
	if _, err := os.Lstat(node); err == nil {
		t.Fatalf("%s exists on this driverless host before the probe ran (left by an earlier run?): remove it so the test can tell whether the probe makes one", node)
	}
	lib := realLibrary(t)
	r := probe(t, lib, nil, 10*time.Second)
	if r.NVML.Outcome != facts.ProbeDriverNotLoaded || r.NVML.Error != "Driver Not Loaded" {
		t.Fatalf("real %s: NVML = %+v, stderr %q", lib, r.NVML, r.Stderr)
	}
	if r.Document.Library != lib {
		t.Errorf("document library %q, want %q", r.Document.Library, lib)
	}
	if _, err := os.Lstat(node); err == nil {
		os.Remove(node)
		t.Errorf("the probe left %s behind: NVML created it, so the probe kept CAP_MKNOD", node)
	}
}

func TestProbeStartCost(t *testing.T) {
	// Not a pass/fail bar (the 2 CPUs here are shared): the numbers the
	// report quotes, the probe's own run on the fake library.
	lib := fakeLibrary(t)
	s := fakenvml.H100x8("550.54.15", 12040)
	var total float64
	const n = 20
	for i := 0; i < n; i++ {
		r := probe(t, lib, &s, 10*time.Second)
		if r.NVML.Outcome != facts.ProbeOK {
			t.Fatalf("NVML = %+v", r.NVML)
		}
		total += r.NVML.DurationMillis
	}
	t.Logf("probe file on 8 fake H100s: mean %s over %d runs", fmt.Sprintf("%.2f ms", total/n), n)
}

// TestShimVersionSaysProbeEmbedded: `gpu-preflight version` of the make
// build names its architecture and says the probe is in it.
func TestShimVersionSaysProbeEmbedded(t *testing.T) {
	out, err := exec.Command(shimBin(t), "version").Output()
	if err != nil {
		t.Fatalf("version: %v", err)
	}
	for _, s := range []string{"linux/" + runtime.GOARCH, ", NVML probe embedded)"} {
		if !strings.Contains(string(out), s) {
			t.Errorf("version says %q, not %q", out, s)
		}
	}
}
