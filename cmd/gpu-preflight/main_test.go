package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/app"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

// shimPath is gpu-preflight built once for these tests, statically, as
// `make build` builds it (without the embedded probe).
var shimPath string

func TestMain(m *testing.M) {
	if out := os.Getenv(measureEnv); out != "" {
		measureChild(out) // the test binary as a small parent (memory_test.go)
	}
	dir, err := os.MkdirTemp("", "gpu-preflight-test")
	if err != nil {
		panic(err)
	}
	shimPath = filepath.Join(dir, "gpu-preflight")
	build := exec.Command("go", "build", "-o", shimPath, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic("building gpu-preflight: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type shimRun struct {
	stdout, stderr string
	code           int
	records        []map[string]any
}

// runShim runs the built shim with a minimal environment plus env, and
// reads back the records it wrote.
func runShim(t *testing.T, env map[string]string, args ...string) shimRun {
	t.Helper()
	prov := t.TempDir()
	cmd := exec.Command(shimPath, args...)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"PREFLIGHT_PROVENANCE_DIR=" + prov, "PREFLIGHT_LOG_FORMAT=json",
		"PREFLIGHT_TERMINATION_LOG=" + filepath.Join(t.TempDir(), "termination-log")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if r, ok := env["PREFLIGHT_ROOT"]; ok && env["PREFLIGHT_HOST_ROOT"] == "" {
		// A prepared tree is the whole machine: host and image.
		cmd.Env = append(cmd.Env, "PREFLIGHT_HOST_ROOT="+r)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := shimRun{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running the shim: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(prov, "*.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		schematest.Validate(t, data)
		var rec map[string]any
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatalf("record %s is not JSON: %v", f, err)
		}
		r.records = append(r.records, rec)
	}
	return r
}

// driverRoot builds a PREFLIGHT_ROOT whose procfs reports driver version v.
func driverRoot(t *testing.T, v string) string {
	t.Helper()
	return driverRootIn(t, t.TempDir(), v)
}

// driverRootIn is driverRoot in the directory root.
func driverRootIn(t *testing.T, root, v string) string {
	t.Helper()
	dir := filepath.Join(root, "proc/driver/nvidia")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	line := "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + v + "  Thu Oct 19 18:56:32 UTC 2023\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"
	if err := os.WriteFile(filepath.Join(dir, "version"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// get walks a decoded record: get(rec, "decision", "action").
var get = harness.Field

func oneRecord(t *testing.T, r shimRun) map[string]any {
	t.Helper()
	if len(r.records) != 1 {
		t.Fatalf("%d records written, want 1; stderr:\n%s", len(r.records), r.stderr)
	}
	return r.records[0]
}

// logLine returns the first JSON log line whose fields match.
func logLine(t *testing.T, stderr string, match map[string]string) map[string]any {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		ok := true
		for k, v := range match {
			if s, _ := m[k].(string); s != v {
				ok = false
			}
		}
		if ok {
			return m
		}
	}
	t.Fatalf("no log line with %v in:\n%s", match, stderr)
	return nil
}

const require118 = "cuda>=11.8 brand=tesla,driver>=470,driver<471"

func TestNoDriverRunsTheCommandWithAWarning(t *testing.T) {
	// The real root of this GPU-less machine, as in the README.
	r := runShim(t, nil, "--", "echo", "hi")
	if r.code != 0 || r.stdout != "hi\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	logLine(t, r.stderr, map[string]string{"check": "driver", "status": "warn"})
	rec := oneRecord(t, r)
	if get(rec, "decision", "action") != "exec" {
		t.Errorf("decision = %v", get(rec, "decision"))
	}
}

// The termination log is Kubernetes': an abort pointed at another host's
// files, with no PREFLIGHT_TERMINATION_LOG, leaves this machine's
// /dev/termination-log as it was (absent stays absent). The rule for the
// default path on this host's own root (written only when the kubelet made
// the file) is proved in report/store, where no real /dev is touched.
func TestAbortLeavesTheDefaultTerminationLogAlone(t *testing.T) {
	const path = "/dev/termination-log"
	before, errBefore := os.Lstat(path)
	root := driverRoot(t, "515.65.01")
	cmd := exec.Command(shimPath, "--", "true")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "PREFLIGHT_PROVENANCE_DIR=off", "PREFLIGHT_LOG_FORMAT=json",
		"PREFLIGHT_ROOT=" + root, "PREFLIGHT_HOST_ROOT=" + root, "NVIDIA_REQUIRE_CUDA=" + require118}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 78 {
		t.Fatalf("want an abort (78), got %v:\n%s", err, out)
	}
	after, errAfter := os.Lstat(path)
	switch {
	case errBefore != nil && errAfter == nil:
		t.Errorf("the abort created %s", path)
	case errBefore == nil && (errAfter != nil || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size()):
		t.Errorf("the abort wrote %s (%v, %v -> %v)", path, errAfter, before.ModTime(), after.ModTime())
	}
}

func TestIncompatibleDriverAborts(t *testing.T) {
	term := filepath.Join(t.TempDir(), "termination-log")
	marker := filepath.Join(t.TempDir(), "ran")
	r := runShim(t, map[string]string{
		"PREFLIGHT_ROOT": driverRoot(t, "515.65.01"), "NVIDIA_REQUIRE_CUDA": require118,
		"PREFLIGHT_TERMINATION_LOG": term,
	}, "--", "touch", marker)
	if r.code != 78 {
		t.Fatalf("exit %d, want 78; stderr:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran")
	}
	rec := oneRecord(t, r)
	if get(rec, "decision", "action") != "abort" {
		t.Errorf("decision = %v", get(rec, "decision"))
	}
	line := logLine(t, r.stderr, map[string]string{"check": "cuda-requirement", "status": "error"})
	for _, want := range []string{"515.65.01", "11.7", "11.8", "520.61.05"} {
		if !strings.Contains(line["message"].(string)+" "+line["remedy"].(string), want) {
			t.Errorf("message does not name %s: %v", want, line)
		}
	}
	msg, err := os.ReadFile(term)
	if err != nil || !strings.Contains(string(msg), "520.61.05") || len(msg) > 4096 {
		t.Errorf("termination log %q, %v", msg, err)
	}
}

func TestDriversTheRequirementAccepts(t *testing.T) {
	for _, tt := range []struct{ name, driver string }{
		{"MissingBrandSatisfiesBrandFactor", "470.57.02"},
		{"NewerDriverSatisfiesCUDA", "535.129.03"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runShim(t, map[string]string{"PREFLIGHT_ROOT": driverRoot(t, tt.driver), "NVIDIA_REQUIRE_CUDA": require118,
				"PREFLIGHT_LOG_LEVEL": "debug"}, "--", "echo", "ran")
			if r.code != 0 || r.stdout != "ran\n" {
				t.Fatalf("exit %d, stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
			}
			logLine(t, r.stderr, map[string]string{"check": "cuda-requirement", "status": "pass"})
		})
	}
}

func TestWarnPolicyRunsDespiteErrors(t *testing.T) {
	r := runShim(t, map[string]string{"PREFLIGHT_ROOT": driverRoot(t, "515.65.01"), "NVIDIA_REQUIRE_CUDA": require118,
		"PREFLIGHT_POLICY": "warn"}, "--", "echo", "ran")
	if r.code != 0 || r.stdout != "ran\n" {
		t.Fatalf("exit %d, stdout %q", r.code, r.stdout)
	}
	logLine(t, r.stderr, map[string]string{"check": "cuda-requirement", "status": "error"})
}

func TestFlagOverridesEnvironment(t *testing.T) {
	r := runShim(t, map[string]string{"PREFLIGHT_ROOT": driverRoot(t, "515.65.01"), "NVIDIA_REQUIRE_CUDA": require118,
		"PREFLIGHT_POLICY": "fail"}, "--policy=warn", "--", "sh", "-c", "echo $PREFLIGHT_POLICY")
	if r.code != 0 || r.stdout != "fail\n" {
		t.Fatalf("exit %d, stdout %q: the flag must win, and the command must see the environment unchanged", r.code, r.stdout)
	}
}

func TestIgnoreDowngradesTheCheck(t *testing.T) {
	r := runShim(t, map[string]string{"PREFLIGHT_ROOT": driverRoot(t, "515.65.01"), "NVIDIA_REQUIRE_CUDA": require118,
		"PREFLIGHT_IGNORE": "cuda-requirement"}, "--", "true")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	logLine(t, r.stderr, map[string]string{"check": "cuda-requirement", "status": "info"})
}

func TestInvalidConfigurationIsAUsageError(t *testing.T) {
	for _, tt := range []struct{ name, key, value, wants string }{
		{"BogusPolicy", "PREFLIGHT_POLICY", "bogus", "warn, fail, strict"},
		{"NonNumericMinGPUs", "PREFLIGHT_MIN_GPUS", "two", "whole number"},
		{"BadDuration", "PREFLIGHT_NVML_TIMEOUT", "10", "duration"},
		{"BadBool", "PREFLIGHT_REQUIRE_GPU", "yes", "true or false"},
		{"UnknownIgnoredCheck", "PREFLIGHT_IGNORE", "cuda-requirment", "known checks"},
		{"InvalidRequirement", "PREFLIGHT_REQUIRE", "cuda=>12", "PREFLIGHT_REQUIRE"},
		{"BadLogFormat", "PREFLIGHT_LOG_FORMAT", "xml", "json, console, auto"},
		{"ExitCodeOutOfRange", "PREFLIGHT_EXIT_CODE", "300", "1..255"},
		{"SetButEmptyIsNotTheDefault", "PREFLIGHT_MIN_GPUS", "", "whole number"},
		{"BadSupervise", "PREFLIGHT_SUPERVISE", "sometimes", "auto, true, false"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runShim(t, map[string]string{tt.key: tt.value}, "--", "echo", "ran")
			if r.code != 64 || r.stdout != "" {
				t.Fatalf("exit %d, stdout %q; want 64 and no command", r.code, r.stdout)
			}
			if !strings.Contains(r.stderr, tt.key) || !strings.Contains(r.stderr, tt.wants) {
				t.Errorf("stderr %q does not name %s and %q", r.stderr, tt.key, tt.wants)
			}
		})
	}
}

// TestSuperviseDefaultsToAutoAsPID1: with PREFLIGHT_SUPERVISE unset (auto)
// gpu-preflight supervises exactly when it is PID 1; true and false (and
// --supervise, --supervise=false) force one way.
func TestSuperviseDefaultsToAutoAsPID1(t *testing.T) {
	for _, tt := range []struct {
		name      string
		env, flag string // "" leaves it unset
		pid1, pid bool   // supervises as PID 1, as another pid
	}{
		{"UnsetIsAuto", "", "", true, false},
		{"Auto", "auto", "", true, false},
		{"True", "true", "", true, true},
		{"False", "false", "", false, false},
		{"BooleanForms", "1", "", true, true},
		{"BareFlag", "false", "--supervise", true, true},
		{"FlagValue", "true", "--supervise=auto", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var environ []string
			if tt.env != "" {
				environ = append(environ, "PREFLIGHT_SUPERVISE="+tt.env)
			}
			given := map[string]string{}
			var args []string
			if tt.flag != "" {
				args = append(args, tt.flag)
			}
			fs := newFlagSet("test", given, args)
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			c, err := app.Load(envvars.Parse(environ), given)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Supervises(1); got != tt.pid1 {
				t.Errorf("as PID 1: supervises = %v, want %v", got, tt.pid1)
			}
			if got := c.Supervises(4242); got != tt.pid {
				t.Errorf("as pid 4242: supervises = %v, want %v", got, tt.pid)
			}
		})
	}
}

func TestOnlyPrefixedVariablesConfigure(t *testing.T) {
	// A container's own POLICY, TIMEOUT or ROOT is not gpu-preflight's
	// (envconfig, used before, fell back to the bare names).
	r := runShim(t, map[string]string{"POLICY": "bogus", "TIMEOUT": "x", "ROOT": "/nonexistent", "EXIT_CODE": "300"},
		"--", "echo", "ran")
	if r.code != 0 || r.stdout != "ran\n" {
		t.Fatalf("exit %d, stdout %q, stderr %s; want the command run with the defaults", r.code, r.stdout, r.stderr)
	}
}

func TestFlagsOverrideTheEnvironment(t *testing.T) {
	r := runShim(t, map[string]string{"PREFLIGHT_POLICY": "bogus"}, "--policy=warn", "--", "echo", "ran")
	if r.code != 0 || r.stdout != "ran\n" {
		t.Fatalf("exit %d, stdout %q, stderr %s; want --policy=warn to win over PREFLIGHT_POLICY", r.code, r.stdout, r.stderr)
	}
	r = runShim(t, map[string]string{"PREFLIGHT_POLICY": "warn"}, "--policy=bogus", "--", "echo", "ran")
	if r.code != 64 || !strings.Contains(r.stderr, "PREFLIGHT_POLICY") {
		t.Fatalf("exit %d, stderr %s; want --policy=bogus reported as PREFLIGHT_POLICY", r.code, r.stderr)
	}
}

func TestExecFailures(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "script")
	os.WriteFile(notExec, []byte("#!/bin/sh\necho no\n"), 0o644)
	for _, tt := range []struct {
		name string
		argv []string
		code int
	}{
		{"CommandNotFoundIs127", []string{"no-such-command-xyz"}, 127},
		{"NotExecutableIs126", []string{notExec}, 126},
		{"DirectoryIs126", []string{dir}, 126},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runShim(t, nil, append([]string{"--"}, tt.argv...)...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d", r.code, tt.code)
			}
			if !strings.Contains(r.stderr, tt.argv[0]) {
				t.Errorf("stderr does not name the command: %s", r.stderr)
			}
		})
	}
}

func TestExecKeepsArgvEnvAndCwd(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(shimPath, "--", "sh", "-c", `printf '%s|%s|%s' "$0" "$MY_VAR" "$PWD"`, "arg0")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "MY_VAR=kept", "PREFLIGHT_PROVENANCE_DIR=off", "PWD=" + dir}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "arg0|kept|"+dir; got != want {
		t.Errorf("command saw %q, want %q", got, want)
	}
}

func TestCheckCommand(t *testing.T) {
	root := driverRoot(t, "515.65.01")
	r := runShim(t, map[string]string{"NVIDIA_REQUIRE_CUDA": require118}, "check", "--json", "--root", root, "--host-root", root)
	if r.code != 78 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
		t.Fatalf("check --json printed no record: %v\n%s", err, r.stdout)
	}
	schematest.Validate(t, []byte(r.stdout))
	if get(rec, "host", "driver", "version") != "515.65.01" || get(rec, "host", "driver", "cudaVersion") != "11.7" {
		t.Errorf("host.driver = %v", get(rec, "host", "driver"))
	}
	human := runShim(t, map[string]string{"NVIDIA_REQUIRE_CUDA": require118, "PREFLIGHT_ROOT": root})
	if human.code != 78 || !strings.Contains(human.stdout, "cuda-requirement") || !strings.Contains(human.stdout, "520.61.05") {
		t.Errorf("no-argument form: exit %d, stdout:\n%s", human.code, human.stdout)
	}
}

// check says what it found once, on stdout: the human report (with the
// gathering's notes), or with --json the record alone. stderr carries only
// what went wrong, here an unknown setting (and for --json the notes, which
// the record has no place for); no summary, finding, record or abort line
// repeats the report.
func TestCheckPrintsTheReportOnce(t *testing.T) {
	root := driverRoot(t, "515.65.01")
	env := map[string]string{"NVIDIA_REQUIRE_CUDA": require118, "PREFLIGHT_ROOT": root, "PREFLIGHT_POLCY": "warn"}
	for _, args := range [][]string{{"check"}, {"check", "--json"}, nil} {
		r := runShim(t, env, args...)
		if r.code != 78 || len(r.records) != 1 {
			t.Fatalf("%v: exit %d, %d records; stderr:\n%s", args, r.code, len(r.records), r.stderr)
		}
		asJSON := len(args) == 2
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if want := map[bool]int{false: 1, true: 2}[asJSON]; len(lines) != want || !strings.Contains(lines[0], "PREFLIGHT_POLCY") {
			t.Errorf("%v: stderr is not %d line(s), the first the warning about PREFLIGHT_POLCY:\n%s", args, want, r.stderr)
		}
		for _, l := range lines {
			if !strings.Contains(l, `"level":"warn"`) {
				t.Errorf("%v: a line on stderr that is no warning: %s", args, l)
			}
		}
		if strings.Contains(r.stdout, `"level":`) {
			t.Errorf("%v: a log line on stdout:\n%s", args, r.stdout)
		}
		if asJSON {
			schematest.Validate(t, []byte(r.stdout))
		} else if !strings.Contains(r.stdout, "cuda-requirement") || !strings.Contains(r.stdout, "Notes:\n  no image manifest at") {
			t.Errorf("%v: no report, or no note that the image was scanned, on stdout:\n%s", args, r.stdout)
		}
	}
	// A record it cannot write still shows.
	r := runShim(t, map[string]string{"PREFLIGHT_ROOT": root, "PREFLIGHT_PROVENANCE_DIR": filepath.Join(root, "proc/driver/nvidia/version", "x")}, "check")
	if !strings.Contains(r.stderr, "provenance record not written") {
		t.Errorf("check hid that the record could not be written:\n%s", r.stderr)
	}
}

func TestExplainShowsTheTermThatHeld(t *testing.T) {
	r := runShim(t, map[string]string{"PREFLIGHT_ROOT": driverRoot(t, "470.57.02"), "NVIDIA_REQUIRE_CUDA": require118}, "explain")
	if r.code != 0 || !strings.Contains(r.stdout, "brand=tesla,driver>=470,driver<471") {
		t.Errorf("exit %d, stdout:\n%s", r.code, r.stdout)
	}
	bad := runShim(t, map[string]string{"PREFLIGHT_ROOT": driverRoot(t, "515.65.01")}, "explain", "cuda>=12.8")
	if bad.code != 1 {
		t.Errorf("unsatisfied explain exit %d, want 1", bad.code)
	}
	invalid := runShim(t, map[string]string{"PREFLIGHT_ROOT": driverRoot(t, "515.65.01")}, "explain", "cuda=>12")
	if invalid.code != 64 {
		t.Errorf("invalid explain exit %d, want 64", invalid.code)
	}
}

// explain and check give one verdict on the same facts: every case is run
// through both.
func TestExplainAgreesWithCheck(t *testing.T) {
	many := map[string]string{}
	for i := range 32 {
		many[fmt.Sprintf("NVIDIA_REQUIRE_X%02d", i)] = ""
	}
	many["NVIDIA_REQUIRE_CUDA"] = "cuda>=11.0"
	tests := []struct {
		name        string
		driver      string // "" for a host without a driver
		env         map[string]string
		args        []string
		explainCode int
		checkStatus string // of cuda-requirement
		says        string
		checkCode   int // check's exit under the default policy
	}{
		// dsl.c never reaches foo=bar when cuda>=12 holds...
		{"UnreachedBadFactor", "550.54.15", nil, []string{"cuda>=12 foo=bar"}, 0, "pass", "held", 0},
		// ...and refuses the string when it does.
		{"ReachedBadFactor", "515.65.01", nil, []string{"cuda>=12 foo=bar"}, 64, "error", "foo=bar", 78},
		{"UnparsableCUDAVersion", "550.54.15", map[string]string{"CUDA_VERSION": "abc"}, nil, 1, "error", "cannot be collected", 78},
		// 33 requirements, 32 of them empty: the toolkit passes every one.
		{"TooManyRequirementsCountingEmptyOnes", "550.54.15", many, nil, 1, "error", "33 requirements", 78},
		{"NoDriver", "", map[string]string{"NVIDIA_REQUIRE_CUDA": "cuda>=12.0"}, nil, 1, "skip", "no NVIDIA driver", 0},
		// Driver 600.10: its branch is not in the table, so its CUDA (13.2)
		// is assumed; the failure rests on that guess alone.
		{"AssumedDriverCUDA", "600.10", map[string]string{"NVIDIA_REQUIRE_CUDA": "cuda>=13.3"}, nil, 0, "warn", "assumed", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.driver != "" {
				root = driverRoot(t, tt.driver)
			}
			env := map[string]string{"PREFLIGHT_ROOT": root}
			for k, v := range tt.env {
				env[k] = v
			}
			e := runShim(t, env, append([]string{"explain"}, tt.args...)...)
			if e.code != tt.explainCode || !strings.Contains(e.stdout, tt.says) {
				t.Errorf("explain exit %d, want %d, saying %q:\n%s%s", e.code, tt.explainCode, tt.says, e.stdout, e.stderr)
			}
			if len(tt.args) > 0 {
				// The same string as the image's: explain without
				// arguments, and check, read it from there.
				env["NVIDIA_REQUIRE_CUDA"] = tt.args[0]
				if e2 := runShim(t, env, "explain"); e2.code != e.code {
					t.Errorf("explain of the image's NVIDIA_REQUIRE_CUDA exits %d, of the argument %d", e2.code, e.code)
				}
			}
			c := runShim(t, env, "check", "--json")
			if c.code != tt.checkCode {
				t.Errorf("check exit %d, want %d", c.code, tt.checkCode)
			}
			var rec map[string]any
			if err := json.Unmarshal([]byte(c.stdout), &rec); err != nil {
				t.Fatalf("check printed no record: %v\n%s", err, c.stderr)
			}
			checks, _ := rec["checks"].([]any)
			for _, f := range checks {
				if get(f, "id") == "cuda-requirement" && get(f, "status") != tt.checkStatus {
					t.Errorf("check's cuda-requirement is %v (%v), want %s", get(f, "status"), get(f, "message"), tt.checkStatus)
				}
			}
			// explain vouches (exits 0) exactly when the check passes
			// the requirement: not on an error, and not on a skip for
			// want of a driver.
			if vouches := tt.checkStatus == "pass" || tt.checkStatus == "warn"; vouches != (e.code == 0) {
				t.Errorf("explain exit %d and check's %s disagree", e.code, tt.checkStatus)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	r := runShim(t, nil, "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "gpu-preflight ") {
		t.Errorf("version: exit %d, %q", r.code, r.stdout)
	}
	// Unit tests build without the embedprobe tag; test/e2e checks the
	// embedded build says so.
	for _, s := range []string{runtime.GOOS + "/" + runtime.GOARCH, "no NVML probe embedded"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("version says %q, not %q", r.stdout, s)
		}
	}
}

// TestShimWithoutProbeSaysSo: a shim from a plain `go build` (as `go
// install` makes it) names the missing embedded probe in its nvml finding,
// instead of blaming memfd. PREFLIGHT_NVML_LIBRARY starts the probe without
// driver evidence; PATH holds no gpu-preflight-nvml.
func TestShimWithoutProbeSaysSo(t *testing.T) {
	r := runShim(t, map[string]string{"PREFLIGHT_NVML_LIBRARY": "libnvidia-ml.so.1", "PATH": t.TempDir()}, "--", "/bin/true")
	if r.code != 0 || len(r.records) != 1 {
		t.Fatalf("exit %d, %d records; stderr:\n%s", r.code, len(r.records), r.stderr)
	}
	status, message := findingOf(r.records[0], "nvml")
	if status != "info" || !strings.Contains(message, "built without the NVML probe") || strings.Contains(message, "memfd_noexec") {
		t.Errorf("nvml finding %s %q, want info naming the missing embedded probe", status, message)
	}
}

// A flag set holding only the flags its command line names parses that
// line as the set of every flag would: the same values, the same command,
// the same error.
func TestFlagsNamedParseAsEveryFlag(t *testing.T) {
	for _, args := range [][]string{
		{"--policy=warn", "--", "python", "-c", "x"},
		{"--policy", "warn", "--root", "/r", "python", "--policy=strict"},
		{"-policy", "-warn", "--", "sh"},
		{"--supervise", "--root=/r", "--", "sh"},
		{"--supervise=false", "sh", "-c", "--root"},
		{"--polcy=warn", "--", "sh"},
		{"--root=/r", "-h"},
		{"--json", "--policy=warn"},
		{"-", "--policy=warn"},
		{"--", "--policy=warn"},
		{"--root"},
		{"sh"},
	} {
		parse := func(fs *flag.FlagSet, overrides map[string]string) string {
			err := fs.Parse(args)
			return fmt.Sprintf("%v %q %v", overrides, fs.Args(), err)
		}
		all := map[string]string{}
		full := flag.NewFlagSet("gpu-preflight", flag.ContinueOnError)
		full.SetOutput(io.Discard)
		addConfigFlags(full, app.Settings(), all, nil)
		want := parse(full, all)

		named := map[string]string{}
		got := parse(newFlagSet("gpu-preflight", named, args), named)
		if got != want {
			t.Errorf("%q: parsed as %s, with every flag as %s", args, got, want)
		}
	}
	if got := flagsNamed([]string{"--root=/r", "-policy", "x", "--", "--json"}, app.Settings()); !slices.Equal(got, []string{"root", "policy"}) {
		t.Errorf("flagsNamed = %q, want root and policy", got)
	}
}
