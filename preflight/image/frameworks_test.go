package image

import (
	"slices"
	"testing"
)

func TestSortArchs(t *testing.T) {
	got := []string{"compute_90", "sm_90a", "sm_100", "sm_80", "weird", "sm_90", "compute_80", "sm_86"}
	sortArchs(got)
	want := []string{"sm_80", "compute_80", "sm_86", "sm_90", "sm_90a", "compute_90", "sm_100", "weird"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
