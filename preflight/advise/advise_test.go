package advise

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/nodeclass"
	"github.com/gpu-preflight/gpu-preflight/preflight/releases"
)

var today = time.Date(2026, time.December, 1, 12, 0, 0, 0, time.UTC)

func mustAdvise(t *testing.T, n Node) Advice {
	t.Helper()
	a, err := ForDriver(n, today)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func cudaRouteOf(a Advice, cuda string) Route {
	for _, c := range a.CUDA {
		if c.CUDA == cuda {
			return c.Route
		}
	}
	return -1
}

// verdictOf finds the verdict of the build whose install line contains s.
func verdictOf(t *testing.T, a Advice, s string) Verdict {
	t.Helper()
	for _, v := range a.Builds {
		if strings.Contains(v.Build.Install, s) {
			return v
		}
	}
	t.Fatalf("no build installs %q", s)
	return Verdict{}
}

// The first case: the CUDA 12.0 GA driver runs 12.0 and older
// natively, 12.1+ only through minor-version compatibility, 13.x not.
func TestDriver525RunsCUDA120NativelyAnd12xThroughMinorVersionCompat(t *testing.T) {
	a := mustAdvise(t, Node{Driver: "525.60.13"})
	if a.Node.CUDA != "12.0" {
		t.Errorf("driver CUDA %q, want 12.0", a.Node.CUDA)
	}
	for cuda, want := range map[string]Route{"12.0": Native, "11.8": Native, "10.0": Native,
		"12.1": MinorVersion, "12.8": MinorVersion, "12.9": MinorVersion, "13.0": Fails, "13.5": Fails} {
		if got := cudaRouteOf(a, cuda); got != want {
			t.Errorf("CUDA %s: %v, want %v", cuda, got, want)
		}
	}
	for _, tt := range []struct {
		install string
		want    Route
	}{
		{"paddle:3.0.0-gpu-cuda11.8-cudnn8.9-trt8.6", Native},
		{"paddle:2.6.2-gpu-cuda11.8-cudnn8.6-trt8.5", Native},
		{"paddlepaddle-gpu==2.6.2.post118", Native},
		// .post120 is built for CUDA 12.0: this driver's own version.
		{"paddlepaddle-gpu==2.6.2.post120", Native},
		{"packages/stable/cu126/", MinorVersion},
		{"'torch==2.5.*' --index-url https://download.pytorch.org/whl/cu121", MinorVersion},
		{"'torch==2.6.*' --index-url https://download.pytorch.org/whl/cu124", MinorVersion},
		{"'torch==2.7.*' --index-url https://download.pytorch.org/whl/cu128", MinorVersion},
		{"'torch==2.7.*' --index-url https://download.pytorch.org/whl/cu118", Native},
		{"tensorflow[and-cuda]==2.15.*", MinorVersion},
		{"tensorflow[and-cuda]==2.14.*", Native},
		{"'torch==2.11.*' --index-url https://download.pytorch.org/whl/cu130", Fails},
	} {
		v := verdictOf(t, a, tt.install)
		if v.Route != tt.want {
			t.Errorf("%s: %v, want %v (%s)", tt.install, v.Route, tt.want, v.Why())
		}
		if tt.want == MinorVersion && !strings.Contains(v.Why(), "cudaErrorCallRequiresNewerDriver") {
			t.Errorf("%s: minor-version verdict does not give its limits: %s", tt.install, v.Why())
		}
		if tt.want == Fails && !strings.Contains(v.Why(), "major") {
			t.Errorf("%s: fails without saying why: %s", tt.install, v.Why())
		}
	}
}

// The second case: R470 on a data-center GPU runs 11.x, and
// forward compatibility cannot carry 12.x today because R470 is past its
// end of life.
func TestDriver470TeslaForwardCompatEndedWithTheBranch(t *testing.T) {
	a := mustAdvise(t, Node{Driver: "470.57.02", Brand: "Tesla"})
	if a.Node.CUDA != "11.4" {
		t.Errorf("driver CUDA %q, want 11.4", a.Node.CUDA)
	}
	for cuda, want := range map[string]Route{"11.4": Native, "11.8": MinorVersion, "12.0": Fails, "12.8": Fails} {
		if got := cudaRouteOf(a, cuda); got != want {
			t.Errorf("CUDA %s: %v, want %v", cuda, got, want)
		}
	}
	if a.Forward.Possible {
		t.Errorf("forward compatibility possible on R470 today: %s", a.Forward.Why)
	}
	for _, want := range []string{"R470", "end of life July 2024", "R580"} {
		if !strings.Contains(a.Forward.Why, want) {
			t.Errorf("forward-compatibility answer %q does not say %q", a.Forward.Why, want)
		}
	}
	if v := verdictOf(t, a, "paddle:3.0.0-gpu-cuda11.8"); v.Route != MinorVersion {
		t.Errorf("CUDA 11.8 image on R470: %v", v.Route)
	}
	if v := verdictOf(t, a, "paddlepaddle-gpu==2.6.1.post112"); v.Route != Native {
		t.Errorf("CUDA 11.2 wheel on R470: %v", v.Route)
	}
	if v := verdictOf(t, a, "cu121"); v.Route != Fails {
		t.Errorf("CUDA 12.1 wheel on R470: %v", v.Route)
	}
	// Before July 2024 ended, the same node could use forward compatibility.
	past, err := ForDriver(Node{Driver: "470.57.02", Brand: "Tesla"}, time.Date(2024, time.June, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if !past.Forward.Possible || cudaRouteOf(past, "12.2") != Forward {
		t.Errorf("R470 in June 2024: forward %v (%s), CUDA 12.2 %v", past.Forward.Possible, past.Forward.Why, cudaRouteOf(past, "12.2"))
	}
}

// Forward compatibility: a supported branch and a data-center brand, not a
// GeForce, not an unknown brand, not a New Feature Branch.
func TestForwardCompatNeedsSupportedBranchAndDataCenterBrand(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    Node
		want bool
		why  string
	}{
		{"R580OnH100", Node{Driver: "580.65.06", Brand: "Nvidia"}, true, "R580"},
		{"R580OnGeForce", Node{Driver: "580.65.06", Brand: "GeForceRTX"}, false, "data-center"},
		{"R580BrandUnknown", Node{Driver: "580.65.06"}, false, "--brand"},
		{"R610IsANewFeatureBranch", Node{Driver: "610.43.02", Brand: "Nvidia"}, false, "New Feature Branch"},
		{"R535EndedInJune2026", Node{Driver: "535.129.03", Brand: "Nvidia"}, false, "end of life June 2026"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := mustAdvise(t, tt.n)
			if a.Forward.Possible != tt.want || !strings.Contains(a.Forward.Why, tt.why) {
				t.Errorf("possible %v (%s), want %v naming %q", a.Forward.Possible, a.Forward.Why, tt.want, tt.why)
			}
		})
	}
	// In its support window R535 could carry CUDA 13 to an H100.
	jan := time.Date(2026, time.January, 15, 0, 0, 0, 0, time.UTC)
	a, err := ForDriver(Node{Driver: "535.129.03", Brand: "Nvidia"}, jan)
	if err != nil {
		t.Fatal(err)
	}
	if got := cudaRouteOf(a, "13.0"); got != Forward {
		t.Errorf("CUDA 13.0 on R535 in January 2026: %v, want forward", got)
	}
	if v := verdictOf(t, a, "'torch==2.11.*' --index-url https://download.pytorch.org/whl/cu130"); v.Route != Forward || !strings.Contains(v.Why(), "forward-compatibility") {
		t.Errorf("torch 2.11 cu130: %v (%s)", v.Route, v.Why())
	}
	// A minor-version route stays the route: forward compatibility is not
	// needed within a major.
	if got := cudaRouteOf(a, "12.8"); got != MinorVersion {
		t.Errorf("CUDA 12.8 on R535: %v", got)
	}
}

// With the GPU known, gpu-arch decides too: a build without kernels for it
// fails, one with only PTX for it warns but keeps its route.
func TestGPUKnownAddsTheArchCheck(t *testing.T) {
	a := mustAdvise(t, Node{Driver: "580.65.06", GPU: "12.0", Brand: "GeForceRTX"})
	v := verdictOf(t, a, "'torch==2.14.*' --index-url https://download.pytorch.org/whl/cu126")
	if v.Route != Fails || !strings.Contains(v.Why(), "sm_120") {
		t.Errorf("torch 2.14 cu126 (no sm_120, no PTX) on CC 12.0: %v (%s)", v.Route, v.Why())
	}
	v = verdictOf(t, a, "'torch==2.7.*' --index-url https://download.pytorch.org/whl/cu126")
	if v.Route != Native || !strings.Contains(v.Why(), "JIT") {
		t.Errorf("torch 2.7 cu126 (compute_90 PTX) on CC 12.0: %v (%s)", v.Route, v.Why())
	}
	v = verdictOf(t, a, "'torch==2.7.*' --index-url https://download.pytorch.org/whl/cu128")
	if v.Route != Native || v.Why() != "" {
		t.Errorf("torch 2.7 cu128 (sm_120) on CC 12.0: %v (%s)", v.Route, v.Why())
	}
}

func TestBuildsAreEveryRowBestFirstPerFramework(t *testing.T) {
	a := mustAdvise(t, Node{Driver: "535.129.03"})
	// Every row belongs to one of releases.Frameworks (the releases tests
	// prove it), so these are all the table's rows.
	rows := 0
	for _, fw := range releases.Frameworks {
		rows += len(releases.For(fw))
	}
	if len(a.Builds) != rows {
		t.Fatalf("%d verdicts for %d rows", len(a.Builds), rows)
	}
	for i := 1; i < len(a.Builds); i++ {
		p, v := a.Builds[i-1], a.Builds[i]
		if p.Build.Framework == v.Build.Framework && p.Route > v.Route {
			t.Errorf("%s (%v) listed before %s (%v)", p.Build.Name(), p.Route, v.Build.Name(), v.Route)
		}
	}
}

func TestInvalidNodes(t *testing.T) {
	for _, n := range []Node{{Driver: ""}, {Driver: "r535"}, {Driver: "535.1.2.3"}, {Driver: "999.1"},
		{Driver: "535.129.03", GPU: "sm_80"}, {Driver: "535.129.03", CUDA: "x"}} {
		if _, err := ForDriver(n, today); err == nil {
			t.Errorf("%+v: no error", n)
		}
	}
	// A driver beyond the tables works once its CUDA is given.
	if a, err := ForDriver(Node{Driver: "999.1", CUDA: "14.0"}, today); err != nil || cudaRouteOf(a, "13.5") != Native {
		t.Errorf("999.1 with CUDA 14.0: %v", err)
	}
}

func floorOf(a ImageAdvice, branch int) BranchFloor {
	for _, b := range a.Branches {
		if b.Branch == branch {
			return b
		}
	}
	return BranchFloor{}
}

func fitOf(a ImageAdvice, cc string) GPUFit {
	for _, g := range a.GPUs {
		if g.ComputeCapability == cc {
			return g
		}
	}
	return GPUFit{}
}

// advise --root: the lowest driver per branch and the GPUs the kernels
// run on, for the official CUDA 12.8 image with a PyTorch cu128 build.
func TestForImage(t *testing.T) {
	c := facts.Container{Env: map[string]string{}, CUDA: facts.CUDAToolkit{Version: "12.8"},
		Requirements: []facts.Requirement{{Var: "NVIDIA_REQUIRE_CUDA", Value: "cuda>=12.8 brand=nvidia,driver>=470,driver<471 brand=nvidia,driver>=535,driver<536"}},
		Compat:       []facts.CompatLib{{Path: "/usr/local/cuda/compat/libcuda.so.570.124.06", DriverVersion: "570.124.06"}},
		Frameworks: []facts.Framework{{Name: "torch", Version: "2.7.0+cu128", CUDAVersion: "12.8",
			Archs: []string{"sm_80", "sm_90", "compute_90"}}}}
	a := ForImage(nodeclass.Image{Container: c})
	if !slices.Equal(a.CUDA, []string{"12.8"}) {
		t.Errorf("CUDA %v", a.CUDA)
	}
	for _, tt := range []struct {
		branch int
		min    string
		any    bool
		status check.Status
	}{
		{450, "", false, check.Error},
		{470, "470.0.0", true, check.Warn},
		{535, "535.0.0", true, check.Warn},
		{545, "", false, check.Error},
		{570, "570.0.0", true, check.Pass},
		{620, "620.0.0", true, check.Pass},
	} {
		f := floorOf(a, tt.branch)
		if f.MinDriver != tt.min || f.AnyDriver != tt.any || f.Status != tt.status {
			t.Errorf("R%d: min %q any %v %s (%s), want %q %v %s", tt.branch, f.MinDriver, f.AnyDriver, f.Status, f.Why, tt.min, tt.any, tt.status)
		}
	}
	if f := floorOf(a, 470); !slices.Contains(f.FailsOnBrands, "GeForce") || slices.Contains(f.FailsOnBrands, "Nvidia") {
		t.Errorf("R470 runs only on data-center brands: fails on %v", f.FailsOnBrands)
	}
	if !a.GPUsKnown {
		t.Fatal("GPUs unknown")
	}
	for cc, want := range map[string]check.Status{"8.0": check.Pass, "8.6": check.Pass, "9.0": check.Pass, "10.0": check.Warn, "12.0": check.Warn, "7.5": check.Error} {
		if g := fitOf(a, cc); g.Status != want {
			t.Errorf("CC %s: %s (%s), want %s", cc, g.Status, g.Why, want)
		}
	}
}

// A driver floor inside a branch: the minor-version floor of CUDA 11.x.
func TestForImageFloorInsideABranch(t *testing.T) {
	a := ForImage(nodeclass.Image{Container: facts.Container{Env: map[string]string{}, CUDA: facts.CUDAToolkit{Version: "11.8"}}})
	if f := floorOf(a, 450); f.MinDriver != "450.80.2" || f.AnyDriver || f.Status != check.Warn {
		t.Errorf("R450 for CUDA 11.8: %+v", f)
	}
	if f := floorOf(a, 520); f.MinDriver != "520.0.0" || f.Status != check.Pass {
		t.Errorf("R520 for CUDA 11.8: %+v", f)
	}
}
