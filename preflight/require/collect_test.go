package require

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// Rules of the toolkit's GetRequirements, IsLegacy and HasDisableRequire
// (internal/config/image/cuda_image.go and its tests; note §1a).
func TestCollect(t *testing.T) {
	type req = facts.Requirement
	rq := func(name, value string) req { return req{Var: name, Value: value} }
	tests := []struct {
		name         string
		env          map[string]string
		want         []req
		wantDisabled bool
	}{
		{"NoVariablesNoRequirements", map[string]string{"PATH": "/bin"}, nil, false},
		{"EveryRequirePrefixIsCollected", map[string]string{
			"NVIDIA_REQUIRE_CUDA": "cuda>=12.2", "NVIDIA_REQUIRE_BRAND": "brand=tesla", "NVIDIA_REQUIRE_": "arch>=8.0"},
			[]req{rq("NVIDIA_REQUIRE_", "arch>=8.0"), rq("NVIDIA_REQUIRE_BRAND", "brand=tesla"), rq("NVIDIA_REQUIRE_CUDA", "cuda>=12.2")}, false},
		{"JetpackPrefixIsExcluded", map[string]string{
			"NVIDIA_REQUIRE_JETPACK": "csv-mounts=all", "NVIDIA_REQUIRE_JETPACK_HOST_MOUNTS": "x", "NVIDIA_REQUIRE_ARCH": "arch>=8.7"},
			[]req{rq("NVIDIA_REQUIRE_ARCH", "arch>=8.7")}, false},
		{"PrefixIsCaseSensitive", map[string]string{"nvidia_require_cuda": "cuda>=99", "NVIDIA_Require_CUDA": "cuda>=99"}, nil, false},
		{"EmptyValuesAreSkipped", map[string]string{"NVIDIA_REQUIRE_CUDA": "cuda>=12.2", "NVIDIA_REQUIRE_ARCH": ""},
			[]req{rq("NVIDIA_REQUIRE_CUDA", "cuda>=12.2")}, false},
		{"ValueIsVerbatim", map[string]string{"NVIDIA_REQUIRE_CUDA": "  cuda>=12.2  "},
			[]req{rq("NVIDIA_REQUIRE_CUDA", "  cuda>=12.2  ")}, false},
		{"LegacyImageGetsCUDAFloor", map[string]string{"CUDA_VERSION": "11.6.2"},
			[]req{rq("CUDA_VERSION", "cuda>=11.6")}, false},
		{"LegacyMajorOnlyGetsMinorZero", map[string]string{"CUDA_VERSION": "11"},
			[]req{rq("CUDA_VERSION", "cuda>=11.0")}, false},
		{"LegacyMajorMinor", map[string]string{"CUDA_VERSION": "11.6"},
			[]req{rq("CUDA_VERSION", "cuda>=11.6")}, false},
		{"LegacyVPrefixAccepted", map[string]string{"CUDA_VERSION": "v12.4.1"},
			[]req{rq("CUDA_VERSION", "cuda>=12.4")}, false},
		{"LegacyPrereleaseAccepted", map[string]string{"CUDA_VERSION": "12.4.0-rc.1+build.5"},
			[]req{rq("CUDA_VERSION", "cuda>=12.4")}, false},
		{"LegacyAndOtherRequirementsAreBoth", map[string]string{"CUDA_VERSION": "11.6", "NVIDIA_REQUIRE_BRAND": "brand=tesla"},
			[]req{rq("CUDA_VERSION", "cuda>=11.6"), rq("NVIDIA_REQUIRE_BRAND", "brand=tesla")}, false},
		{"NotLegacyWhenRequireCUDASet", map[string]string{"CUDA_VERSION": "12.2.2", "NVIDIA_REQUIRE_CUDA": "cuda>=12.2"},
			[]req{rq("NVIDIA_REQUIRE_CUDA", "cuda>=12.2")}, false},
		{"LegacyWhenRequireCUDAEmpty", map[string]string{"CUDA_VERSION": "12.2.2", "NVIDIA_REQUIRE_CUDA": ""},
			[]req{rq("CUDA_VERSION", "cuda>=12.2")}, false},
		{"NotLegacyWhenCUDAVersionEmpty", map[string]string{"CUDA_VERSION": ""}, nil, false},
		{"DisableTrue", map[string]string{"NVIDIA_DISABLE_REQUIRE": "true", "NVIDIA_REQUIRE_CUDA": "cuda>=99"}, nil, true},
		{"DisableOne", map[string]string{"NVIDIA_DISABLE_REQUIRE": "1", "NVIDIA_REQUIRE_CUDA": "cuda>=99"}, nil, true},
		{"DisableT", map[string]string{"NVIDIA_DISABLE_REQUIRE": "T", "NVIDIA_REQUIRE_CUDA": "cuda>=99"}, nil, true},
		{"DisableTRUE", map[string]string{"NVIDIA_DISABLE_REQUIRE": "TRUE", "NVIDIA_REQUIRE_CUDA": "cuda>=99"}, nil, true},
		{"DisableAlsoDropsLegacyRule", map[string]string{"NVIDIA_DISABLE_REQUIRE": "True", "CUDA_VERSION": "12.2.2"}, nil, true},
		{"DisableSkipsInvalidCUDAVersion", map[string]string{"NVIDIA_DISABLE_REQUIRE": "t", "CUDA_VERSION": "garbage"}, nil, true},
		{"DisableFalse", map[string]string{"NVIDIA_DISABLE_REQUIRE": "false", "NVIDIA_REQUIRE_CUDA": "cuda>=99"},
			[]req{rq("NVIDIA_REQUIRE_CUDA", "cuda>=99")}, false},
		{"DisableInvalidIsNotDisabled", map[string]string{"NVIDIA_DISABLE_REQUIRE": "yes", "NVIDIA_REQUIRE_CUDA": "cuda>=99"},
			[]req{rq("NVIDIA_REQUIRE_CUDA", "cuda>=99")}, false},
		{"DisableEmptyIsNotDisabled", map[string]string{"NVIDIA_DISABLE_REQUIRE": "", "NVIDIA_REQUIRE_CUDA": "cuda>=99"},
			[]req{rq("NVIDIA_REQUIRE_CUDA", "cuda>=99")}, false},
		{"DisablePluralIsNotRead", map[string]string{"NVIDIA_DISABLE_REQUIRES": "true", "NVIDIA_REQUIRE_CUDA": "cuda>=99"},
			[]req{rq("NVIDIA_REQUIRE_CUDA", "cuda>=99")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, disabled, err := Collect(tt.env)
			if err != nil {
				t.Fatalf("Collect: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) || disabled != tt.wantDisabled {
				t.Errorf("Collect = %v, disabled %v; want %v, disabled %v", got, disabled, tt.want, tt.wantDisabled)
			}
		})
	}
}

// A CUDA_VERSION the toolkit cannot parse fails the toolkit's hook; Collect
// says so, naming the variable.
func TestCollectInvalidLegacyCUDAVersion(t *testing.T) {
	for _, v := range []string{"garbage", "11.8.0.1", "11.08", "012", "12.2-rc1", "12.", ".12", " 12.2", "12.2.2-", "12.2.2+", "12.2.2-01",
		"4294967296", "11.4294967296", "vv12", "12.2.x"} {
		t.Run(v, func(t *testing.T) {
			reqs, disabled, err := Collect(map[string]string{"CUDA_VERSION": v, "NVIDIA_REQUIRE_ARCH": "arch>=8.0"})
			if err == nil || reqs != nil || disabled {
				t.Fatalf("Collect(CUDA_VERSION=%q) = %v, %v, %v; want an error", v, reqs, disabled, err)
			}
			if !strings.Contains(err.Error(), "CUDA_VERSION=") || !strings.Contains(err.Error(), "NVIDIA_REQUIRE_CUDA") {
				t.Errorf("error %q should name CUDA_VERSION and the way out", err)
			}
		})
	}
}

// A requirement too long for any environment string (100 000 terms here) is
// refused whole by Collect, Evaluate, Validate and Explain, with a message
// that names the variable, its size and the limit, and never the value.
func TestRequirementOverMaxValueBytesIsRefused(t *testing.T) {
	long := strings.Repeat("cuda>=99.0 ", 100_000)
	check := func(what string, err error) {
		t.Helper()
		var le *LengthError
		if !errors.As(err, &le) {
			t.Errorf("%s: err = %v, want a *LengthError", what, err)
			return
		}
		msg := err.Error()
		for _, want := range []string{"1100000 bytes", "131072-byte limit", "MAX_ARG_STRLEN"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q does not say %q", what, msg, want)
			}
		}
		if len(msg) > 400 {
			t.Errorf("%s: message of %d bytes copies the value", what, len(msg))
		}
	}
	reqs, _, err := Collect(map[string]string{"NVIDIA_REQUIRE_CUDA": long, "NVIDIA_REQUIRE_ARCH": "arch>=7.0"})
	check("Collect", err)
	if reqs != nil || !strings.Contains(err.Error(), "NVIDIA_REQUIRE_CUDA is") {
		t.Errorf("Collect = %v, %v: want no requirements and the variable named", reqs, err)
	}
	_, _, err = Collect(map[string]string{"CUDA_VERSION": strings.Repeat("1", MaxValueBytes)})
	var le *LengthError
	if !errors.As(err, &le) || le.Var != "CUDA_VERSION" {
		t.Errorf("Collect(long CUDA_VERSION): err = %v", err)
	}

	start := time.Now()
	r := Evaluate(facts.Requirement{Var: "NVIDIA_REQUIRE_CUDA", Value: long}, hostR535, &Device{Arch: "9.0", Brand: "Nvidia"})
	check("Evaluate", r.Err)
	if r.Satisfied || len(r.Terms) != 0 {
		t.Errorf("Evaluate: satisfied %v with %d terms", r.Satisfied, len(r.Terms))
	}
	check("Validate", Validate(long))
	if e := r.Explain(); len(e) > 600 || !strings.Contains(e, "INVALID") || !strings.Contains(e, "MAX_ARG_STRLEN") {
		t.Errorf("Explain = %.600q", e)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusing took %v", d)
	}

	// One byte under the limit is parsed as usual.
	under := strings.Repeat("x", MaxValueBytes-len("cuda>=1")-2) + " cuda>=1"
	if r := Evaluate(facts.Requirement{Var: "NVIDIA_REQUIRE_CUDA", Value: under}, hostR535, nil); r.Err == nil || errors.As(r.Err, &le) {
		t.Errorf("just under the limit: err = %v, want the invalid factor x... reported", r.Err)
	}
}

// An invalid factor of 100 KiB is reported by its start: the message goes
// into a finding, a log line and the record.
func TestExprErrorQuotesTheStartOfALongFactor(t *testing.T) {
	for _, value := range []string{
		strings.Repeat("x", 100_000),                     // no operator
		"cuda>=" + strings.Repeat("1.", 50_000) + "x",    // bad version
		"brand=" + strings.Repeat("tesla", 20_000),       // too long to format when false
		strings.Repeat("y", 100_000) + ">=1 cuda>=1.0.0", // unknown property
	} {
		r := Evaluate(facts.Requirement{Var: "NVIDIA_REQUIRE_CUDA", Value: value}, hostR535, &Device{Arch: "9.0", Brand: "Nvidia"})
		if r.Err == nil {
			t.Errorf("%.20q...: no error", value)
			continue
		}
		if msg := r.Err.Error(); len(msg) > 1000 || !strings.Contains(msg, "…[truncated ") {
			t.Errorf("%.20q...: message of %d bytes: %.300q", value, len(msg), msg)
		}
	}
}

// More requirements than nvidia-container-cli takes fail the container
// under the toolkit; Collect says so, naming the count and the limit.
// The toolkit's hook passes an empty NVIDIA_REQUIRE_* as a --require flag
// too, so empty values count toward the 32, though they always hold.
func TestCollectCountsEmptyRequirementsTowardTheLimit(t *testing.T) {
	env := map[string]string{"NVIDIA_REQUIRE_CUDA": "cuda>=12.0"}
	for i := range MaxToolkitRequirements - 1 {
		env[fmt.Sprintf("NVIDIA_REQUIRE_E%02d", i)] = ""
	}
	if reqs, _, err := Collect(env); err != nil || len(reqs) != 1 {
		t.Fatalf("1 requirement and 31 empty: %d collected, %v; want the one", len(reqs), err)
	}
	env["NVIDIA_REQUIRE_E99"] = ""
	if reqs, _, err := Collect(env); err == nil || reqs != nil || !strings.Contains(err.Error(), "33 requirements") {
		t.Errorf("1 requirement and 32 empty: %v, %v; want the toolkit's too-many error", reqs, err)
	}
}

func TestCollectRefusesMoreRequirementsThanTheToolkitTakes(t *testing.T) {
	env := map[string]string{}
	for i := range MaxToolkitRequirements {
		env[fmt.Sprintf("NVIDIA_REQUIRE_X%02d", i)] = "cuda>=11.0"
	}
	if reqs, _, err := Collect(env); err != nil || len(reqs) != MaxToolkitRequirements {
		t.Fatalf("%d requirements: %d collected, %v", MaxToolkitRequirements, len(reqs), err)
	}
	env["CUDA_VERSION"] = "12.2.2" // the legacy rule adds the 33rd
	reqs, _, err := Collect(env)
	if reqs != nil || err == nil {
		t.Fatalf("33 requirements: %v, %v", reqs, err)
	}
	for _, want := range []string{"33 requirements (CUDA_VERSION, NVIDIA_REQUIRE_X00, ... NVIDIA_REQUIRE_X31)", "at most 32", "too many requirements"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}
