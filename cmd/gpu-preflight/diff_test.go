package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/diff"
	"github.com/gpu-preflight/gpu-preflight/report/store"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

// hostFacts is a host with the given driver and one H100, running a CUDA
// 12.2 image.
func hostFacts(driver, driverCUDA string) facts.Facts {
	return facts.Facts{
		Host: facts.Host{
			Hostname: "gpu-node-a",
			Kernel:   "5.15.0-91-generic",
			Driver:   facts.Driver{Version: driver, CUDAVersion: driverCUDA, Source: "nvml-memfd", CUDAVersionSource: "nvml"},
			GPUs: []facts.GPU{{Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-5c4b7a2e-0000-4d7e-9f1a-000000000000",
				PCIBusID: "00000000:18:00.0", Brand: "Nvidia", ComputeCapability: "9.0", MIGMode: "disabled", PersistenceMode: "enabled"}},
			NVML: facts.NVML{Outcome: facts.ProbeOK},
		},
		Container: facts.Container{
			CUDA:       facts.CUDAToolkit{Version: "12.2", Full: "12.2.2"},
			Frameworks: []facts.Framework{{Name: "paddlepaddle", Version: "2.6.1", CUDAVersion: "12.0", Archs: []string{"sm_80", "sm_90"}}},
		},
	}
}

// writeRecord writes a record of f, started at start, into dir.
func writeRecord(t *testing.T, dir string, f facts.Facts, start time.Time) string {
	t.Helper()
	r := report.New(report.Inputs{
		Facts:    f,
		Findings: []check.Finding{{ID: "driver", Status: check.Pass}, {ID: "cuda-driver", Status: check.Pass}},
		Decision: decision.Decision{Policy: "fail", Action: decision.Exec},
		Argv:     []string{"python", "train.py"},
		Now:      start,
	})
	path, err := store.Write(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, b)
	return path
}

type diffRun struct {
	code           int
	stdout, stderr string
}

func runDiff(args ...string) diffRun {
	var stdout, stderr bytes.Buffer
	code := cmdDiff(args, nil, &stdout, &stderr)
	return diffRun{code, stdout.String(), stderr.String()}
}

var day0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// changeLines are the lines after the two header lines.
func changeLines(t *testing.T, out string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "old: ") || !strings.HasPrefix(lines[1], "new: ") {
		t.Fatalf("diff output does not start with old: and new: lines:\n%s", out)
	}
	return lines[2:]
}

func TestDiffDriverUpgradeListsDriverAndCUDAFirstAndExits1(t *testing.T) {
	dir := t.TempDir()
	old := writeRecord(t, dir, hostFacts("535.129.03", "12.2"), day0)
	new := writeRecord(t, dir, hostFacts("550.54.15", "12.4"), day0.Add(24*time.Hour))

	r := runDiff(old, new)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	lines := changeLines(t, r.stdout)
	want := []string{"driver: 535.129.03 -> 550.54.15", "driver CUDA: 12.2 -> 12.4"}
	if len(lines) < 2 || lines[0] != want[0] || lines[1] != want[1] {
		t.Errorf("changes start %q, want %q", lines, want)
	}

	j := runDiff("--json", old, new)
	if j.code != 1 {
		t.Fatalf("--json: exit %d, want 1", j.code)
	}
	var out diffJSON
	if err := json.Unmarshal([]byte(j.stdout), &out); err != nil {
		t.Fatalf("--json printed %q: %v", j.stdout, err)
	}
	if !out.Matters || len(out.Changes) < 2 ||
		out.Changes[0] != (diff.Change{Field: "driver", Old: "535.129.03", New: "550.54.15", Matters: true}) ||
		out.Changes[1] != (diff.Change{Field: "driver CUDA", Old: "12.2", New: "12.4", Matters: true}) {
		t.Errorf("--json = %+v", out)
	}
	if out.Old.Path != old || out.New.Path != new || out.Old.RunID == "" || out.New.StartedAt == "" {
		t.Errorf("--json names the records %+v and %+v", out.Old, out.New)
	}

	// Flags after the operands work too.
	if after := runDiff(old, new, "--json"); after.stdout != j.stdout {
		t.Errorf("diff OLD NEW --json printed %q, want %q", after.stdout, j.stdout)
	}
}

func TestDiffOfTheSameSetupExits0(t *testing.T) {
	dir := t.TempDir()
	a := writeRecord(t, dir, hostFacts("535.129.03", "12.2"), day0)
	b := writeRecord(t, dir, hostFacts("535.129.03", "12.2"), day0.Add(time.Hour))
	for _, args := range [][]string{{a, a}, {a, b}, {dir}} {
		r := runDiff(args...)
		if r.code != 0 {
			t.Errorf("diff %q: exit %d, want 0; stdout:\n%s", args, r.code, r.stdout)
		}
		if lines := changeLines(t, r.stdout); len(lines) != 1 || lines[0] != "no changes" {
			t.Errorf("diff %q printed %q, want no changes", args, lines)
		}
	}
	f := hostFacts("535.129.03", "12.2")
	f.Host.Hostname = "gpu-node-b"
	c := writeRecord(t, dir, f, day0.Add(2*time.Hour))
	if r := runDiff(b, c); r.code != 0 || !strings.Contains(r.stdout, "  hostname: gpu-node-a -> gpu-node-b\n") {
		t.Errorf("a minor change: exit %d, want 0, stdout:\n%s", r.code, r.stdout)
	}
}

func TestDiffDirComparesTheTwoNewestByStartedAt(t *testing.T) {
	dir := t.TempDir()
	// Written out of order: the file system's order must not matter.
	newest := writeRecord(t, dir, hostFacts("550.54.15", "12.4"), day0.Add(48*time.Hour))
	writeRecord(t, dir, hostFacts("470.57.02", "11.4"), day0)
	middle := writeRecord(t, dir, hostFacts("535.129.03", "12.2"), day0.Add(24*time.Hour))
	// Not records: skipped with a warning, or not even read.
	os.WriteFile(filepath.Join(dir, "notes.json"), []byte(`{"hello": "world"}`), 0o644)
	os.WriteFile(filepath.Join(dir, ".x.json.tmp-1234"), []byte(`{`), 0o644)
	os.WriteFile(filepath.Join(dir, "README"), []byte(`not json`), 0o644)

	r := runDiff("--json", dir)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	var out diffJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Old.Path != middle || out.New.Path != newest {
		t.Errorf("compared %s with %s, want %s with %s", out.Old.Path, out.New.Path, middle, newest)
	}
	if out.Changes[0].Old != "535.129.03" {
		t.Errorf("first change %+v", out.Changes[0])
	}
	if !strings.Contains(r.stderr, "notes.json") || strings.Contains(r.stderr, "README") || strings.Contains(r.stderr, ".tmp") {
		t.Errorf("stderr should warn about notes.json only:\n%s", r.stderr)
	}
}

func TestDiffUsageErrorsExit64NamingTheFile(t *testing.T) {
	dir := t.TempDir()
	good := writeRecord(t, dir, hostFacts("535.129.03", "12.2"), day0)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"schemaVersion": "1", "runId": `), 0o644)
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(`{"name": "not a record"}`), 0o644)
	future := filepath.Join(dir, "future.json")
	os.WriteFile(future, []byte(`{"schemaVersion": "2", "runId": "x", "startedAt": "2026-11-02T09:00:00Z"}`), 0o644)
	lone := t.TempDir()
	writeRecord(t, lone, hostFacts("535.129.03", "12.2"), day0)
	missing := filepath.Join(dir, "missing.json")

	for _, tt := range []struct {
		name  string
		args  []string
		names string
	}{
		{"NoArguments", nil, "two records"},
		{"ThreeArguments", []string{good, good, good}, "got 3"},
		{"MissingFile", []string{good, missing}, missing},
		{"InvalidJSON", []string{bad, good}, bad},
		{"NotARecord", []string{good, other}, other},
		{"FutureSchema", []string{future, good}, `schemaVersion "2"`},
		{"OneRecordInDir", []string{lone}, "1 provenance record"},
		{"FileAsDir", []string{good}, "not a directory"},
		{"UnknownFlag", []string{"--yaml", good, good}, "yaml"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runDiff(tt.args...)
			if r.code != 64 || r.stdout != "" {
				t.Fatalf("exit %d, stdout %q; want 64 and nothing on stdout", r.code, r.stdout)
			}
			if !strings.Contains(r.stderr, tt.names) {
				t.Errorf("stderr %q does not name %q", r.stderr, tt.names)
			}
		})
	}
}

// TestDiffOfTwoShimRuns compares records the built gpu-preflight wrote on
// two hosts whose procfs reports driver 535.129.03 and then 550.54.15.
func TestDiffOfTwoShimRuns(t *testing.T) {
	prov := t.TempDir()
	for _, v := range []string{"535.129.03", "550.54.15"} {
		root := driverRoot(t, v)
		cmd := exec.Command(shimPath, "check", "--root", root, "--host-root", root)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "PREFLIGHT_PROVENANCE_DIR=" + prov, "PREFLIGHT_LOG_FORMAT=json"}
		if out, err := cmd.CombinedOutput(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("check with driver %s: %v\n%s", v, err, out)
			}
		}
	}
	cmd := exec.Command(shimPath, "diff", prov)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("diff DIR: %v, want exit 1; stdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	lines := changeLines(t, stdout.String())
	want := []string{"driver: 535.129.03 -> 550.54.15", "driver CUDA: 12.2 -> 12.4"}
	if len(lines) < 2 || lines[0] != want[0] || lines[1] != want[1] {
		t.Errorf("changes start %q, want %q", lines, want)
	}
}
