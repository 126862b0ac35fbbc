package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The done-when, through the binary.
func TestAdviseDriver525(t *testing.T) {
	r := runShim(t, nil, "advise", "--driver", "525.60.13")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	native, rest, _ := strings.Cut(r.stdout, "run only through minor-version compatibility")
	for _, want := range []string{"supports CUDA 12.0", "natively: CUDA 12.0, 11.8",
		"paddle:3.0.0-gpu-cuda11.8-cudnn8.9-trt8.6", "paddlepaddle-gpu==2.6.2.post118"} {
		if !strings.Contains(native, want) {
			t.Errorf("the native part does not show %q:\n%s", want, native)
		}
	}
	if !strings.Contains(r.stdout, "minor-version compatibility only: CUDA 12.9") || !strings.Contains(r.stdout, "cudaErrorCallRequiresNewerDriver") {
		t.Errorf("no minor-version line with its limits:\n%s", r.stdout)
	}
	mvc, _, _ := strings.Cut(rest, "torch builds")
	if !strings.Contains(mvc, "packages/stable/cu126/") {
		t.Errorf("paddle 12.6 builds not under minor-version compatibility:\n%s", mvc)
	}
	_, torch, _ := strings.Cut(r.stdout, "torch builds")
	torchMVC, _, _ := strings.Cut(torch[strings.Index(torch, "run only through minor-version"):], "would fail")
	for _, want := range []string{"whl/cu121", "whl/cu124", "whl/cu126", "whl/cu128"} {
		if !strings.Contains(torchMVC, want) {
			t.Errorf("torch %s not under minor-version compatibility:\n%s", want, torchMVC)
		}
	}
}

func TestAdviseDriver470TeslaJSON(t *testing.T) {
	r := runShim(t, nil, "advise", "--driver", "470.57.02", "--brand", "tesla", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var a struct {
		Node    struct{ CUDA string }
		Forward struct {
			Possible bool
			Why      string
		} `json:"forwardCompatibility"`
		Builds []struct {
			Build struct{ CUDA, Install string }
			Route string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &a); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	if a.Node.CUDA != "11.4" || a.Forward.Possible || !strings.Contains(a.Forward.Why, "R470") || !strings.Contains(a.Forward.Why, "end of life") {
		t.Errorf("node CUDA %s, forward %v: %s", a.Node.CUDA, a.Forward.Possible, a.Forward.Why)
	}
	runs11 := 0
	for _, b := range a.Builds {
		if strings.HasPrefix(b.Build.CUDA, "11.") && b.Route != "fails" {
			runs11++
		}
		if strings.HasPrefix(b.Build.CUDA, "12.") && b.Route != "fails" {
			t.Errorf("%s on R470: %s", b.Build.Install, b.Route)
		}
	}
	if runs11 == 0 {
		t.Error("no CUDA 11.x build runs on R470")
	}
}

func TestAdviseUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"advise", "525.60.13"}, {"advise", "--driver", "r525"}, {"advise", "--driver", "535.129.03", "--gpu", "sm_80"}} {
		if r := runShim(t, nil, args...); r.code != 64 || !strings.Contains(r.stderr, "gpu-preflight:") {
			t.Errorf("%v: exit %d, stderr %s", args, r.code, r.stderr)
		}
	}
	// On a node without a driver, advise says what to give it.
	if r := runShim(t, map[string]string{"PREFLIGHT_ROOT": t.TempDir()}, "advise"); r.code != 64 || !strings.Contains(r.stderr, "--driver") {
		t.Errorf("no driver: exit %d, stderr %s", r.code, r.stderr)
	}
	if r := runShim(t, map[string]string{"PREFLIGHT_ROOT": driverRoot(t, "535.129.03")}, "advise"); r.code != 0 || !strings.Contains(r.stdout, "driver 535.129.03") {
		t.Errorf("this node's driver: exit %d, stdout %s", r.code, r.stdout)
	}
}

// advise --root: the image's minimum drivers, from its own environment.
func TestAdviseRoot(t *testing.T) {
	env := map[string]string{"CUDA_VERSION": "12.8.1", "NVIDIA_REQUIRE_CUDA": "cuda>=12.8 brand=nvidia,driver>=535,driver<536"}
	r := runShim(t, env, "advise", "--root", t.TempDir())
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"CUDA 12.8 runs natively from driver 570.26", "Minimum driver per branch",
		"any 535.x (not on brand", "any 570.x", "R545 (NFB)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("advise --root does not say %q:\n%s", want, r.stdout)
		}
	}
	j := runShim(t, env, "advise", "--root", t.TempDir(), "--json")
	var a struct {
		Branches []struct {
			Branch    int
			MinDriver string
		}
	}
	if err := json.Unmarshal([]byte(j.stdout), &a); err != nil || len(a.Branches) == 0 {
		t.Fatalf("--json: %v\n%s", err, j.stdout)
	}
}
