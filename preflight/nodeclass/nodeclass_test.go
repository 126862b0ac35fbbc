package nodeclass

import (
	"slices"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Version{"535.104.05": {535, 104, 5}, "570.26": {570, 26, 0}, "470": {470, 0, 0}} {
		if got, ok := Parse(in); !ok || got != want {
			t.Errorf("Parse(%q) = %v, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "1.2.3.4", "x", "535.-1", "535..1"} {
		if _, ok := Parse(in); ok {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}

// The classes start at every point where a rule can change its answer:
// each branch, the minor-version floors, and the versions a requirement
// names, the right side of > and <= included.
func TestPointsHoldEveryChange(t *testing.T) {
	img := Image{Container: facts.Container{Requirements: []facts.Requirement{
		{Var: "NVIDIA_REQUIRE_CUDA", Value: "cuda>=12.2 brand=tesla,driver>=535.104.05,driver<536 driver>550.54.14 driver=560.35.03"}}},
		Options: check.Options{ExtraRequire: "driver<=575.57.08"}}
	ps := Points(img)
	for _, want := range []Version{{410, 0, 0}, {535, 0, 0}, {620, 0, 0}, {630, 0, 0}, {450, 80, 2}, {525, 60, 13}, {580, 65, 6},
		{535, 104, 5}, {536, 0, 0}, {550, 54, 15}, {560, 35, 3}, {560, 35, 4}, {575, 57, 9}} {
		if !slices.Contains(ps, want) {
			t.Errorf("no class starts at %v", want)
		}
	}
	if !slices.IsSortedFunc(ps, func(a, b Version) int {
		if Less(a, b) {
			return -1
		}
		if Less(b, a) {
			return 1
		}
		return 0
	}) {
		t.Error("points not sorted")
	}
}

// A brand term admits the class on that brand only; an unknown brand
// satisfies the brand factor, as for libnvidia-container.
func TestAdmitsNamesTheBrandsThatFail(t *testing.T) {
	img := Image{Container: facts.Container{Env: map[string]string{}, CUDA: facts.CUDAToolkit{Version: "12.8"},
		Requirements: []facts.Requirement{{Var: "NVIDIA_REQUIRE_CUDA", Value: "cuda>=12.8 brand=tesla,driver>=535,driver<536"}}}}
	ok, failing := Admits(img, Version{535, 129, 3}, "9.0")
	if !ok || slices.Contains(failing, "Tesla") || !slices.Contains(failing, "GeForceRTX") {
		t.Errorf("R535: ok %v, failing %v", ok, failing)
	}
	if ok, _ := Admits(img, Version{545, 23, 8}, "9.0"); ok {
		t.Error("R545 admitted")
	}
	if ok, failing := Admits(img, Version{570, 124, 6}, "9.0"); !ok || len(failing) != 0 {
		t.Errorf("R570: ok %v, failing %v", ok, failing)
	}
}

// Admits asks a fresh Classifier, as a one-off caller would.
func Admits(img Image, d Version, cc string) (ok bool, failing []string) {
	return NewClassifier(img).Admits(d, cc)
}
