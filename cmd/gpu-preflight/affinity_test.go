package main

import (
	"strings"
	"testing"
)

func TestAffinityCommand(t *testing.T) {
	env := map[string]string{"CUDA_VERSION": "12.8.1", "NVIDIA_REQUIRE_CUDA": "cuda>=12.8 brand=tesla,driver>=535,driver<536"}
	r := runShim(t, env, "affinity", "--root", t.TempDir())
	if r.code != 0 || !strings.HasPrefix(strings.SplitN(r.stdout, "\nnodeAffinity:", 2)[0], "# ") ||
		!strings.Contains(r.stdout, "nvidia.com/cuda.driver-version.major") || !strings.Contains(r.stdout, "# Note: brand is left out") {
		t.Errorf("exit %d, stdout:\n%s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	old := runShim(t, env, "affinity", "--root", t.TempDir(), "--deprecated-labels")
	if old.code != 0 || !strings.Contains(old.stdout, "nvidia.com/cuda.driver.major") || strings.Contains(old.stdout, "driver-version") {
		t.Errorf("--deprecated-labels: exit %d:\n%s", old.code, old.stdout)
	}
	if s := runShim(t, nil, "affinity", "--slurm"); s.code != 0 || !strings.Contains(s.stdout, "--constraint") {
		t.Errorf("--slurm: exit %d:\n%s", s.code, s.stdout)
	}
	if u := runShim(t, nil, "affinity", "extra"); u.code != 64 {
		t.Errorf("an argument: exit %d", u.code)
	}
	none := runShim(t, map[string]string{"PREFLIGHT_REQUIRE": "driver<400"}, "affinity", "--root", t.TempDir())
	if none.code != 1 || !strings.Contains(none.stderr, "no node can run this image") {
		t.Errorf("impossible image: exit %d, stderr %s", none.code, none.stderr)
	}
}
