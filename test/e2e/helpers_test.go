//go:build e2e

// Package e2e runs the built binaries end to end: the bullseye-built NVML
// probe and the static shim with its embedded copy, against the fake
// libnvidia-ml.so.1 (test/fakenvml) through go-nvml's real dlopen path and
// against Debian's real libnvidia-ml1. mk/e2e.mk builds what it needs
// first; a missing prerequisite fails the suite, it never skips.
package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

// binary returns a built binary: $env if set, else bin/name. A missing
// binary fails the test with how to build it.
func binary(t *testing.T, env, name string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		p = filepath.Join(harness.Root(t), "bin", name)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is not built (%v): run the suite with 'make test-e2e', which builds it", p, err)
	}
	return p
}

func shimBin(t *testing.T) string  { return binary(t, "GPU_PREFLIGHT_BIN", "gpu-preflight") }
func probeBin(t *testing.T) string { return binary(t, "GPU_PREFLIGHT_NVML_BIN", "gpu-preflight-nvml") }

var (
	fakeOnce sync.Once
	fakeLib  string
	fakeErr  error
)

// fakeLibrary builds the fake libnvidia-ml.so.1 once per test binary.
func fakeLibrary(t *testing.T) string {
	t.Helper()
	fakeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "e2e-fakenvml-")
		if err != nil {
			fakeErr = err
			return
		}
		fakeLib, fakeErr = fakenvml.Build(dir)
	})
	if fakeErr != nil {
		t.Fatalf("building the fake libnvidia-ml.so.1: %v", fakeErr)
	}
	return fakeLib
}

// realLibrary fetches (once, cached in the download cache's nvidia folder) Debian's
// libnvidia-ml1 and returns its libnvidia-ml.so.1.
func realLibrary(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(harness.Root(t), "scripts", "nvidia-libs.sh"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/nvidia-libs.sh: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// requireCUDA returns NVIDIA_REQUIRE_CUDA of the official nvidia/cuda
// image for CUDA version v ("12.8.1"), from the copy of docs/sources.md, "Forward compatibility and NVIDIA_REQUIRE_CUDA"
// the require package keeps.
func requireCUDA(t *testing.T, v string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(harness.Root(t), "preflight", "require", "testdata", "nvidia_require_cuda.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if version, value, ok := strings.Cut(line, "\t"); ok && version == v {
			return value
		}
	}
	t.Fatalf("no NVIDIA_REQUIRE_CUDA for %s in preflight/require/testdata/nvidia_require_cuda.txt", v)
	return ""
}

// result is one run of a binary.
type result struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

// marker tags every process a test starts through its environment, so the
// test can look for leftovers in /proc afterwards.
func marker(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	rand.Read(b)
	return "GPU_PREFLIGHT_E2E_RUN=" + hex.EncodeToString(b)
}

// shimEnv is a clean environment for the shim: no provenance file, JSON
// logs, the termination message in a temporary file, an empty root so the
// host's own /proc/driver and CUDA files do not leak in (the probe still
// loads the library named by PREFLIGHT_NVML_LIBRARY from this machine).
func shimEnv(t *testing.T, lib string, scenario *fakenvml.Scenario, extra ...string) []string {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"PREFLIGHT_PROVENANCE_DIR=off",
		"PREFLIGHT_LOG_FORMAT=json",
		"PREFLIGHT_TERMINATION_LOG=" + filepath.Join(dir, "termination-log"),
		"PREFLIGHT_ROOT=" + root,
		"PREFLIGHT_HOST_ROOT=" + root,
		"PREFLIGHT_NVML_LIBRARY=" + lib,
	}
	if scenario != nil {
		path, err := scenario.Write(dir)
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, fakenvml.EnvScenario+"="+path)
	}
	return append(env, extra...)
}

// run runs bin with env and args, at most limit.
func run(t *testing.T, limit time.Duration, env []string, bin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	return runCmd(t, cmd, limit)
}

// runCmd runs cmd to completion and returns what it did; it kills cmd and
// fails the test when it runs past limit.
func runCmd(t *testing.T, cmd *exec.Cmd, limit time.Duration) result {
	t.Helper()
	return runCmdThen(t, cmd, limit, func(*os.Process) {})
}

// runCmdThen is runCmd, calling started with the process once it runs.
func runCmdThen(t *testing.T, cmd *exec.Cmd, limit time.Duration, started func(*os.Process)) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %v: %v", cmd.Args, err)
	}
	timer := time.AfterFunc(limit, func() { cmd.Process.Kill() })
	started(cmd.Process)
	err := cmd.Wait()
	stopped := timer.Stop()
	r := result{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		t.Fatalf("running %v: %v", cmd.Args, err)
	}
	if !stopped {
		t.Fatalf("%v did not finish within %v\nstderr: %s", cmd.Args, limit, r.stderr)
	}
	return r
}

// reference times one `gpu-preflight check --json` with the fake NVML
// playing eight H100s: how long a run without a hang takes on the machine
// as it is now, the yardstick of the slack a run cut at a deadline gets to
// end (withinDeadline).
func reference(t *testing.T) time.Duration {
	t.Helper()
	env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("550.54.15", 12040)))
	return run(t, time.Minute, env, shimBin(t), "check", "--json").elapsed
}

// withinDeadline is harness.WithinDeadline with reference runs: ref, timed
// before the run, and one more if it needs it.
func withinDeadline(t *testing.T, what string, took, deadline, ref time.Duration) {
	t.Helper()
	harness.WithinDeadline(t, what, took, deadline, ref, func() time.Duration { return reference(t) })
}

// record is the part of the provenance record these tests read.
type record struct {
	Host struct {
		Driver struct {
			Version, CUDAVersion, Source, CUDAVersionSource string
		}
		GPUs []struct {
			Index             int
			Name, UUID, Brand string
			ComputeCapability string
			PCIBusID          string `json:"pciBusId"`
			MemoryBytes       uint64
			PersistenceMode   string
			Errors            map[string]string
		}
		NVML struct {
			Outcome, Error, Via, Version string
			DurationMillis               float64
		}
	}
	Checks []struct {
		ID, Status, Message, Remedy string
	}
	Decision struct {
		Action    string
		ExitCode  int
		NodeFault bool
	}
}

// checkJSON runs `gpu-preflight check --json` and decodes the record.
func checkJSON(t *testing.T, env []string) (record, result) {
	t.Helper()
	r := run(t, 30*time.Second, env, shimBin(t), "check", "--json")
	var rec record
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
		t.Fatalf("check --json (exit %d) printed no record: %v\nstdout: %s\nstderr: %s", r.code, err, r.stdout, r.stderr)
	}
	schematest.Validate(t, []byte(r.stdout))
	return rec, r
}

// finding returns the check with id from rec.
func finding(t *testing.T, rec record, id string) (status, message string) {
	t.Helper()
	for _, c := range rec.Checks {
		if c.ID == id {
			return c.Status, c.Message + " | " + c.Remedy
		}
	}
	t.Fatalf("record has no %q check: %+v", id, rec.Checks)
	return "", ""
}

// processesWith lists the live processes whose environment holds marker.
func processesWith(marker string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, []byte(marker)) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join(d, "stat"))
		if _, rest, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(rest, "Z") {
			continue // dead, awaiting its parent
		}
		cmdline, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		out = append(out, filepath.Base(d)+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}
