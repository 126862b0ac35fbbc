package main

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/cudaprobe"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// The CUDA check is off unless asked for, and its deadline's default is
// the one package cuda states.
func TestCUDACheckDefaults(t *testing.T) {
	ty := reflect.TypeFor[Config]()
	mode, _ := ty.FieldByName("CUDACheck")
	timeout, _ := ty.FieldByName("CUDATimeout")
	if mode.Tag.Get("default") != facts.CUDAModeOff {
		t.Errorf("PREFLIGHT_CUDA_CHECK defaults to %q, want off", mode.Tag.Get("default"))
	}
	if d, err := time.ParseDuration(timeout.Tag.Get("default")); err != nil || d != cudaprobe.DefaultTimeout {
		t.Errorf("PREFLIGHT_CUDA_TIMEOUT defaults to %q, want %s", timeout.Tag.Get("default"), cudaprobe.DefaultTimeout)
	}
}

// Enumerated values are read in any case, as every setting's ("Kernel"
// is kernel); a value that is none of them is a usage error.
func TestCUDASettingsAreValidated(t *testing.T) {
	for _, tc := range []struct{ name, value string }{
		{"PREFLIGHT_CUDA_CHECK", "on"}, {"PREFLIGHT_CUDA_CHECK", "kernels"}, {"PREFLIGHT_CUDA_CHECK", ""},
		{"PREFLIGHT_CUDA_TIMEOUT", "0s"}, {"PREFLIGHT_CUDA_TIMEOUT", "-1s"}, {"PREFLIGHT_CUDA_TIMEOUT", "15"},
	} {
		r := runShim(t, map[string]string{tc.name: tc.value}, "check")
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.name) {
			t.Errorf("%s=%q: exit %d, want %d naming the variable\n%s", tc.name, tc.value, r.code, exitUsage, r.stderr)
		}
	}
}
