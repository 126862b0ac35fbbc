package require

import (
	"bufio"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// realValues reads testdata/nvidia_require_cuda.txt: CUDA version -> the
// image's NVIDIA_REQUIRE_CUDA.
func realValues(tb testing.TB) map[string]string {
	tb.Helper()
	f, err := os.Open("testdata/nvidia_require_cuda.txt")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "\t")
		if !ok {
			tb.Fatalf("testdata line without a tab: %q", line)
		}
		out[k] = v
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	for _, k := range []string{"11.8.0", "12.2.2", "12.8.1", "13.0.2"} {
		if out[k] == "" {
			tb.Fatalf("testdata lacks %s", k)
		}
	}
	return out
}

// The official images' NVIDIA_REQUIRE_CUDA against drivers inside and
// outside their forward-compatibility branches and brands (note §1f, §1g;
// driver -> CUDA version from note §3).
func TestRealImageRequirements(t *testing.T) {
	values := realValues(t)
	gpus := func(n int, arch, brand string) []Device {
		var d []Device
		for i := 0; i < n; i++ {
			d = append(d, Device{Index: i, Arch: arch, Brand: brand})
		}
		return d
	}
	tests := []struct {
		name   string
		image  string
		host   Host
		devs   []Device
		want   bool
		heldBy string // the term that held, when satisfied
	}{
		{"Image118OnR515NoDeviceIsUnsatisfied", "11.8.0", Host{CUDA: "11.7", Driver: "515.65.01"}, nil, false, ""},
		{"Image118OnR470WithUnknownBrandHoldsByForwardCompat", "11.8.0", Host{CUDA: "11.4", Driver: "470.57.02"},
			[]Device{{Arch: "8.0"}}, true, "brand=tesla,driver>=470,driver<471"},
		{"Image118OnR470NoDeviceHoldsByForwardCompat", "11.8.0", Host{CUDA: "11.4", Driver: "470.57.02"},
			nil, true, "brand=tesla,driver>=470,driver<471"},
		{"Image118OnR470GeForceHolds", "11.8.0", Host{CUDA: "11.4", Driver: "470.57.02"},
			gpus(1, "8.6", "GeForce"), true, "brand=geforce,driver>=470,driver<471"},
		{"Image118OnR535HoldsByCUDA", "11.8.0", hostR535, gpus(2, "8.0", "Nvidia"), true, "cuda>=11.8"},
		{"Image128On8xH100R545IsUnsatisfied", "12.8.1", Host{CUDA: "12.3", Driver: "545.23.08"}, gpus(8, "9.0", "Nvidia"), false, ""},
		{"Image128On8xH100R550HoldsByNvidiaBranch", "12.8.1", Host{CUDA: "12.4", Driver: "550.54.15"},
			gpus(8, "9.0", "Nvidia"), true, "brand=nvidia,driver>=550,driver<551"},
		{"Image128OnRTX4090R535IsUnsatisfied", "12.8.1", hostR535, gpus(1, "8.9", "GeForceRTX"), false, ""},
		{"Image128OnRTX4090R570HoldsByCUDA", "12.8.1", Host{CUDA: "12.8", Driver: "570.124.06"}, gpus(1, "8.9", "GeForceRTX"), true, "cuda>=12.8"},
		{"Image128OnH100R560HoldsByNvidiaBranch", "12.8.1", Host{CUDA: "12.6", Driver: "560.35.03"}, gpus(1, "9.0", "Nvidia"), true, "brand=nvidia,driver>=560,driver<561"},
		{"Image122OnRTX4090R535HoldsByCUDA", "12.2.2", hostR535, gpus(1, "8.9", "GeForceRTX"), true, "cuda>=12.2"},
		{"Image122OnGeForceR525HoldsByGeForceBranch", "12.2.2", Host{CUDA: "12.0", Driver: "525.60.13"}, gpus(1, "8.6", "GeForce"), true, "brand=geforce,driver>=525,driver<526"},
		{"Image122OnTeslaR450HoldsByTeslaOnlyBranch", "12.2.2", Host{CUDA: "11.0", Driver: "450.80.02"}, gpus(1, "7.0", "Tesla"), true, "brand=tesla,driver>=450,driver<451"},
		{"Image122OnNvidiaR450IsUnsatisfied", "12.2.2", Host{CUDA: "11.0", Driver: "450.80.02"}, gpus(1, "8.0", "Nvidia"), false, ""},
		{"Image122OnR530IsUnsatisfied", "12.2.2", Host{CUDA: "12.1", Driver: "530.30.02"}, gpus(1, "8.0", "Nvidia"), false, ""},
		{"Image130OnGeForceRTXR575IsUnsatisfied", "13.0.2", Host{CUDA: "12.9", Driver: "575.57.08"}, gpus(1, "8.9", "GeForceRTX"), false, ""},
		{"Image130OnGeForceRTXR580HoldsByCUDA", "13.0.2", Host{CUDA: "13.0", Driver: "580.65.06"}, gpus(1, "8.9", "GeForceRTX"), true, "cuda>=13.0"},
		{"Image130OnH100R575HoldsByNvidiaBranch", "13.0.2", Host{CUDA: "12.9", Driver: "575.57.08"}, gpus(1, "9.0", "Nvidia"), true, "brand=nvidia,driver>=575,driver<576"},
		{"Image130OnH100R560IsUnsatisfied", "13.0.2", Host{CUDA: "12.6", Driver: "560.35.03"}, gpus(1, "9.0", "Nvidia"), false, ""},
		{"Image130OnQuadroRTXR535HoldsByBranch", "13.0.2", hostR535, gpus(1, "7.5", "QuadroRTX"), true, "brand=quadrortx,driver>=535,driver<536"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := facts.Requirement{Var: "NVIDIA_REQUIRE_CUDA", Value: values[tt.image]}
			results := collect(EvaluateAll([]facts.Requirement{req}, tt.host, tt.devs))
			if want := max(len(tt.devs), 1); len(results) != want {
				t.Fatalf("%d results, want %d", len(results), want)
			}
			for i, d := range DecideAll([]facts.Requirement{req}, tt.host, tt.devs) {
				if r := results[i]; d.Satisfied != r.Satisfied || d.HeldTerm() != r.HeldTerm() || (d.Err == nil) != (r.Err == nil) {
					t.Errorf("DecideAll: %v %q %v, EvaluateAll: %v %q %v", d.Satisfied, d.HeldTerm(), d.Err, r.Satisfied, r.HeldTerm(), r.Err)
				}
			}
			for _, r := range results {
				if r.Err != nil {
					t.Fatalf("invalid: %v", r.Err)
				}
				if r.Satisfied != tt.want {
					t.Errorf("satisfied = %v, want %v\n%s", r.Satisfied, tt.want, r.Explain())
				}
				if got := r.HeldTerm(); got != tt.heldBy {
					t.Errorf("held by %q, want %q", got, tt.heldBy)
				}
			}
		})
	}
}

func TestRealImageValuesAreValid(t *testing.T) {
	for k, v := range realValues(t) {
		if err := Validate(v); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
}

func TestRealImageToolkitError(t *testing.T) {
	r := Evaluate(facts.Requirement{Var: "NVIDIA_REQUIRE_CUDA", Value: realValues(t)["12.8.1"]}, Host{CUDA: "12.3", Driver: "545.23.08"}, h100)
	// The message seen in the wild (note §1e: SyneRBI/PETRIC2#27).
	want := "requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a newer version, or use an earlier cuda container"
	if got := r.ToolkitError(); got != want {
		t.Errorf("ToolkitError() = %q, want %q", got, want)
	}
}

var (
	brands10 = []string{"tesla", "unknown", "nvidia", "nvidiartx", "geforce", "geforcertx", "quadro", "quadrortx", "titan", "titanrtx"}
	brands12 = []string{"unknown", "grid", "tesla", "nvidia", "quadro", "quadrortx", "nvidiartx", "vapps", "vpc", "vcs", "vws", "cloudgaming"}
)

func TestBranchesOfRealImages(t *testing.T) {
	values := realValues(t)
	branch := func(n, m string, brands []string) Branch { return Branch{Min: n, Max: m, Brands: brands} }
	tests := []struct {
		image string
		want  []Branch
		names string
		floor string
	}{
		{"11.8.0", []Branch{branch("470", "471", brands10)}, "470.x", "11.8"},
		{"12.2.2", []Branch{branch("450", "451", []string{"tesla"}), branch("470", "471", brands10), branch("525", "526", brands10)}, "450.x 470.x 525.x", "12.2"},
		{"12.8.1", []Branch{branch("470", "471", brands12), branch("535", "536", brands12), branch("550", "551", brands12),
			branch("560", "561", brands12), branch("565", "566", brands12)}, "470.x 535.x 550.x 560.x 565.x", "12.8"},
		{"13.0.2", []Branch{branch("535", "536", brands12), branch("550", "551", brands12), branch("565", "566", brands12),
			branch("570", "571", brands12), branch("575", "576", brands12)}, "535.x 550.x 565.x 570.x 575.x", "13.0"},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			got := Branches(values[tt.image])
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Branches:\n got %+v\nwant %+v", got, tt.want)
			}
			var names []string
			for _, b := range got {
				names = append(names, b.String())
			}
			if strings.Join(names, " ") != tt.names {
				t.Errorf("names %q, want %q", strings.Join(names, " "), tt.names)
			}
			if f := CUDAFloor(values[tt.image]); f != tt.floor {
				t.Errorf("CUDAFloor = %q, want %q", f, tt.floor)
			}
		})
	}
}

func TestBranchesRules(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  []Branch
	}{
		{"NoBrandMeansAnyBrand", "driver>=470,driver<471", []Branch{{Min: "470", Max: "471", AnyBrand: true}}},
		{"FactorOrderDoesNotMatter", "driver<526,BRAND=Tesla,Driver>=525", []Branch{{Min: "525", Max: "526", Brands: []string{"Tesla"}}}},
		{"SortedByLowerBound", "brand=a,driver>=550,driver<551 brand=a,driver>=470,driver<471",
			[]Branch{{Min: "470", Max: "471", Brands: []string{"a"}}, {Min: "550", Max: "551", Brands: []string{"a"}}}},
		{"BrandsDedupedCaseInsensitively", "brand=Tesla,driver>=470,driver<471 brand=tesla,driver>=470,driver<471",
			[]Branch{{Min: "470", Max: "471", Brands: []string{"Tesla"}}}},
		{"WideRange", "driver>=470,driver<500", []Branch{{Min: "470", Max: "500", AnyBrand: true}}},
		{"OnlyLowerBoundIsNoBranch", "cuda>=13.0 driver>=580.95.05", nil},
		{"CUDAInTermIsNoBranch", "cuda>=11.0,driver>=470,driver<471", nil},
		{"TwoBrandsIsNoBranch", "brand=a,brand=b,driver>=470,driver<471", nil},
		{"BrandNotEqualIsNoBranch", "brand!=a,driver>=470,driver<471", nil},
		{"InvalidVersionIsNoBranch", "driver>=47x,driver<471", nil},
		{"Empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Branches(tt.value); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Branches(%q) = %+v, want %+v", tt.value, got, tt.want)
			}
		})
	}
	b := Branch{Min: "470", Max: "471"}
	for drv, want := range map[string]bool{"470.57.02": true, "470": true, "471.00": false, "469.99": false, "x": false} {
		if b.Accepts(drv) != want {
			t.Errorf("470.x Accepts(%q) = %v, want %v", drv, !want, want)
		}
	}
	if s := (Branch{Min: "470", Max: "500"}).String(); s != ">=470,<500" {
		t.Errorf("String() = %q", s)
	}
}

func TestCUDAFloorRules(t *testing.T) {
	for _, tt := range []struct{ name, value, want string }{
		{"FirstTerm", "cuda>=12.2 brand=tesla,driver>=470,driver<471", "12.2"},
		{"CaseInsensitiveName", "CUDA>=11.8", "11.8"},
		{"InsideATerm", "brand=tesla,cuda>=12.0", "12.0"},
		{"FirstOfSeveral", "cuda>=12.0 cuda>=11.0", "12.0"},
		{"SkipsInvalid", "cuda>=x cuda>=11.0", "11.0"},
		{"OtherOperatorIsNotAFloor", "cuda>12.0 cuda=12.0", ""},
		{"None", "driver>=535", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := CUDAFloor(tt.value); got != tt.want {
				t.Errorf("CUDAFloor(%q) = %q, want %q", tt.value, got, tt.want)
			}
		})
	}
}

// BenchmarkEvaluateRealImage measures the 61-term 12.8.1 value on 8 GPUs,
// the common worst case at container start (the check decides).
func BenchmarkEvaluateRealImage(b *testing.B) {
	req := []facts.Requirement{{Var: "NVIDIA_REQUIRE_CUDA", Value: realValues(b)["12.8.1"]}}
	devs := make([]Device, 8)
	for i := range devs {
		devs[i] = Device{Index: i, Arch: "9.0", Brand: "Nvidia"}
	}
	host := Host{CUDA: "12.3", Driver: "545.23.08"}
	for b.Loop() {
		DecideAll(req, host, devs)
	}
}
