package require

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// malformed are hand-written bad or odd values for the seed corpus.
var malformed = []string{
	"", " ", ",", ", ,", "cuda>=99 ,", "cuda>=99 , cuda>=1", ">=12", "cuda", "cuda>=", "cuda==12", "cuda=>12",
	"cuda<>12", "cuda!12", "cuda!!12", "brand>=x", "brand!tesla", "cudnn>=8", "cuda>=12.x", "cuda>=.5",
	"cuda>=99\tdriver>=1", "driver>=535.99999999999999999999", "driver>=99999999999999999999",
	"brand=" + strings.Repeat("x", 120), "brand!" + strings.Repeat("x", 119), "CUDA>=1 Brand=NVIDIA,ARCH<=9",
	"cuda>=1 bogus", "bogus cuda>=1", "cuda>=99,bogus", "=", "!", "<<", "a=b=c", "cuda>=1..2", "cuda>=12.",
}

// FuzzEvaluate: Evaluate never panics, is consistent with itself (a held
// term means satisfied, an error means the toolkit's "invalid expression"),
// gives Decide's verdict, and agrees with Validate whenever the host knows every property with a
// well-formed value and every factor is evaluated.
func FuzzEvaluate(f *testing.F) {
	for _, v := range realValues(f) {
		for _, h := range []Host{{"11.4", "470.57.02"}, hostR535, {"12.3", "545.23.08"}, {"12.4", "550.54.15"}, {"13.0", "580.65.06"}, {}} {
			f.Add(v, h.CUDA, h.Driver, "9.0", "Nvidia", true)
			f.Add(v, h.CUDA, h.Driver, "8.9", "GeForceRTX", true)
			f.Add(v, h.CUDA, h.Driver, "", "", false)
		}
	}
	for _, v := range malformed {
		f.Add(v, "12.2", "535.129.03", "9.0", "Nvidia", true)
		f.Add(v, "", "", "", "", false)
	}
	// 100 000 terms: over MaxValueBytes, refused before it is parsed.
	f.Add(strings.Repeat("cuda>=99.0 ", 100_000), "12.2", "535.129.03", "9.0", "Nvidia", true)
	f.Fuzz(func(t *testing.T, value, cuda, driver, arch, brand string, withDevice bool) {
		h := Host{CUDA: cuda, Driver: driver}
		var d *Device
		if withDevice {
			d = &Device{Index: 3, Arch: arch, Brand: brand}
		}
		r := Evaluate(facts.Requirement{Var: "NVIDIA_REQUIRE_FUZZ", Value: value}, h, d)
		_ = r.Explain()
		_ = r.ToolkitError()
		held := r.HeldTerm()
		verr := Validate(value)
		dec := Decide(facts.Requirement{Var: "NVIDIA_REQUIRE_FUZZ", Value: value}, h, d)
		if dec.Satisfied != r.Satisfied || fmt.Sprint(dec.Err) != fmt.Sprint(r.Err) || dec.HeldTerm() != held || dec.Terms != nil {
			t.Fatalf("Decide(%q) = %v, %v, %q, %d terms; Evaluate: %v, %v, %q", value, dec.Satisfied, dec.Err, dec.HeldTerm(), len(dec.Terms), r.Satisfied, r.Err, held)
		}

		if len(value) >= MaxValueBytes {
			var le, lv *LengthError
			if !errors.As(r.Err, &le) || !errors.As(verr, &lv) || r.Satisfied || len(r.Terms) != 0 || held != "" {
				t.Fatalf("a value of %d bytes: Err %v, Validate %v, satisfied %v, %d terms", len(value), r.Err, verr, r.Satisfied, len(r.Terms))
			}
			return
		}

		if r.Satisfied && r.Err != nil {
			t.Fatalf("satisfied and invalid: %v", r.Err)
		}
		if len(r.Terms) != len(fields(value, ' ')) {
			t.Fatalf("%d terms, want %d", len(r.Terms), len(fields(value, ' ')))
		}
		if held != "" && !r.Satisfied {
			t.Fatalf("term %q held but the requirement is unsatisfied", held)
		}
		if (r.Err == nil) != (r.ToolkitError() != "requirement error: invalid expression") {
			t.Fatalf("ToolkitError %q disagrees with Err %v", r.ToolkitError(), r.Err)
		}

		// Evaluation is a function of its inputs.
		if again := Evaluate(facts.Requirement{Var: "NVIDIA_REQUIRE_FUZZ", Value: value}, h, d); again.Satisfied != r.Satisfied || (again.Err == nil) != (r.Err == nil) {
			t.Fatalf("Evaluate(%q) is not deterministic", value)
		}

		wellFormed := func(v string) bool { _, err := version.Compare(v, v); return v != "" && err == nil }
		if !withDevice || !wellFormed(cuda) || !wellFormed(driver) || !wellFormed(arch) || brand == "" {
			return
		}
		if verr == nil && r.Err != nil {
			t.Fatalf("Validate accepts %q but Evaluate says %v", value, r.Err)
		}
		if r.Err != nil && verr == nil {
			t.Fatalf("Evaluate error %v not found by Validate", r.Err)
		}
		allEvaluated := true
		strict := false // a problem libnvidia-container always reports when it reaches the factor
		for _, term := range r.Terms {
			for _, fr := range term.Factors {
				if fr.Outcome == NotEvaluated {
					allEvaluated = false
				}
			}
		}
		for _, term := range fields(value, ' ') {
			for _, text := range fields(term, ',') {
				fc := parseFactor(text)
				if fc.problem != "" {
					strict = true
				} else if p, lazy := fc.valueProblem(); p != "" && !lazy {
					strict = true
				}
			}
		}
		if allEvaluated && strict && r.Err == nil {
			t.Fatalf("every factor of %q was evaluated and Validate says %v, but Evaluate found no error", value, verr)
		}
	})
}

// semverCore is the semver.org grammar as golang.org/x/mod/semver applies it
// (MAJOR and MAJOR.MINOR shorthands, pre-release and build only after a
// patch), an independent oracle for the legacy CUDA_VERSION rule.
var semverCore = regexp.MustCompile(`^(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*)` +
	`(?:-(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?` +
	`(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?)?)?$`)

func legacyOracle(v string) (string, bool) {
	m := semverCore.FindStringSubmatch(strings.TrimPrefix(v, "v"))
	if m == nil {
		return "", false
	}
	minor := m[2]
	if minor == "" {
		minor = "0"
	}
	if _, err := strconv.ParseUint(m[1], 10, 32); err != nil {
		return "", false
	}
	if _, err := strconv.ParseUint(minor, 10, 32); err != nil {
		return "", false
	}
	return m[1] + "." + minor, true
}

// FuzzCollect: Collect never panics and keeps the toolkit's collection
// rules for any environment.
func FuzzCollect(f *testing.F) {
	values := realValues(f)
	f.Add("NVIDIA_REQUIRE_CUDA", values["12.8.1"], "NVIDIA_REQUIRE_BRAND", "brand=tesla", "12.8.1", "", true, false)
	f.Add("NVIDIA_REQUIRE_JETPACK", "x", "NVIDIA_REQUIRE_ARCH", "", "11.6.2", "false", true, true)
	f.Add("NVIDIA_REQUIRE_X", "arch>=8.0", "PATH", "/bin", "11", "true", true, true)
	f.Add("NVIDIA_REQUIRE_CUDA", "", "NVIDIA_REQUIRE_", "cuda>=1", "v12.4.0-rc.1+b", "yes", true, true)
	f.Add("A", "b", "C", "d", "11.8.0.1", "0", true, true)
	f.Add("A", "b", "C", "d", "4294967296", "", true, false)
	// Over MaxValueBytes: a requirement of 100 000 terms, and a CUDA_VERSION.
	f.Add("NVIDIA_REQUIRE_CUDA", strings.Repeat("cuda>=99.0 ", 100_000), "PATH", "/bin", "", "", false, false)
	f.Add("A", "b", "C", "d", strings.Repeat("1", MaxValueBytes), "", true, false)
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2, cudaVersion, disable string, setCUDA, setDisable bool) {
		env := map[string]string{n1: v1, n2: v2}
		if setCUDA {
			env["CUDA_VERSION"] = cudaVersion
		}
		if setDisable {
			env["NVIDIA_DISABLE_REQUIRE"] = disable
		}
		reqs, disabled, err := Collect(env)

		d, perr := strconv.ParseBool(env["NVIDIA_DISABLE_REQUIRE"])
		_, present := env["NVIDIA_DISABLE_REQUIRE"]
		wantDisabled := present && perr == nil && d
		if disabled != wantDisabled {
			t.Fatalf("disabled = %v, want %v", disabled, wantDisabled)
		}
		if disabled {
			if reqs != nil || err != nil {
				t.Fatalf("disabled but got %v, %v", reqs, err)
			}
			return
		}
		legacy := env["CUDA_VERSION"] != "" && env["NVIDIA_REQUIRE_CUDA"] == ""
		tooLong := legacy && len(env["CUDA_VERSION"]) >= MaxValueBytes
		for name, value := range env {
			if strings.HasPrefix(name, "NVIDIA_REQUIRE_") && !strings.HasPrefix(name, "NVIDIA_REQUIRE_JETPACK") && len(value) >= MaxValueBytes {
				tooLong = true
			}
		}
		var le *LengthError
		if tooLong || errors.As(err, &le) {
			if reqs != nil || !tooLong || !errors.As(err, &le) || !strings.Contains(err.Error(), "MAX_ARG_STRLEN") {
				t.Fatalf("a value of %d bytes or more: got %v, %v", MaxValueBytes, reqs, err)
			}
			return
		}
		floor, parses := legacyOracle(env["CUDA_VERSION"])
		if err != nil {
			if reqs != nil || !legacy || parses || !strings.Contains(err.Error(), "CUDA_VERSION=") {
				t.Fatalf("error %v with reqs %v (legacy %v, oracle parses %v)", err, reqs, legacy, parses)
			}
			return
		}
		if legacy && !parses {
			t.Fatalf("CUDA_VERSION=%q accepted, the oracle rejects it", env["CUDA_VERSION"])
		}
		if !sort.SliceIsSorted(reqs, func(i, j int) bool { return reqs[i].Var < reqs[j].Var }) {
			t.Fatalf("not sorted: %v", reqs)
		}
		want := 0
		for name, value := range env {
			if strings.HasPrefix(name, "NVIDIA_REQUIRE_") && !strings.HasPrefix(name, "NVIDIA_REQUIRE_JETPACK") && value != "" {
				want++
			}
		}
		if legacy {
			want++
		}
		if len(reqs) != want {
			t.Fatalf("%d requirements, want %d: %v", len(reqs), want, reqs)
		}
		for _, r := range reqs {
			if r.Var == "CUDA_VERSION" {
				if r.Value != "cuda>="+floor || Validate(r.Value) != nil {
					t.Fatalf("legacy requirement %q, want cuda>=%s", r.Value, floor)
				}
				continue
			}
			if env[r.Var] != r.Value || r.Value == "" || !strings.HasPrefix(r.Var, "NVIDIA_REQUIRE_") || strings.HasPrefix(r.Var, "NVIDIA_REQUIRE_JETPACK") {
				t.Fatalf("requirement %+v should not be collected", r)
			}
		}
	})
}

// FuzzBranches: Branches, CUDAFloor and Validate never panic, and what
// Branches and CUDAFloor return comes from well-formed factors.
func FuzzBranches(f *testing.F) {
	for _, v := range realValues(f) {
		f.Add(v)
	}
	for _, v := range malformed {
		f.Add(v)
	}
	f.Add("driver>=470,driver<471 brand=a,driver>=470,driver<471 driver<1,driver>=2")
	f.Fuzz(func(t *testing.T, value string) {
		_ = Validate(value)
		bs := Branches(value)
		for i, b := range bs {
			if !version.Valid(b.Min) || !version.Valid(b.Max) || b.Min == "" || b.Max == "" {
				t.Fatalf("branch %+v has an invalid bound", b)
			}
			if len(b.Brands) == 0 && !b.AnyBrand {
				t.Fatalf("branch %+v accepts no brand", b)
			}
			if i > 0 && version.MustCompare(bs[i-1].Min, b.Min) > 0 {
				t.Fatalf("branches not sorted: %+v", bs)
			}
			_ = b.String()
			_ = b.Accepts(b.Min)
		}
		if fl := CUDAFloor(value); fl != "" {
			if !version.Valid(fl) || Validate("cuda>="+fl) != nil {
				t.Fatalf("CUDAFloor = %q, not a valid version", fl)
			}
		}
	})
}

// fields is the tokens of s as strings.FieldsFunc finds them, an oracle
// apart from the package's own splitter.
func fields(s string, sep byte) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == rune(sep) })
}
