package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

func TestNewRecordsFactsFindingsAndDecision(t *testing.T) {
	r := report.New(reporttest.Inputs())
	if r.SchemaVersion != "1" {
		t.Errorf("schemaVersion = %q", r.SchemaVersion)
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(r.RunID) {
		t.Errorf("runId %q is not 128 bits of hex", r.RunID)
	}
	if want := "2026-11-29T15:31:42.123456789Z"; r.StartedAt != want {
		t.Errorf("startedAt = %q, want %q (UTC, nine digits)", r.StartedAt, want)
	}
	if r.Host.Driver.Version != "515.65.01" || r.Host.Driver.CUDAVersion != "11.7" || r.Host.Driver.Source != "procfs" {
		t.Errorf("driver = %+v", r.Host.Driver)
	}
	if len(r.Host.GPUs) != 2 || r.Host.GPUs[0].ComputeCapability != "8.0" || r.Host.GPUs[1].UUID != "GPU-1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718" {
		t.Errorf("gpus = %+v", r.Host.GPUs)
	}
	if r.Image.CUDAVersion != "12.2" || r.Image.CuDNNVersion != "8.9.7" || r.Image.NCCLVersion != "2.18.5" {
		t.Errorf("image stack = %+v", r.Image)
	}
	if len(r.Image.Requirements) != 1 || r.Image.Requirements[0].Var != "NVIDIA_REQUIRE_CUDA" {
		t.Errorf("requirements = %+v", r.Image.Requirements)
	}
	if len(r.Image.Frameworks) != 2 || r.Image.Frameworks[1].Name != "paddlepaddle" {
		t.Errorf("frameworks = %+v", r.Image.Frameworks)
	}
	wantDigest := "sha256:4f1c2d1b7f8e3a9c0d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4"
	if r.Image.Digest != wantDigest || r.Image.Revision != "9c1e5d2" || r.Image.IdentitySource != "env" {
		t.Errorf("identity = ref %q digest %q revision %q from %q", r.Image.Ref, r.Image.Digest, r.Image.Revision, r.Image.IdentitySource)
	}
	if r.Image.Source != "https://[redacted]@gitlab.example/ml/train.git" {
		t.Errorf("image source = %q", r.Image.Source)
	}
	if len(r.Checks) != len(reporttest.Findings) || r.Checks[1].Status != "error" || r.Checks[1].Remedy == "" {
		t.Errorf("checks = %+v", r.Checks)
	}
	if d := r.Decision; d.Policy != "fail" || d.Action != "abort" || d.ExitCode != 78 || d.NodeFault || !slices.Equal(d.Blocking, []string{"cuda-requirement"}) {
		t.Errorf("decision = %+v", r.Decision)
	}
	if r.Command.Cwd != "/workspace" || r.Command.UID != 1000 || r.Command.GID != 1000 {
		t.Errorf("command = %+v", r.Command)
	}
	wantArgv := []string{"python", "train.py", "--password=[redacted]", "--token", "[redacted]", "PASSWORD=[redacted]",
		"--data", "https://[redacted]@host/x", "--lr", "0.1"}
	if !reflect.DeepEqual(r.Command.Argv, wantArgv) {
		t.Errorf("argv = %q, want %q", r.Command.Argv, wantArgv)
	}
	if r.Orchestrator.JobID != "kubeflow:ml/bert" || r.Orchestrator.Kubernetes.PodName != "bert-worker-1" || r.Orchestrator.Torchrun.Rank != "1" {
		t.Errorf("orchestrator = %+v", r.Orchestrator)
	}
	if _, ok := r.Env["HOME"]; ok {
		t.Error("HOME is not allow-listed but was recorded")
	}
	if r.Env["PREFLIGHT_TOKEN"] != "[redacted]" || r.Env["NVIDIA_VISIBLE_DEVICES"] != "all" {
		t.Errorf("env = %v", r.Env)
	}
	if r.Outcome != nil {
		t.Errorf("outcome = %+v, want null outside supervise mode", r.Outcome)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"name":"paddlepaddle","version":"2.6.1","cudaVersion":"12.0","cudnnVersion":"","build":"","archs":[]`)) {
		t.Errorf("paddlepaddle's archs are not [] when unknown: %s", b)
	}
	schematest.Validate(t, b)
}

func TestNewDoesNotAliasItsInputs(t *testing.T) {
	in := reporttest.Inputs()
	in.Facts.Container.Frameworks[0].Archs = []string{"sm_80"}
	r := report.New(in)
	in.Facts.Container.Frameworks[0].Archs[0] = "changed"
	in.Facts.Host.DeviceNodes[0] = "changed"
	if r.Image.Frameworks[0].Archs[0] != "sm_80" || r.Host.DeviceNodes[0] != "/dev/nvidiactl" {
		t.Error("the record shares slices with its inputs")
	}
}

// docs/schema/README.md: fields are present and empty when unknown.
func TestEmptyRecordHasEveryFieldPresent(t *testing.T) {
	r := report.New(report.Inputs{Now: reporttest.Time, Decision: decision.Decision{Policy: "warn", Action: decision.Exec}})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, b) // the schema requires every field
	for _, key := range []string{`"gpus":[]`, `"checks":[]`, `"argv":[]`, `"frameworks":[]`, `"requirements":[]`,
		`"env":{}`, `"outcome":null`, `"digest":""`, `"jobId":""`, `"detected":[]`, `"deviceNodes":[]`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("empty record lacks %s: %s", key, b)
		}
	}
}

func TestRunIDsAreUnique(t *testing.T) {
	seen := make(map[string]bool)
	for i := 0; i < 10000; i++ {
		id := report.NewRunID()
		if seen[id] {
			t.Fatalf("run id %s repeated after %d ids", id, i)
		}
		seen[id] = true
	}
}

func TestFinishRecordsOutcome(t *testing.T) {
	r := report.New(reporttest.Inputs())
	end := reporttest.Time.Add(90*time.Second + 500*time.Millisecond)
	if err := r.Finish(137, 9, end); err != nil {
		t.Fatal(err)
	}
	want := report.Outcome{ExitCode: 137, Signal: 9, FinishedAt: "2026-11-29T15:33:12.623456789Z", DurationSeconds: 90.5}
	if *r.Outcome != want {
		t.Errorf("outcome = %+v, want %+v", *r.Outcome, want)
	}
	b, _ := json.Marshal(r)
	schematest.Validate(t, b)

	bad := report.Record{StartedAt: "yesterday"}
	if err := bad.Finish(0, 0, end); err == nil || !strings.Contains(err.Error(), "startedAt") {
		t.Errorf("Finish on a bad startedAt: %v", err)
	}
}

func TestRecordKeepsAtMost512VariablesAndCountsTheRest(t *testing.T) {
	var environ []string
	for i := range report.MaxRecordEnv + 88 {
		environ = append(environ, fmt.Sprintf("NVIDIA_X%04d=v", i))
	}
	environ = append(environ, "CUDA_VERSION="+strings.Repeat("9", 10_000))
	r := report.New(report.Inputs{Environ: envvars.Parse(environ)})
	if len(r.Env) != report.MaxRecordEnv || r.EnvDropped != 89 {
		t.Fatalf("env holds %d names, envDropped %d; want %d and 89", len(r.Env), r.EnvDropped, report.MaxRecordEnv)
	}
	if _, ok := r.Env["CUDA_VERSION"]; !ok {
		t.Fatal("CUDA_VERSION, first in byte order, was dropped")
	}
	if v := r.Env["CUDA_VERSION"]; len(v) > 4096 || !strings.Contains(v, "truncated 10000 bytes") {
		t.Errorf("a 10 000-byte value is kept as %d bytes ending %q", len(v), v[len(v)-30:])
	}
	if small := report.New(report.Inputs{Environ: envvars.Parse(environ[:3])}); small.EnvDropped != 0 || len(small.Env) != 3 {
		t.Errorf("three variables: env %v, envDropped %d", small.Env, small.EnvDropped)
	}
}

func TestRecordCutsOrchestratorValues(t *testing.T) {
	var in report.Inputs
	in.Facts.Orchestrator.Slurm.TasksPerNode = strings.Repeat("8(x2),", 1<<20/6)
	r := report.New(in)
	if v := r.Orchestrator.Slurm.TasksPerNode; len(v) > 4096 || !strings.Contains(v, "truncated") {
		t.Errorf("a 1 MiB SLURM_TASKS_PER_NODE is kept as %d bytes", len(v))
	}
}
