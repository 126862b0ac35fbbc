//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

// abortCode is PREFLIGHT_EXIT_CODE's default, nodeFaultCode
// PREFLIGHT_NODE_FAULT_EXIT_CODE's.
const (
	abortCode     = 78
	nodeFaultCode = 75
)

// logMessage returns the shim's JSON log lines for check id.
func logLines(stderr, id string) string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, `"check":"`+id+`"`) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// Issue 3: 8x H100 (brand Nvidia) with the CUDA 12.8 image's requirement.
// On 545.23.08 (CUDA 12.3) no term holds: abort, naming the driver CUDA
// 12.8 needs and the branches the image accepts instead.
func TestShimAbortsH100On545WithCUDA128Image(t *testing.T) {
	env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("545.23.08", 12030)),
		"NVIDIA_REQUIRE_CUDA="+requireCUDA(t, "12.8.1"))
	r := run(t, 30*time.Second, env, shimBin(t), "--", "true")
	if r.code != abortCode {
		t.Fatalf("exit %d, want %d\nstderr: %s", r.code, abortCode, r.stderr)
	}
	msg := logLines(r.stderr, "cuda-requirement")
	for _, want := range []string{`"status":"error"`, "545.23.08", "570.26", "470", "535", "550", "560", "565"} {
		if !strings.Contains(msg, want) {
			t.Errorf("cuda-requirement log does not name %q:\n%s", want, msg)
		}
	}
	term := envValue(env, "PREFLIGHT_TERMINATION_LOG")
	if data, err := os.ReadFile(term); err != nil || !strings.Contains(string(data), "570.26") {
		t.Errorf("termination message %q (%v) does not name 570.26", data, err)
	}
}

func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// On 550.54.15 the image's brand=nvidia,driver>=550,driver<551 term holds
// (forward compatibility), so the job runs; explain shows that term, and
// the record carries NVML's 8 GPUs with compute capability 9.0.
func TestShimRunsH100On550WithCUDA128Image(t *testing.T) {
	env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("550.54.15", 12040)),
		"NVIDIA_REQUIRE_CUDA="+requireCUDA(t, "12.8.1"))
	r := run(t, 30*time.Second, env, shimBin(t), "--", "sh", "-c", "echo ran")
	if r.code != 0 || r.stdout != "ran\n" {
		t.Fatalf("exit %d, stdout %q; want the command to run\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	e := run(t, 30*time.Second, env, shimBin(t), "explain")
	if e.code != 0 || !strings.Contains(e.stdout, "brand=nvidia,driver>=550,driver<551") || !strings.Contains(e.stdout, "held") {
		t.Errorf("explain (exit %d) does not show the brand=nvidia,driver>=550,driver<551 term holding:\n%s", e.code, e.stdout)
	}

	rec, c := checkJSON(t, env)
	if c.code != 0 || rec.Decision.Action == "abort" {
		t.Errorf("check exit %d, decision %+v", c.code, rec.Decision)
	}
	if len(rec.Host.GPUs) != 8 {
		t.Fatalf("host.gpus has %d entries, want 8", len(rec.Host.GPUs))
	}
	for i, g := range rec.Host.GPUs {
		if g.ComputeCapability != "9.0" || g.Brand != "Nvidia" || g.Index != i || !strings.HasPrefix(g.UUID, "GPU-") || g.PCIBusID == "" {
			t.Errorf("host.gpus[%d] = %+v", i, g)
		}
	}
	d := rec.Host.Driver
	if d.Version != "550.54.15" || d.CUDAVersion != "12.4" || d.CUDAVersionSource != "nvml" || d.Source != "nvml-memfd" {
		t.Errorf("host.driver = %+v", d)
	}
	if status, _ := finding(t, rec, "nvml"); status != "pass" {
		t.Errorf("nvml check %s", status)
	}
	if status, msg := finding(t, rec, "cuda-requirement"); status != "pass" {
		t.Errorf("cuda-requirement %s: %s", status, msg)
	}
}

// 2x RTX 4090 (GeForceRTX) on 535.129.03 (CUDA 12.2): the 12.8 image lists
// no GeForce term, so it aborts; the 12.2 image's cuda>=12.2 holds.
func TestShimRTX4090On535(t *testing.T) {
	s := fakenvml.RTX4090x2()
	tests := []struct {
		image string
		code  int
	}{
		{"12.8.1", abortCode},
		{"12.2.2", 0},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			env := shimEnv(t, fakeLibrary(t), &s, "NVIDIA_REQUIRE_CUDA="+requireCUDA(t, tt.image))
			r := run(t, 30*time.Second, env, shimBin(t), "--", "true")
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", r.code, tt.code, r.stderr)
			}
			rec, _ := checkJSON(t, env)
			if len(rec.Host.GPUs) != 2 || rec.Host.GPUs[0].Brand != "GeForceRTX" || rec.Host.GPUs[0].ComputeCapability != "8.9" {
				t.Errorf("host.gpus = %+v", rec.Host.GPUs)
			}
			// Persistence mode is off in this scenario: a warning, not an abort.
			if status, msg := finding(t, rec, "gpu-health"); status != "warn" || !strings.Contains(msg, "nvidia-smi -i 0 -pm 1") {
				t.Errorf("gpu-health %s: %s", status, msg)
			}
		})
	}
}

// 4x V100 (brand Tesla) on 470.57.02 (CUDA 11.4) with the 11.8 image: only
// its brand=tesla,driver>=470,driver<471 term can hold, and does.
func TestShimRunsV100On470WithCUDA118Image(t *testing.T) {
	env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.V100x4()), "NVIDIA_REQUIRE_CUDA="+requireCUDA(t, "11.8.0"))
	rec, r := checkJSON(t, env)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	if len(rec.Host.GPUs) != 4 || rec.Host.GPUs[3].Brand != "Tesla" || rec.Host.GPUs[3].ComputeCapability != "7.0" {
		t.Errorf("host.gpus = %+v", rec.Host.GPUs)
	}
}

// A hung nvmlInit with PREFLIGHT_NVML_TIMEOUT=2s: the run ends soon after
// it (withinDeadline), the nvml check is an error, the default
// fail policy aborts with the node-fault code, and no probe process is
// left behind.
func TestShimHangingNVMLIsBoundedAndLeavesNothing(t *testing.T) {
	tag := marker(t)
	env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.Hang()), "PREFLIGHT_NVML_TIMEOUT=2s", tag)
	ref := reference(t)
	r := run(t, time.Minute, env, shimBin(t), "--", "true")
	withinDeadline(t, "the run", r.elapsed, 2*time.Second, ref)
	if r.code != nodeFaultCode {
		t.Errorf("exit %d, want %d (a node fault) under the fail policy", r.code, nodeFaultCode)
	}
	if msg := logLines(r.stderr, "nvml"); !strings.Contains(msg, `"status":"error"`) || !strings.Contains(msg, "2s") {
		t.Errorf("nvml check log:\n%s", msg)
	}
	if left := processesWith(tag); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}

	rec, c := checkJSON(t, env)
	if status, _ := finding(t, rec, "nvml"); status != "error" || rec.Host.NVML.Outcome != "timeout" || c.code != nodeFaultCode {
		t.Errorf("nvml %s, outcome %q, exit %d", status, rec.Host.NVML.Outcome, c.code)
	}
	if left := processesWith(tag); len(left) > 0 {
		t.Errorf("processes left behind after check: %v", left)
	}

	// Under warn the job starts anyway, still within the bound.
	w := run(t, time.Minute, append(env, "PREFLIGHT_POLICY=warn"), shimBin(t), "--", "sh", "-c", "echo ran")
	if w.code != 0 || w.stdout != "ran\n" {
		t.Errorf("warn policy: exit %d, stdout %q after %v", w.code, w.stdout, w.elapsed)
	}
	withinDeadline(t, "the run under the warn policy", w.elapsed, 2*time.Second, ref)
}

// NVML errors on single fields leave those fields empty and the run going;
// the NVML strings themselves are checked on the probe's document
// (TestProbeBinaryOnFakeScenarios), since the record keeps only values.
func TestShimRecordsFieldErrors(t *testing.T) {
	rec, r := checkJSON(t, shimEnv(t, fakeLibrary(t), ptr(fakenvml.FieldErrors())))
	if r.code != 0 || rec.Host.NVML.Outcome != "ok" || len(rec.Host.GPUs) != 3 {
		t.Fatalf("exit %d, nvml %+v, %d GPUs\nstderr: %s", r.code, rec.Host.NVML, len(rec.Host.GPUs), r.stderr)
	}
	if rec.Host.Driver.CUDAVersion != "12.4" {
		t.Errorf("CUDA %q: want 12.4 from the v1 call when v2 fails", rec.Host.Driver.CUDAVersion)
	}
	g := rec.Host.GPUs
	if g[0].UUID != "" || g[0].Name == "" || g[1].PersistenceMode != "" || g[1].UUID == "" || g[2].Index != 2 || g[2].ComputeCapability != "" {
		t.Errorf("host.gpus = %+v", g)
	}
	// NVML's own words for what it could not answer reach the record.
	if g[0].Errors["uuid"] != "Insufficient Permissions" || g[1].Errors["persistenceMode"] != "GPU is lost" {
		t.Errorf("record GPU errors: %v %v", g[0].Errors, g[1].Errors)
	}
}

// Debian's real libnvidia-ml1: NVML answers "Driver Not Loaded"; with no
// other driver evidence the nvml check is info and the job proceeds under
// the default policy.
func TestShimOnRealLibraryReportsDriverNotLoaded(t *testing.T) {
	env := shimEnv(t, realLibrary(t), nil)
	rec, r := checkJSON(t, env)
	if rec.Host.NVML.Outcome != "driver-not-loaded" || rec.Host.NVML.Error != "Driver Not Loaded" {
		t.Fatalf("host.nvml = %+v\nstderr: %s", rec.Host.NVML, r.stderr)
	}
	if status, msg := finding(t, rec, "nvml"); status != "info" || !strings.Contains(msg, "Driver Not Loaded") {
		t.Errorf("nvml check %s: %s", status, msg)
	}
	if r.code != 0 {
		t.Errorf("check exit %d under the fail policy, want 0", r.code)
	}
	x := run(t, 30*time.Second, env, shimBin(t), "--", "sh", "-c", "echo ran")
	if x.code != 0 || x.stdout != "ran\n" {
		t.Errorf("exit %d, stdout %q: the job should start", x.code, x.stdout)
	}
}

// Without an embedded probe (a plain `go build`), the shim falls back to
// the probe file beside it, and the record says so.
func TestShimFallsBackToProbeBesideIt(t *testing.T) {
	dir := t.TempDir()
	shim := filepath.Join(dir, "gpu-preflight")
	build := exec.Command("go", "build", "-o", shim, "github.com/gpu-preflight/gpu-preflight/cmd/gpu-preflight")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the shim without the embedprobe tag: %v\n%s", err, out)
	}
	beside := filepath.Join(dir, "gpu-preflight-nvml")
	data, err := os.ReadFile(probeBin(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(beside, data, 0o755); err != nil {
		t.Fatal(err)
	}
	env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.V100x4()))
	r := run(t, 30*time.Second, env, shim, "check", "--json")
	var rec record
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
		t.Fatalf("check --json: %v\n%s", err, r.stderr)
	}
	schematest.Validate(t, []byte(r.stdout))
	if rec.Host.NVML.Via != "file:"+beside || rec.Host.Driver.Source != "nvml-file" || len(rec.Host.GPUs) != 4 {
		t.Errorf("nvml %+v, driver source %q, %d GPUs; want the probe beside the shim", rec.Host.NVML, rec.Host.Driver.Source, len(rec.Host.GPUs))
	}

	// Neither embedded nor beside nor on PATH: procfs only, and the record says why.
	if err := os.Remove(beside); err != nil {
		t.Fatal(err)
	}
	r = run(t, 30*time.Second, env, shim, "check", "--json")
	rec = record{}
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
		t.Fatalf("check --json: %v\n%s", err, r.stderr)
	}
	schematest.Validate(t, []byte(r.stdout))
	if rec.Host.NVML.Outcome != "unavailable" || !strings.Contains(rec.Host.NVML.Error, "without the embedded probe") {
		t.Errorf("nvml %+v, want unavailable", rec.Host.NVML)
	}
}

// Four A100s with what gpu-health looks for: one warning naming each GPU
// and its remedy; under the default policy the job still runs.
func TestShimWarnsAboutUnhealthyGPUs(t *testing.T) {
	rec, r := checkJSON(t, shimEnv(t, fakeLibrary(t), ptr(fakenvml.Unhealthy())))
	if r.code != 0 {
		t.Fatalf("exit %d under the fail policy\nstderr: %s", r.code, r.stderr)
	}
	status, msg := finding(t, rec, "gpu-health")
	if status != "warn" {
		t.Fatalf("gpu-health %s: %s", status, msg)
	}
	for _, want := range []string{"GPU 0", "MIG mode but no MIG device", "GPU 1", "3 uncorrected ECC",
		"GPU 2", "retired memory pages", "GPU 3", "persistence mode off", "nvidia-smi -i 3 -pm 1"} {
		if !strings.Contains(msg, want) {
			t.Errorf("gpu-health does not say %q: %s", want, msg)
		}
	}
}

// The node-fault exit code tells a sick node from an image the driver
// cannot run: unhealthy GPUs under strict exit 75 (or
// PREFLIGHT_NODE_FAULT_EXIT_CODE), an image for a newer driver 78, and
// both at once the node fault's code (policy.Decide says why).
func TestShimNodeFaultExitCodes(t *testing.T) {
	unhealthy := ptr(fakenvml.Unhealthy())
	tests := []struct {
		name     string
		scenario *fakenvml.Scenario
		env      []string
		code     int
	}{
		{"unhealthy GPUs under strict", unhealthy, []string{"PREFLIGHT_POLICY=strict"}, nodeFaultCode},
		{"unhealthy GPUs under strict, code 138", unhealthy,
			[]string{"PREFLIGHT_POLICY=strict", "PREFLIGHT_NODE_FAULT_EXIT_CODE=138"}, 138},
		{"unhealthy GPUs under fail run", unhealthy, nil, 0},
		{"an image for a newer driver", ptr(fakenvml.H100x8("545.23.08", 12030)),
			[]string{"NVIDIA_REQUIRE_CUDA=" + requireCUDA(t, "12.8.1")}, abortCode},
		{"both: the node fault wins", unhealthy,
			[]string{"PREFLIGHT_POLICY=strict", "PREFLIGHT_MIN_GPUS=8"}, nodeFaultCode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := shimEnv(t, fakeLibrary(t), tt.scenario, tt.env...)
			r := run(t, 30*time.Second, env, shimBin(t), "--", "true")
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", r.code, tt.code, r.stderr)
			}
			rec, _ := checkJSON(t, env)
			if want := tt.code == nodeFaultCode || tt.code == 138; rec.Decision.NodeFault != want {
				t.Errorf("decision.nodeFault %v, want %v", rec.Decision.NodeFault, want)
			}
		})
	}
}

// What the probe writes on stderr reaches the shim's log (at debug level):
// here the fake library's complaint that no scenario was given, which also
// makes nvmlInit fail ("Unknown Error", a warning, not an abort).
func TestShimLogsProbeStderr(t *testing.T) {
	env := shimEnv(t, fakeLibrary(t), nil, "PREFLIGHT_LOG_LEVEL=debug")
	rec, r := checkJSON(t, env)
	if rec.Host.NVML.Outcome != "init-failed" || rec.Host.NVML.Error != "Unknown Error" || r.code != 0 {
		t.Fatalf("nvml %+v, exit %d", rec.Host.NVML, r.code)
	}
	if !strings.Contains(r.stderr, "FAKE_NVML_SCENARIO is not set") {
		t.Errorf("the probe's stderr is not in the log:\n%s", r.stderr)
	}
	if status, _ := finding(t, rec, "nvml"); status != "warn" {
		t.Errorf("nvml check %s, want warn", status)
	}
}
