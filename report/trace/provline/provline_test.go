package provline_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report/trace/provline"
	"github.com/gpu-preflight/gpu-preflight/test/tracetest"
)

func project(t *testing.T, b []byte) provline.Run {
	t.Helper()
	r, ok := provline.Project(b)
	if !ok {
		t.Fatalf("not a record: %.300s", b)
	}
	return r
}

func sample() []byte {
	rec := tracetest.Record(tracetest.Run{RunID: tracetest.RunID(7), At: time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC),
		Node: "gpu-node-07", Job: "llm", Rank: 3, Driver: "535.161.08", DriverCUDA: "12.2",
		Digest: "sha256:" + strings.Repeat("a", 64), Ref: "registry.example/ml/train:2.4", Exit: tracetest.Exit(1)})
	b, _ := json.Marshal(rec)
	return b
}

// hostile is a record at every limit a real one can reach, and beyond:
// values of 4 KiB everywhere, 1 000 argv elements, 8 GPUs of different
// models, 20 frameworks, 40 checks, 512 tuning variables.
func hostile() []byte {
	long := func(s string) string { return s + strings.Repeat("\x01é\"x", 1024) }
	var gpus, fws, checks []any
	for i := range 8 {
		gpus = append(gpus, map[string]any{"index": i, "name": long(fmt.Sprint("GPU ", i)), "brand": long("b"),
			"computeCapability": long("9"), "migMode": long("m"), "persistenceMode": long("p")})
	}
	for i := range 20 {
		fws = append(fws, map[string]any{"name": long(fmt.Sprint("fw", i)), "version": long("v"), "cudaVersion": long("c"),
			"cudnnVersion": long("d"), "build": long("b"), "archs": []string{long("sm_80"), long("sm_90")}})
	}
	var blocking []string
	for i := range 40 {
		checks = append(checks, map[string]any{"id": long(fmt.Sprint("check", i)), "status": long("error")})
		blocking = append(blocking, long(fmt.Sprint("check", i)))
	}
	env := map[string]string{}
	for i := range 512 {
		env[fmt.Sprintf("NCCL_%0200d", i)] = long("v")
	}
	argv := make([]string, 1000)
	for i := range argv {
		argv[i] = long("arg")
	}
	orch := map[string]any{"jobId": long("j"), "jobIdSource": long("s"),
		"kubernetes": map[string]any{"namespace": long("n"), "podName": long("p"), "nodeName": long("n"), "completionIndex": long("1")},
		"slurm":      map[string]any{"nodeName": long("n"), "procId": long("1")},
		"torchrun":   map[string]any{"rank": long("1")}, "paddle": map[string]any{"trainerId": long("1")},
		"kubeflow": map[string]any{"jobName": long("k")}}
	rec := map[string]any{
		"schemaVersion": "1", "runId": long("r"), "startedAt": "2026-11-24T08:00:00.000000000Z",
		"tool": map[string]any{"version": long("v")},
		"host": map[string]any{"hostname": long("h"), "kernel": long("k"),
			"driver": map[string]any{"version": long("5"), "cudaVersion": long("1"), "openKernelModule": true, "branch": map[string]any{"name": long("R")}},
			"gpus":   gpus, "cuda": map[string]any{"mode": long("m"), "outcome": long("o"), "driverApiVersion": 12040},
			"transport": map[string]any{"prediction": map[string]any{"network": long("IB"), "linkLayer": long("InfiniBand"),
				"devices": []string{long("mlx5_1:1"), long("mlx5_0:1")}}}},
		"image": map[string]any{"cudaVersion": long("1"), "cudaVersionFull": long("1"), "requireDisabled": true,
			"requirements": []any{map[string]any{"var": long("NVIDIA_REQUIRE_CUDA"), "value": long("cuda>=12")}, map[string]any{"var": long("B"), "value": long("c")}},
			"cudnnVersion": long("9"), "ncclVersion": long("2"), "tensorrtVersion": long("8"),
			"compat":     []any{map[string]any{"driverVersion": long("5")}, map[string]any{"driverVersion": long("6")}},
			"frameworks": fws, "ref": long("r"), "digest": long("sha256:"), "revision": long("x")},
		"checks":       checks,
		"decision":     map[string]any{"policy": long("fail"), "action": long("abort"), "exitCode": 78, "nodeFault": true, "blocking": blocking},
		"command":      map[string]any{"argv": argv, "argvSha256": long("a"), "argvRecord": long("full"), "argvDropped": 5},
		"orchestrator": orch, "env": env,
		"outcome": map[string]any{"exitCode": 127, "signal": 9, "notStarted": long("n")},
	}
	b, _ := json.Marshal(rec)
	return b
}

func TestAReducedRecordFitsItsBudgetWhateverTheRecordHolds(t *testing.T) {
	for name, b := range map[string][]byte{"sample": sample(), "hostile": hostile()} {
		r := project(t, b)
		enc := r.AppendJSON(nil)
		if len(enc) > provline.MaxRecordBytes {
			t.Errorf("%s: %d bytes, over %d:\n%s", name, len(enc), provline.MaxRecordBytes, enc)
		}
		if !json.Valid(enc) {
			t.Errorf("%s: not JSON: %s", name, enc)
		}
		t.Logf("%s: %d bytes", name, len(enc))
	}
}

func TestReducingAReducedRecordChangesNothing(t *testing.T) {
	for name, b := range map[string][]byte{"sample": sample(), "hostile": hostile()} {
		once := project(t, b)
		enc := once.AppendJSON(nil)
		twice := project(t, enc)
		if !reflect.DeepEqual(once, twice) {
			t.Errorf("%s: reduced again it changed:\nonce  %+v\ntwice %+v", name, once, twice)
		}
		if again := twice.AppendJSON(nil); string(again) != string(enc) {
			t.Errorf("%s: the encoding changed:\n%s\n%s", name, enc, again)
		}
	}
}

func TestAReducedRecordKeepsWhatTraceCompares(t *testing.T) {
	r := project(t, sample())
	if r.RunID != tracetest.RunID(7) || r.StartedAt != "2026-11-24T08:00:00.000000000Z" || r.Host.Hostname != "gpu-node-07" ||
		r.Host.Driver.Version != "535.161.08" || r.Host.Driver.Branch != "R535" || r.Image.Digest != "sha256:"+strings.Repeat("a", 64) {
		t.Errorf("identity and driver: %+v", r)
	}
	if len(r.Host.GPUs) != 1 || r.Host.GPUs[0].Count != 8 || r.Host.GPUs[0].Name != "NVIDIA H100 80GB HBM3" {
		t.Errorf("eight equal GPUs are one run of 8: %+v", r.Host.GPUs)
	}
	if r.Orchestrator.JobID != "llm" || r.Orchestrator.TorchrunRank != "3" || r.Orchestrator.NodeName != "gpu-node-07" ||
		r.Outcome == nil || r.Outcome.ExitCode != 1 || r.NotJob() {
		t.Errorf("job, rank, node, outcome: %+v %+v", r.Orchestrator, r.Outcome)
	}
	if len(r.Env) != 2 || r.Env[0].Name != "CUDA_VERSION" || r.Env[1].Name != "NCCL_DEBUG" {
		t.Errorf("env keeps the tuning variables, sorted: %+v", r.Env)
	}
}

func TestALongValueKeepsItsStartAndTellsValuesApart(t *testing.T) {
	a := provline.Cap([]byte(strings.Repeat("a", 200)+"1"), false, [32]byte{}, 64)
	b := provline.Cap([]byte(strings.Repeat("a", 200)+"2"), false, [32]byte{}, 64)
	if a == b || len(a) > 64 || !strings.HasPrefix(a, "aaaa") || !strings.Contains(a, "…") {
		t.Errorf("cut values %q and %q", a, b)
	}
	if s := provline.Cap([]byte("short"), false, [32]byte{}, 64); s != "short" {
		t.Errorf("a short value changed: %q", s)
	}
}

// FuzzProject: whatever the input, a reduced record fits its budget and
// reduces to itself.
func FuzzProject(f *testing.F) {
	f.Add([]byte(`{"schemaVersion":"1","runId":"r","host":{"gpus":[{"name":"a"},{"name":"a"}]}}`))
	for _, r := range tracetest.SmallFleet()[18:21] {
		rec, _ := json.Marshal(tracetest.Record(r))
		f.Add(rec)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := provline.Project(b)
		if !ok {
			return
		}
		enc := r.AppendJSON(nil)
		if len(enc) > provline.MaxRecordBytes || !json.Valid(enc) {
			t.Fatalf("%d bytes, valid %v: %s", len(enc), json.Valid(enc), enc)
		}
		again, ok := provline.Project(enc)
		if !ok || !reflect.DeepEqual(r, again) {
			t.Fatalf("reduced again it changed:\n%+v\n%+v", r, again)
		}
	})
}
