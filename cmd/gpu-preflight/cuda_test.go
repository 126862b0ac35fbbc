package main

import (
	"strings"
	"testing"
)

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
