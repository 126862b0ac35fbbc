package require

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

func TestExplain(t *testing.T) {
	values := realValues(t)
	tests := []struct {
		name     string
		value    string
		host     Host
		dev      *Device
		want     []string // lines (after trimming) or fragments that must appear
		maxLines int
	}{
		{"UnsatisfiedSaysWhyEachAlternativeFailed", values["12.8.1"], Host{CUDA: "12.3", Driver: "545.23.08"}, h100, []string{
			"NVIDIA_REQUIRE_CUDA: NOT satisfied on GPU 0 (arch 9.0, brand Nvidia), driver 545.23.08, CUDA 12.3",
			"value: cuda>=12.8 brand=unknown,driver>=470,driver<471 ... (61 alternatives)",
			"alternative 1 of 61 failed: cuda>=12.8",
			"cuda>=12.8         host cuda 12.3            false",
			"alternative 29 of 61 failed: brand=nvidia,driver>=550,driver<551",
			"driver>=550        host driver 545.23.08     false",
			"driver<551         host driver 545.23.08     not evaluated",
			"55 alternatives for other brands (unknown, grid, tesla, quadro, quadrortx, nvidiartx, vapps, vpc, vcs, vws, cloudgaming) did not hold: the GPU's brand is Nvidia",
			"no alternative held; nvidia-container-cli would fail with: requirement error: unsatisfied condition: cuda>=12.8, please update",
		}, 30},
		{"SatisfiedNamesTheTermThatHeld", values["12.8.1"], Host{CUDA: "12.4", Driver: "550.54.15"}, h100, []string{
			"NVIDIA_REQUIRE_CUDA: satisfied on GPU 0",
			"alternative 29 of 61 held: brand=nvidia,driver>=550,driver<551",
			"driver<551         host driver 550.54.15     true",
			"25 alternatives for other brands",
			"32 later alternatives not evaluated (the first alternative that holds decides)",
		}, 25},
		{"MissingDataSaysItCountsAsTrue", values["11.8.0"], Host{CUDA: "11.4", Driver: "470.57.02"}, nil, []string{
			"satisfied with no GPU (arch and brand factors count as true), driver 470.57.02, CUDA 11.4",
			"alternative 2 of 11 held: brand=tesla,driver>=470,driver<471",
			"brand=tesla  no GPU                    true (not known, counts as true)",
		}, 12},
		{"EmptyTermQuirkIsExplained", "cuda>=99 , cuda>=1", hostR535, nil, []string{
			"alternative 2 of 3 failed: ,",
			"(no factors: libnvidia-container stops here with the last factor's value, false, from the alternative before)",
			"1 later alternative not evaluated",
		}, 10},
		{"InvalidNamesTheFactorAndReason", "cuda>=99 brand=nvidia,cuda=>12 x", hostR535, h100, []string{
			"NVIDIA_REQUIRE_CUDA: INVALID on GPU 0",
			"alternative 2 of 3 is invalid: brand=nvidia,cuda=>12",
			`cuda=>12      host cuda 12.2            INVALID: operator "=>" is not one of = != < <= > >=`,
			"1 later alternative not evaluated (the invalid factor ended the evaluation)",
			"nvidia-container-cli would fail with: requirement error: invalid expression",
		}, 10},
		{"EmptyValue", "", hostR535, nil, []string{"no alternatives: an empty requirement is always satisfied"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := Evaluate(facts.Requirement{Var: "NVIDIA_REQUIRE_CUDA", Value: tt.value}, tt.host, tt.dev).Explain()
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("Explain lacks %q:\n%s", w, out)
				}
			}
			if n := strings.Count(out, "\n"); n > tt.maxLines {
				t.Errorf("Explain is %d lines, want at most %d:\n%s", n, tt.maxLines, out)
			}
		})
	}
}

// A requirement as long as an environment string can be (128 KiB) of
// alternatives for distinct brands, none the GPU's, is explained and its
// branches listed in time linear in its length: listing the brands by
// scanning the list for each new one took quadratic time.
func TestExplainOfManyDistinctBrandsIsLinear(t *testing.T) {
	brands := func(size int) facts.Requirement {
		var terms []string
		for n, used := 0, 0; ; n++ {
			term := fmt.Sprintf("brand=b%d,driver>=470", n)
			if used+len(term)+1 >= size {
				break
			}
			used += len(term) + 1
			terms = append(terms, term)
		}
		return facts.Requirement{Var: "NVIDIA_REQUIRE_BRANDS", Value: strings.Join(terms, " ")}
	}
	evaluate := func(req facts.Requirement) Result {
		return Evaluate(req, Host{CUDA: "12.4", Driver: "550.54.15"}, &Device{Arch: "9.0", Brand: "Tesla"})
	}
	all, part := evaluate(brands(MaxValueBytes)), evaluate(brands(MaxValueBytes/16))
	n := strings.Count(all.Requirement.Value, "brand=")
	if out := all.Explain(); !strings.Contains(out, fmt.Sprintf("%d alternatives for other brands", n)) {
		t.Errorf("explain does not count the %d brand failures:\n%.500s", n, out)
	}
	harness.Linear(t, fmt.Sprintf("explaining %d alternatives of distinct brands", n), 16,
		func() { part.Explain() }, func() { all.Explain() })

	allRanges := strings.ReplaceAll(all.Requirement.Value, ",driver>=470", ",driver>=470,driver<471")
	partRanges := strings.ReplaceAll(part.Requirement.Value, ",driver>=470", ",driver>=470,driver<471")
	if b := Branches(allRanges); len(b) != 1 {
		t.Errorf("Branches found %d ranges, want one", len(b))
	}
	harness.Linear(t, fmt.Sprintf("Branches over %d distinct brands", n), 16,
		func() { Branches(partRanges) }, func() { Branches(allRanges) })
}

// Whatever the value, Explain lists what a person can read and counts the
// rest: a value as long as an environment string can be, of one term of
// thousands of factors, thousands of failing terms, thousands of brands or
// one giant factor, explains in a few screens.
func TestExplainOfAnyValueIsBounded(t *testing.T) {
	fill := func(unit string) string {
		return strings.TrimSpace(strings.Repeat(unit, (MaxValueBytes-1)/len(unit)))
	}
	var b strings.Builder
	for i := 0; b.Len() < MaxValueBytes-20; i++ {
		fmt.Fprintf(&b, "brand=b%d,cuda>=1 ", i)
	}
	brands := strings.TrimSpace(b.String())
	for _, tt := range []struct {
		name, value, want string
	}{
		{"OneTermOfManyFactors", fill("cuda>=1,"), "more factors, not listed"},
		{"ManyFailingTerms", fill("cuda>=99 "), "more alternatives did not hold, not listed"},
		{"ManyBrands", brands, "b15 and 6593 more) did not hold"},
		{"OneGiantFactor", "brand=" + strings.Repeat("x", MaxValueBytes-10), "…[truncated"},
		{"InvalidGiantOperator", "cuda" + strings.Repeat("<", MaxValueBytes-10) + "1", "INVALID"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := Evaluate(facts.Requirement{Var: "NVIDIA_REQUIRE_CUDA", Value: tt.value}, hostR535, h100)
			out := r.Explain()
			if len(out) > 128<<10 || strings.Count(out, "\n") > 1200 {
				t.Errorf("Explain of a %d-byte value is %d bytes, %d lines", len(tt.value), len(out), strings.Count(out, "\n"))
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("Explain lacks %q:\n%.3000s", tt.want, out)
			}
		})
	}
}
