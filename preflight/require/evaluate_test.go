package require

import (
	"errors"
	"fmt"
	"iter"
	"reflect"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// Hosts and devices used below (docs/sources.md, "Requirement facts of the host", "Driver and toolkit tables").
var (
	hostR535 = Host{CUDA: "12.2", Driver: "535.129.03"}
	h100     = &Device{Index: 0, Arch: "9.0", Brand: "Nvidia"}
	rtx4090  = &Device{Index: 0, Arch: "8.9", Brand: "GeForceRTX"}
)

type verdict int

const (
	sat verdict = iota
	unsat
	invalid
)

func (v verdict) String() string {
	return [...]string{"satisfied", "unsatisfied", "invalid"}[v]
}

func verdictOf(r Result) verdict {
	switch {
	case r.Err != nil:
		return invalid
	case r.Satisfied:
		return sat
	}
	return unsat
}

// Each case is one rule of dsl.c / configure.c, named after it, with the
// outcome libnvidia-container gives.
func TestEvaluateRules(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name  string
		value string
		host  Host
		dev   *Device
		want  verdict
	}{
		// Splitting.
		{"SpaceSeparatesOrTerms", "cuda>=99 driver>=535", hostR535, nil, sat},
		{"OrTermsAllFalseIsUnsatisfied", "cuda>=99 driver>=999", hostR535, nil, unsat},
		{"TabIsNotASeparator", "cuda>=99\tdriver>=535", hostR535, nil, invalid},
		{"NewlineIsNotASeparator", "cuda>=12.0\n", hostR535, nil, invalid},
		{"CommaSeparatesAndFactors", "cuda>=12.0,driver>=999", hostR535, nil, unsat},
		{"AndFactorsAllTrueIsSatisfied", "cuda>=12.0,driver>=535", hostR535, nil, sat},
		{"EmptySpaceTokensAreSkipped", "   cuda>=99    driver>=535  ", hostR535, nil, sat},
		{"EmptyCommaTokensAreSkipped", ",,cuda>=12.0,,,driver>=535,", hostR535, nil, sat},
		{"EmptyCommaTokensDoNotHideAFalseFactor", ",cuda>=99,", hostR535, nil, unsat},
		{"EmptyValueIsSatisfied", "", hostR535, h100, sat},
		{"OnlySpacesIsSatisfied", "    ", hostR535, h100, sat},

		// Factor syntax.
		{"EmptyNameIsInvalid", ">=12.0", hostR535, nil, invalid},
		{"NoOperatorIsInvalid", "cuda", hostR535, nil, invalid},
		{"EmptyValueIsInvalid", "cuda>=", hostR535, nil, invalid},
		{"OperatorOnlyIsInvalid", "=", hostR535, nil, invalid},
		{"OpEqualTrue", "cuda=12.2", hostR535, nil, sat},
		{"OpEqualFalse", "cuda=12.3", hostR535, nil, unsat},
		{"OpNotEqualTrue", "cuda!=12.3", hostR535, nil, sat},
		{"OpNotEqualFalse", "cuda!=12.2", hostR535, nil, unsat},
		{"OpLessTrue", "cuda<12.3", hostR535, nil, sat},
		{"OpLessFalse", "cuda<12.2", hostR535, nil, unsat},
		{"OpLessEqualTrue", "cuda<=12.2", hostR535, nil, sat},
		{"OpLessEqualFalse", "cuda<=12.1", hostR535, nil, unsat},
		{"OpGreaterTrue", "cuda>12.1", hostR535, nil, sat},
		{"OpGreaterFalse", "cuda>12.2", hostR535, nil, unsat},
		{"OpGreaterEqualTrue", "cuda>=12.2", hostR535, nil, sat},
		{"OpGreaterEqualFalse", "cuda>=12.3", hostR535, nil, unsat},
		{"LoneBangIsNotEqualTrue", "cuda!12.3", hostR535, nil, sat},
		{"LoneBangIsNotEqualFalse", "cuda!12.2", hostR535, nil, unsat},
		{"LoneBangOnBrand", "brand!tesla", hostR535, h100, sat},
		{"DoubleEqualIsInvalid", "cuda==12.2", hostR535, nil, invalid},
		{"EqualGreaterIsInvalid", "cuda=>12.2", hostR535, nil, invalid},
		{"EqualLessIsInvalid", "cuda=<12.2", hostR535, nil, invalid},
		{"LessGreaterIsInvalid", "cuda<>12.2", hostR535, nil, invalid},
		{"DoubleBangIsInvalid", "cuda!!12.2", hostR535, nil, invalid},
		{"TripleRunIsInvalid", "cuda>==12.2", hostR535, nil, invalid},
		{"OperatorCharsInValueAreValue", "brand=a=b", hostR535, h100, unsat},

		// Names.
		{"NameIsCaseInsensitiveCUDA", "CUDA>=12.2", hostR535, nil, sat},
		{"NameIsCaseInsensitiveDriver", "DrIvEr>=535", hostR535, nil, sat},
		{"NameIsCaseInsensitiveArch", "ARCH>=9.0", hostR535, h100, sat},
		{"NameIsCaseInsensitiveBrand", "Brand=nvidia", hostR535, h100, sat},
		{"UnknownNameIsInvalid", "cudnn>=8", hostR535, nil, invalid},
		{"UnknownNameIsInvalidEvenWithoutData", "jetpack>=5", Host{}, nil, invalid},
		{"NameMustMatchWholly", "cudaX>=1", hostR535, nil, invalid},

		// Versions (dsl_compare_version).
		{"VersionDriverWithPatchAtLeastBranch", "driver>=535", hostR535, nil, sat},
		{"VersionDriverWithPatchBelowNextBranch", "driver<536", hostR535, nil, sat},
		{"VersionMinorComparesNumerically", "cuda>=12.10", Host{CUDA: "12.9"}, nil, unsat},
		{"VersionTrailingZerosIgnored", "cuda=12.2.0", hostR535, nil, sat},
		{"VersionLeadingZerosNumeric", "driver=535.129.3", hostR535, nil, sat},
		{"VersionExtraZerosNotLess", "driver<535.00", Host{Driver: "535"}, nil, unsat},
		{"InvalidRequirementVersionIsInvalid", "cuda>=12.x", hostR535, nil, invalid},
		{"VPrefixIsInvalid", "driver>=v535", hostR535, nil, invalid},
		{"ArchSmNameIsInvalid", "arch>=sm_90", hostR535, h100, invalid},
		{"LeadingDotIsInvalid", "cuda>=.5", hostR535, nil, invalid},
		{"InvalidHostVersionIsInvalid", "cuda>=12.0", Host{CUDA: "12.x"}, nil, invalid},
		{"InvalidHostArchIsInvalid", "arch>=8.0", hostR535, &Device{Arch: "sm90"}, invalid},
		{"HugeFirstComponentIsInvalid", "driver>=99999999999999999999", hostR535, nil, invalid},
		{"HugeLaterComponentUnseenWhenDecidedEarlier", "driver>=535.99999999999999999999", Host{Driver: "550.54.15"}, nil, sat},
		{"HugeLaterComponentInvalidWhenReached", "driver>=535.99999999999999999999", hostR535, nil, invalid},
		{"ArchCompares", "arch>=8.0", hostR535, h100, sat},
		{"ArchComparesFalse", "arch<9.0", hostR535, h100, unsat},

		// Brand (dsl_compare_string).
		{"BrandIsCaseInsensitive", "brand=geforcertx", hostR535, rtx4090, sat},
		{"BrandMismatchIsFalse", "brand=tesla", hostR535, h100, unsat},
		{"BrandNotEqual", "brand!=tesla", hostR535, h100, sat},
		{"BrandOrderingIsInvalid", "brand>=nvidia", hostR535, h100, invalid},
		{"BrandLessIsInvalid", "brand<x", hostR535, h100, invalid},
		{"BrandFoldIsASCIIOnly", "brand=\u212a", hostR535, &Device{Brand: "K"}, unsat},

		// Missing data is true, before the value is looked at.
		{"MissingCUDAIsTrue", "cuda>=99", Host{Driver: "535.129.03"}, nil, sat},
		{"MissingDriverIsTrue", "driver>=999", Host{CUDA: "12.2"}, nil, sat},
		{"NoDeviceArchIsTrue", "arch>=99", hostR535, nil, sat},
		{"UnknownArchIsTrue", "arch>=99", hostR535, &Device{Brand: "Nvidia"}, sat},
		{"NoDeviceBrandIsTrue", "brand=tesla", hostR535, nil, sat},
		{"UnknownBrandIsTrue", "brand=tesla", hostR535, &Device{Arch: "9.0"}, sat},
		{"MissingCUDASkipsValueCheck", "cuda>=abc", Host{}, nil, sat},
		{"NoDeviceSkipsBrandOperatorCheck", "brand>=x", hostR535, nil, sat},
		{"MissingDataStillChecksSyntax", "cuda=>12", Host{}, nil, invalid},

		// Short-circuit: invalid factors matter only when evaluated.
		{"InvalidAfterSatisfiedTermIsNotSeen", "cuda>=12.0 bogus", hostR535, nil, sat},
		{"InvalidAfterFalseFactorIsNotSeen", "cuda>=99,bogus", hostR535, nil, unsat},
		{"InvalidInLaterTermIsSeenWhenEarlierFail", "cuda>=99 bogus", hostR535, nil, invalid},
		{"InvalidBeforeSatisfyingTermIsSeen", "bogus cuda>=12.0", hostR535, nil, invalid},
		{"InvalidAfterTrueFactorIsSeen", "cuda>=12.0,bogus", hostR535, nil, invalid},

		// dsl_evaluate's ret: a term without factors ends the evaluation
		// with the last evaluated factor's value.
		{"EmptyTermAloneIsSatisfied", ",", hostR535, nil, sat},
		{"EmptyTermAfterFalseTermIsUnsatisfied", "cuda>=99 ,", hostR535, nil, unsat},
		{"EmptyTermEndsEvaluation", "cuda>=99 , cuda>=12.0", hostR535, nil, unsat},
		{"EmptyTermAfterTrueTermNeverReached", "cuda>=12.0 ,", hostR535, nil, sat},
		{"EmptyTermFirstIsSatisfied", ",, cuda>=99", hostR535, nil, sat},

		// EXPR_MAX: a false factor that does not fit "%s %s %s" in 128
		// bytes is invalid; 5+1+119+2 = 127 fits, 128 does not.
		{"FalseFactorThatFitsIsFalse", "brand=" + long(119), hostR535, h100, unsat},
		{"FalseFactorTooLongIsInvalid", "brand=" + long(120), hostR535, h100, invalid},
		{"TrueFactorTooLongIsTrue", "brand!=" + long(200), hostR535, h100, sat},
		{"LoneBangFormatsAsNotEqual", "brand!" + long(119), hostR535, &Device{Brand: long(119)}, invalid},
		{"TooLongMissingIsTrue", "brand=" + long(200), hostR535, nil, sat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Evaluate(facts.Requirement{Var: "NVIDIA_REQUIRE_TEST", Value: tt.value}, tt.host, tt.dev)
			if got := verdictOf(r); got != tt.want {
				t.Errorf("Evaluate(%q) = %v (err %v), want %v\n%s", tt.value, got, r.Err, tt.want, r.Explain())
			}
			if r.Err != nil {
				var ee *ExprError
				if !errors.As(r.Err, &ee) || ee.Var != "NVIDIA_REQUIRE_TEST" || !strings.Contains(r.Err.Error(), fmt.Sprintf("%q", ee.Factor)) {
					t.Errorf("error %v does not name the variable and the factor", r.Err)
				}
			}
		})
	}
}

func TestEvaluateRecordsEveryFactor(t *testing.T) {
	host := Host{CUDA: "12.3", Driver: "545.23.08"}
	t.Run("HeldTermAndNotEvaluatedAfter", func(t *testing.T) {
		r := Evaluate(facts.Requirement{Var: "NVIDIA_REQUIRE_CUDA", Value: "cuda>=99 Brand=nvidia,Driver!535,arch>=8.0 brand=tesla,bogus"}, host, h100)
		want := []TermResult{
			{Text: "cuda>=99", Evaluated: true, Factors: []FactorResult{
				{Text: "cuda>=99", Name: "cuda", Op: ">=", Value: "99", HostValue: "12.3", Outcome: False},
			}},
			{Text: "Brand=nvidia,Driver!535,arch>=8.0", Evaluated: true, Held: true, Factors: []FactorResult{
				{Text: "Brand=nvidia", Name: "brand", Op: "=", Value: "nvidia", HostValue: "Nvidia", Outcome: True},
				{Text: "Driver!535", Name: "driver", Op: "!=", Value: "535", HostValue: "545.23.08", Outcome: True},
				{Text: "arch>=8.0", Name: "arch", Op: ">=", Value: "8.0", HostValue: "9.0", Outcome: True},
			}},
			{Text: "brand=tesla,bogus", Factors: []FactorResult{
				{Text: "brand=tesla", Name: "brand", Op: "=", Value: "tesla", HostValue: "Nvidia", Outcome: NotEvaluated},
				{Text: "bogus", Name: "bogus", Outcome: NotEvaluated},
			}},
		}
		if !r.Satisfied || r.Err != nil {
			t.Fatalf("want satisfied, got err %v\n%s", r.Err, r.Explain())
		}
		if !reflect.DeepEqual(r.Terms, want) {
			t.Errorf("terms:\n got %+v\nwant %+v", r.Terms, want)
		}
		if got := r.HeldTerm(); got != "Brand=nvidia,Driver!535,arch>=8.0" {
			t.Errorf("HeldTerm() = %q", got)
		}
		if r.Device == h100 || *r.Device != *h100 {
			t.Errorf("Device = %p %+v, want a copy of %+v", r.Device, r.Device, *h100)
		}
	})
	t.Run("InvalidFactorStopsEvaluation", func(t *testing.T) {
		r := Evaluate(facts.Requirement{Var: "NVIDIA_REQUIRE_CUDA", Value: "cuda>=99 brand=nvidia,cuda=>12,driver>=1 brand=tesla"}, host, h100)
		if r.Satisfied || r.Err == nil {
			t.Fatalf("want invalid, got satisfied=%v err=%v", r.Satisfied, r.Err)
		}
		want := `NVIDIA_REQUIRE_CUDA: invalid expression "cuda=>12": operator "=>" is not one of = != < <= > >=`
		if r.Err.Error() != want {
			t.Errorf("Err = %q, want %q", r.Err, want)
		}
		got := []Outcome{}
		for _, term := range r.Terms {
			for _, f := range term.Factors {
				got = append(got, f.Outcome)
			}
		}
		if w := []Outcome{False, True, Invalid, NotEvaluated, NotEvaluated}; !reflect.DeepEqual(got, w) {
			t.Errorf("outcomes = %v, want %v", got, w)
		}
		if r.HeldTerm() != "" {
			t.Errorf("HeldTerm() = %q, want none", r.HeldTerm())
		}
	})
	t.Run("MissingOutcome", func(t *testing.T) {
		r := Evaluate(facts.Requirement{Value: "cuda>=99,arch>=9.0,brand=tesla"}, Host{}, nil)
		for _, f := range r.Terms[0].Factors {
			if f.Outcome != Missing || f.HostValue != "" {
				t.Errorf("%s: outcome %v host %q, want missing", f.Text, f.Outcome, f.HostValue)
			}
		}
	})
}

// The check's evaluation holds no trace: a requirement of 1 000 terms that
// all fail costs no more allocations than one of a single term.
func TestDecideDoesNotGrowWithTheRequirement(t *testing.T) {
	long := strings.TrimSpace(strings.Repeat("cuda>=99 brand=tesla,driver>=999,driver<1000 ", 500))
	allocs := func(value string) float64 {
		return testing.AllocsPerRun(20, func() {
			if r := Decide(facts.Requirement{Var: "NVIDIA_REQUIRE_CUDA", Value: value}, hostR535, h100); r.Satisfied || r.Err != nil {
				t.Fatalf("Decide(%.40q...) = %v, %v: want unsatisfied", value, r.Satisfied, r.Err)
			}
		})
	}
	if one, many := allocs("cuda>=99"), allocs(long); many > one {
		t.Errorf("Decide: %v allocations for 1 000 terms, %v for one", many, one)
	}
	if r := Evaluate(facts.Requirement{Value: long}, hostR535, h100); len(r.Terms) != 1000 {
		t.Errorf("Evaluate keeps %d terms of 1 000", len(r.Terms))
	}
}

// Evaluated once per visible GPU, or once with no device (configure.c
// configure_command).
func TestEvaluateAllPerDevice(t *testing.T) {
	reqs := []facts.Requirement{
		{Var: "NVIDIA_REQUIRE_ARCH", Value: "arch>=8.0"},
		{Var: "NVIDIA_REQUIRE_BRAND", Value: "brand=nvidia"},
	}
	devs := []Device{{Index: 0, Arch: "9.0", Brand: "Nvidia"}, {Index: 1, Arch: "7.0", Brand: "Tesla"}}
	for name, all := range map[string]func([]facts.Requirement, Host, []Device) []Result{
		"EvaluateAll": func(reqs []facts.Requirement, h Host, devs []Device) []Result {
			return collect(EvaluateAll(reqs, h, devs))
		},
		"DecideAll": DecideAll,
	} {
		res := all(reqs, hostR535, devs)
		if len(res) != 4 {
			t.Fatalf("%s: got %d results, want 4 (2 devices x 2 requirements)", name, len(res))
		}
		wantSat := []bool{true, true, false, false}
		for i, r := range res {
			if r.Device == nil || r.Device.Index != i/2 || r.Requirement != reqs[i%2] {
				t.Errorf("%s: result %d is for device %+v requirement %+v", name, i, r.Device, r.Requirement)
			}
			if r.Satisfied != wantSat[i] {
				t.Errorf("%s: result %d (%s on GPU %d) satisfied = %v, want %v", name, i, r.Requirement.Value, r.Device.Index, r.Satisfied, wantSat[i])
			}
		}

		none := all(reqs, hostR535, nil)
		if len(none) != 2 {
			t.Fatalf("%s: with no device got %d results, want 2", name, len(none))
		}
		for _, r := range none {
			if r.Device != nil || !r.Satisfied {
				t.Errorf("%s: with no device: %+v, want satisfied with nil device", name, r)
			}
		}
		if all(nil, hostR535, devs) != nil {
			t.Errorf("%s: no requirements should give no results", name)
		}
	}
}

// collect is every result EvaluateAll yields, in order, numbered from 0.
func collect(seq iter.Seq2[int, Result]) []Result {
	var out []Result
	for i, r := range seq {
		if i != len(out) {
			panic(fmt.Sprintf("EvaluateAll numbered result %d as %d", len(out), i))
		}
		out = append(out, r)
	}
	return out
}

// The message nvidia-container-cli prints (dsl.c dsl_evaluate; note §1e).
func TestToolkitError(t *testing.T) {
	tests := []struct {
		name, value string
		want        string
	}{
		{"CUDAFloorFirstGetsDriverAdvice", "cuda>=99 brand=tesla,driver>=470,driver<471",
			"requirement error: unsatisfied condition: cuda>=99, please update your driver to a newer version, or use an earlier cuda container"},
		{"NamesFirstTokenNotFailingFactor", "brand=tesla driver>=999",
			"requirement error: unsatisfied condition: brand=tesla"},
		{"FirstTokenIsWholeTermWithCommas", "driver>=999,cuda>=1",
			"requirement error: unsatisfied condition: driver>=999,cuda>=1"},
		{"LeadingSpaceGivesEmptyToken", " cuda>=99",
			"requirement error: unsatisfied condition: "},
		{"CUDAPrefixIsCaseSensitive", "CUDA>=99",
			"requirement error: unsatisfied condition: CUDA>=99"},
		{"Invalid", "cuda>=x", "requirement error: invalid expression"},
		{"SatisfiedSaysNothing", "cuda>=12.0", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Evaluate(facts.Requirement{Value: tt.value}, hostR535, rtx4090)
			if got := r.ToolkitError(); got != tt.want {
				t.Errorf("ToolkitError() = %q, want %q", got, tt.want)
			}
		})
	}
}

// Validate checks every factor, reached or not.
func TestValidate(t *testing.T) {
	valid := []string{"", "  ", ",", "cuda>=12.2", "cuda!12.2", "brand=tesla,driver>=470,driver<471 cuda>=11.8",
		"CUDA>=1 DRIVER<=2 ARCH>3 BRAND!=x", "driver>=535.99999999999999999", "arch=9.0"}
	for _, v := range valid {
		if err := Validate(v); err != nil {
			t.Errorf("Validate(%q) = %v, want nil", v, err)
		}
	}
	invalid := []struct{ name, value, reason string }{
		{"EmptyName", "cuda>=1 >=2", "no property name"},
		{"NoOperator", "cuda", "no operator"},
		{"BadOperator", "cuda==1", `operator "==" is not one of`},
		{"EmptyValue", "driver<", "no value"},
		{"UnknownName", "cudnn>=8", `unknown property "cudnn"`},
		{"BadVersion", "cuda>=12.x", "only digits and dots"},
		{"BadVersionAfterSatisfiableTerm", "cuda>=1 arch>=sm_90", "only digits and dots"},
		{"BrandOrdering", "brand<=x", "brand takes only = or !="},
		{"HugeComponent", "driver>=535.99999999999999999999", "too large"},
		{"TooLongToReport", "brand=" + strings.Repeat("x", 120), "limit is 127"},
		{"TabInsideFactor", "cuda>=12.2\tdriver>=1", "only digits and dots"},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.value)
			var ee *ExprError
			if err == nil || !errors.As(err, &ee) || !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("Validate(%q) = %v, want an *ExprError saying %q", tt.value, err, tt.reason)
			}
		})
	}
	t.Run("ReportsEveryBadFactor", func(t *testing.T) {
		err := Validate("foo=1 cuda>=1,bar=2")
		if err == nil || !strings.Contains(err.Error(), `"foo=1"`) || !strings.Contains(err.Error(), `"bar=2"`) {
			t.Errorf("Validate = %v, want both bad factors named", err)
		}
	})
}
