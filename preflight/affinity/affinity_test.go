package affinity

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/nodeclass"
)

// matches applies one expression as Kubernetes' label selector does:
// In on the exact string; Gt and Lt on the value parsed as a decimal
// integer, never matching a missing or unparsable label.
func matches(e Expr, labels map[string]string) bool {
	v, ok := labels[e.Key]
	if !ok {
		return false
	}
	switch e.Operator {
	case "In":
		return slices.Contains(e.Values, v)
	case "Gt", "Lt":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return false
		}
		m, _ := strconv.ParseInt(e.Values[0], 10, 64)
		if e.Operator == "Gt" {
			return n > m
		}
		return n < m
	}
	panic("operator " + e.Operator)
}

func anyTerm(terms [][]Expr, labels map[string]string) bool {
	for _, t := range terms {
		all := true
		for _, e := range t {
			all = all && matches(e, labels)
		}
		if all {
			return true
		}
	}
	return false
}

// driverLabels writes v as GFD would for the driver string s.
func driverLabels(l Labels, s string) map[string]string {
	parts := strings.Split(s, ".")
	out := map[string]string{l.DriverMajor: parts[0], l.DriverMinor: parts[1], l.DriverRevision: ""}
	if len(parts) > 2 {
		out[l.DriverRevision] = parts[2]
	}
	return out
}

// The range split is exact: a driver is matched iff it lies in the span,
// whatever the leading zeros GFD keeps and with an empty revision for a
// two-part version.
func TestDriverExprsMatchExactlyTheSpan(t *testing.T) {
	for _, sp := range []struct{ lo, hi string }{
		{"535.104.5", "550.54.14"}, {"525.60.13", "526.0.0"}, {"470.0.0", "471.0.0"}, {"570.0.0", ""},
		{"450.80.2", ""}, {"535.104.5", "535.104.6"}, {"0.0.0", "1.0.0"}, {"535.0.0", "535.104.0"},
	} {
		lo, _ := nodeclass.Parse(sp.lo)
		s := span{lo: lo, open: sp.hi == ""}
		if !s.open {
			s.hi, _ = nodeclass.Parse(sp.hi)
		}
		terms := driverExprs(CurrentLabels, s)
		for _, d := range []string{"470.57.02", "470.0", "471.0", "450.80.02", "450.80.1", "525.60.12", "525.60.13", "525.89.02",
			"526.0.0", "535.54.03", "535.104.04", "535.104.05", "535.104.5", "535.104.06", "535.129.03", "550.54.13", "550.54.14",
			"550.54", "549.99.99", "570.26", "570.124.06", "620.70.06", "999.1", "0.1", "1.0"} {
			v, _ := nodeclass.Parse(d)
			want := !nodeclass.Less(v, s.lo) && (s.open || nodeclass.Less(v, s.hi))
			if got := anyTerm(terms, driverLabels(CurrentLabels, d)); got != want {
				t.Errorf("span %v: driver %s matched %v, want %v; terms %v", sp, d, got, want, terms)
			}
		}
	}
}

func FuzzDriverSpan(f *testing.F) {
	f.Add("535.104.05", "550.54.14", "535.129.03")
	f.Add("525.60.13", "", "570.26")
	f.Fuzz(func(t *testing.T, loS, hiS, d string) {
		lo, ok1 := nodeclass.Parse(loS)
		hi, ok2 := nodeclass.Parse(hiS)
		v, ok3 := nodeclass.Parse(d)
		if !ok1 || !ok3 || (hiS != "" && !ok2) || strings.Count(d, ".") < 1 || lo[0] > 1000 || lo[1] > 1000 || hi[0] > 1000 || hi[1] > 1000 {
			return
		}
		// Driver majors carry no leading zero (NVIDIA never writes one), which
		// is why the major alone is matched with In.
		if strings.HasPrefix(d, "0") && !strings.HasPrefix(d, "0.") {
			return
		}
		s := span{lo: lo, hi: hi, open: hiS == ""}
		if !s.open && !nodeclass.Less(lo, hi) {
			return
		}
		want := !nodeclass.Less(v, lo) && (s.open || nodeclass.Less(v, hi))
		if got := anyTerm(driverExprs(CurrentLabels, s), driverLabels(CurrentLabels, d)); got != want {
			t.Errorf("span [%v, %v) open %v: %s matched %v, want %v", lo, hi, s.open, d, got, want)
		}
	})
}

func TestComputeExprs(t *testing.T) {
	exprs, _ := computeExprs([]string{"8.0", "8.6", "8.7", "8.8", "8.9", "9.0", "12.0"}, false)
	want := [][]Expr{
		{{Key: LabelComputeMajor, Operator: "In", Values: []string{"8", "9"}}},
		{{Key: LabelComputeMajor, Operator: "In", Values: []string{"12"}}, {Key: LabelComputeMinor, Operator: "In", Values: []string{"0"}}},
	}
	if fmt.Sprint(exprs) != fmt.Sprint(want) {
		t.Errorf("computeExprs = %v, want %v", exprs, want)
	}
	if all, _ := computeExprs(nil, true); len(all) != 1 || all[0] != nil {
		t.Errorf("every capability: %v", all)
	}
}

func TestUnconstrainedAndImpossibleImages(t *testing.T) {
	a, err := For(Input{Container: facts.Container{Env: map[string]string{}}})
	if err != nil || !a.Unconstrained || !strings.Contains(a.YAML(""), "nodeAffinity: {}") {
		t.Errorf("an image with no requirement: %+v, %v", a, err)
	}
	// Drivers older than the branch table's first branch are not nodes.
	_, err = For(Input{Container: facts.Container{Env: map[string]string{}}, Options: check.Options{ExtraRequire: "driver<400"}})
	if err == nil || !strings.Contains(err.Error(), "no node") {
		t.Errorf("an image no driver runs: %v", err)
	}
	// A version past every branch still makes its own class.
	a, err = For(Input{Container: facts.Container{Env: map[string]string{}}, Options: check.Options{ExtraRequire: "driver>=9999"}})
	if err != nil || len(a.Terms) != 1 || !strings.Contains(a.YAML(""), `operator: Gt, values: ["9998"]`) {
		t.Errorf("driver>=9999: %v\n%s", err, a.YAML(""))
	}
}

func TestBrandIsNamedWhereItMatters(t *testing.T) {
	in := Input{Container: facts.Container{Env: map[string]string{},
		Requirements: []facts.Requirement{{Var: "NVIDIA_REQUIRE_CUDA", Value: "cuda>=12.8 brand=tesla,driver>=535,driver<536"}}}}
	a, err := For(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.LeftOut) != 1 || !strings.Contains(a.LeftOut[0], "driver 535.x fails on brand") || !strings.Contains(a.LeftOut[0], "GeForce") {
		t.Errorf("left out: %v", a.LeftOut)
	}
	y := a.YAML("")
	if !strings.Contains(y, `values: ["535"]`) || !strings.Contains(y, `operator: Gt, values: ["569"]`) {
		t.Errorf("terms:\n%s", y)
	}
}

func BenchmarkForOfficialCUDA128Image(b *testing.B) {
	in := Input{Container: facts.Container{Env: map[string]string{}, CUDA: facts.CUDAToolkit{Version: "12.8"},
		Requirements: []facts.Requirement{{Var: "NVIDIA_REQUIRE_CUDA", Value: "cuda>=12.8 brand=tesla,driver>=470,driver<471 brand=nvidia,driver>=535,driver<536 brand=nvidia,driver>=550,driver<551"}},
		Compat:       []facts.CompatLib{{Path: "/usr/local/cuda/compat/libcuda.so.570.124.06", DriverVersion: "570.124.06"}}}}
	for b.Loop() {
		if _, err := For(in); err != nil {
			b.Fatal(err)
		}
	}
}
