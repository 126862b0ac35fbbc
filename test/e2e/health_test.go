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
	"github.com/gpu-preflight/gpu-preflight/test/procdriver"
)

// nodeHealthIDs are the checks of docs/node-health.md.
var nodeHealthIDs = []string{"row-remap", "nvlink-fabric", "gpu-in-use", "gpu-degraded", "driver-library", "ranks-per-node"}

// Healthy nodes, as NVIDIA documents their GPUs, and PCIe cards without
// NVLink or fabric, give no node-health finding, and the job runs.
func TestHealthyNodesGiveNoNodeHealthFinding(t *testing.T) {
	for _, s := range []fakenvml.Scenario{fakenvml.HealthyA100x8(), fakenvml.HealthyH100x8(), fakenvml.HealthyB200x8(),
		fakenvml.HealthyGB200x4(), fakenvml.L40Sx4()} {
		t.Run(s.Name, func(t *testing.T) {
			rec, r := checkJSON(t, shimEnv(t, fakeLibrary(t), &s))
			if r.code != 0 || rec.Decision.Action != "exec" {
				t.Errorf("exit %d, decision %+v\nstderr: %s", r.code, rec.Decision, r.stderr)
			}
			for _, id := range nodeHealthIDs {
				if status, msg := finding(t, rec, id); status != "pass" && status != "skip" {
					t.Errorf("%s %s: %s", id, status, msg)
				}
			}
		})
	}
}

// Each fault, on its scenario, gives its finding and, when it blocks, the
// node-fault code with the remedy in the termination message. Warnings
// let the job run, and block with the node-fault code under strict.
func TestNodeHealthFaultsEndToEnd(t *testing.T) {
	tests := []struct {
		s      fakenvml.Scenario
		id     string
		status string
		says   []string
	}{
		{fakenvml.RemapPending(), "row-remap", "error", []string{"GPU 3", "pending", "nvidia-smi -r -i 3", "reboot"}},
		{fakenvml.RemapFailed(), "row-remap", "error", []string{"GPU 5", "512", "drain the node"}},
		{fakenvml.FabricNotStarted(), "nvlink-fabric", "error", []string{"not-started", "802", "Fabric Manager"}},
		{fakenvml.FabricFailed(), "nvlink-fabric", "error", []string{"GPU 2", "Insufficient Resources"}},
		{fakenvml.FabricDegraded(), "nvlink-fabric", "warn", []string{"GPU 1", "bandwidth degraded"}},
		{fakenvml.GPUBusy(), "gpu-in-use", "error", []string{"GPU 2", "PID 48213 (32768 MiB)", "another node"}},
		{fakenvml.ComputeProhibited(), "gpu-in-use", "error", []string{"GPU 0", "prohibited", "-c DEFAULT"}},
		{fakenvml.NVLinkDown(), "gpu-degraded", "warn", []string{"GPU 6", "14 NVLink(s) active", "3, 7, 11, 15", "7 peer(s)", "up to 18"}},
		{fakenvml.PCIeNarrow(), "gpu-degraded", "warn", []string{"GPU 1", "x8 of the x16", "lspci -vv"}},
		{fakenvml.ClocksSlowdown(), "gpu-degraded", "warn", []string{"GPU 4", "hw-slowdown, hw-thermal-slowdown"}},
	}
	for _, tt := range tests {
		t.Run(tt.s.Name, func(t *testing.T) {
			env := shimEnv(t, fakeLibrary(t), &tt.s)
			rec, _ := checkJSON(t, env)
			status, text := finding(t, rec, tt.id)
			if status != tt.status {
				t.Fatalf("%s %s, want %s: %s", tt.id, status, tt.status, text)
			}
			for _, want := range tt.says {
				if !strings.Contains(text, want) {
					t.Errorf("%s does not say %q: %s", tt.id, want, text)
				}
			}
			if tt.status == "warn" {
				if r := run(t, 30*time.Second, env, shimBin(t), "--", "sh", "-c", "echo ran"); r.code != 0 || r.stdout != "ran\n" {
					t.Errorf("a warning stopped the job: exit %d\nstderr: %s", r.code, r.stderr)
				}
				env = append(env, "PREFLIGHT_POLICY=strict")
			}
			r := run(t, 30*time.Second, env, shimBin(t), "--", "sh", "-c", "echo ran")
			if r.code != nodeFaultCode || r.stdout != "" {
				t.Errorf("exit %d, stdout %q; want the node-fault code %d before the command\nstderr: %s", r.code, r.stdout, nodeFaultCode, r.stderr)
			}
			if term, err := os.ReadFile(envValue(env, "PREFLIGHT_TERMINATION_LOG")); err != nil || !strings.Contains(string(term), tt.id+": ") {
				t.Errorf("termination message %q (%v) does not name %s", term, err, tt.id)
			}
		})
	}
}

// The case beside each fault, through the binary: which answers are
// faults (and their exit code under the fail policy), which are the
// server's design, and that an NVML error is said as info, neither pass
// nor fault (docs/node-health.md, "Scenarios").
func TestNodeHealthNeighbourCasesEndToEnd(t *testing.T) {
	tests := []struct {
		s      fakenvml.Scenario
		env    []string
		id     string
		status string
		code   int
		says   []string
	}{
		{fakenvml.HeldByAnotherContainer(), nil, "gpu-in-use", "error", nodeFaultCode, []string{"GPU 5", "40960 MiB", "no process of this PID namespace", "another node"}},
		{fakenvml.HeldByAnotherContainer(), []string{"CUDA_VISIBLE_DEVICES=0,1,2,3"}, "gpu-in-use", "pass", 0, nil},
		{fakenvml.ExclusiveIdle(), nil, "gpu-in-use", "pass", 0, nil},
		{fakenvml.ExclusiveBusy(), nil, "gpu-in-use", "error", nodeFaultCode, []string{"GPU 1", "PID 7741", "exclusive-process", "no second process"}},
		{fakenvml.H100PCIeBridged(), nil, "gpu-degraded", "pass", 0, nil},
		{fakenvml.H100PCIeBridged(), nil, "nvlink-fabric", "pass", 0, []string{"4 do not support it"}},
		{fakenvml.A100PCIe(), nil, "gpu-degraded", "pass", 0, nil},
		{fakenvml.H100Gen4Slots(), nil, "gpu-degraded", "info", 0, []string{"Gen4", "Gen5", "the server's slots"}},
		{fakenvml.H100OneGen4Link(), nil, "gpu-degraded", "warn", 0, []string{"GPU 7", "reaches Gen4", "reaches Gen5"}},
		{fakenvml.B200OneGen4Link(), nil, "gpu-degraded", "warn", 0, []string{"GPU 3", "reaches Gen4 where a peer", "reaches Gen5"}},
		{fakenvml.ClocksSoftware(), nil, "gpu-degraded", "pass", 0, nil},
		{fakenvml.ClocksPowerBrake(), nil, "gpu-degraded", "warn", 0, []string{"GPU 0", "hw-power-brake"}},
		{fakenvml.ClocksSWThermal(), nil, "gpu-degraded", "warn", 0, []string{"GPU 0", "sw-thermal"}},
		{fakenvml.FabricInProgress(), nil, "nvlink-fabric", "error", nodeFaultCode, []string{"GPU 0", "in-progress", "802"}},
		{fakenvml.FabricRouteUnhealthy(), nil, "nvlink-fabric", "warn", 0, []string{"GPU 3", "route unhealthy"}},
		{fakenvml.FabricInsufficientNVLinks(), nil, "nvlink-fabric", "warn", 0, []string{"GPU 3", "configuration"}},
		{fakenvml.RemapCorrectable(), nil, "row-remap", "pass", 0, nil},
		{fakenvml.RemapPendingAndFailed(), nil, "row-remap", "error", nodeFaultCode, []string{"GPU 4", "fail", "drain the node"}},
		{fakenvml.RemapMIG(), nil, "row-remap", "pass", -1, []string{"1 do not support it"}},
		{fakenvml.GPULost(), nil, "row-remap", "info", 0, []string{"GPU 6", "GPU is lost"}},
		{fakenvml.HealthUnknown(), nil, "nvlink-fabric", "info", 0, []string{"GPU 6", "Unknown Error"}},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSpace(tt.s.Name+"/"+tt.id+" "+strings.Join(tt.env, " ")), func(t *testing.T) {
			rec, r := checkJSON(t, shimEnv(t, fakeLibrary(t), &tt.s, tt.env...))
			status, text := finding(t, rec, tt.id)
			if status != tt.status || (tt.code >= 0 && r.code != tt.code) {
				t.Fatalf("%s %s, exit %d; want %s, exit %d: %s", tt.id, status, r.code, tt.status, tt.code, text)
			}
			for _, want := range tt.says {
				if !strings.Contains(text, want) {
					t.Errorf("%s does not say %q: %s", tt.id, want, text)
				}
			}
		})
	}
}

// A kernel module at one version and an NVML library at another: the
// library's file name and nvmlInit's own error say so. Bind-mounted, as
// the NVIDIA Container Toolkit injects the host's libraries, it is the
// node's (reboot, 75); a file of the image is the image's (78).
func TestDriverLibraryMismatchEndToEnd(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "libnvidia-ml.so.550.54.15")
	copyFile(t, fakeLibrary(t), lib)
	env := shimEnv(t, lib, ptr(fakenvml.LibraryMismatch()))
	writeProcDriver(t, env, "535.161.08")

	t.Run("shipped in the image", func(t *testing.T) {
		rec, r := checkJSON(t, env)
		status, text := finding(t, rec, "driver-library")
		if status != "error" || r.code != abortCode {
			t.Fatalf("driver-library %s, exit %d: %s", status, r.code, text)
		}
		for _, want := range []string{"kernel module is 535.161.08", "550.54.15", "Driver/library version mismatch", "file of the image", "remove the NVIDIA driver's user-space libraries"} {
			if !strings.Contains(text, want) {
				t.Errorf("does not say %q: %s", want, text)
			}
		}
	})

	t.Run("injected by the toolkit", func(t *testing.T) {
		target := filepath.Join(t.TempDir(), "libnvidia-ml.so.550.54.15")
		if err := os.WriteFile(target, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"--mount", "--propagation", "private"}
		if os.Geteuid() != 0 {
			args = append([]string{"--user", "--map-root-user"}, args...)
		}
		args = append(args, "sh", "-c", `mount --bind "$1" "$2" && exec "$3" check --json`, "sh", lib, target, shimBin(t))
		cmd := exec.Command("unshare", args...)
		cmd.Env = append(withoutVar(env, "PREFLIGHT_NVML_LIBRARY"), "PREFLIGHT_NVML_LIBRARY="+target)
		r := runCmd(t, cmd, 30*time.Second)
		var rec record
		if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
			t.Fatalf("exit %d, no record: %v\nstdout: %s\nstderr: %s", r.code, err, r.stdout, r.stderr)
		}
		status, text := finding(t, rec, "driver-library")
		if status != "error" || r.code != nodeFaultCode || !strings.Contains(text, "injected the host's driver libraries") || !strings.Contains(text, "reboot the node") {
			t.Fatalf("driver-library %s, exit %d (want %d): a bind-mounted library not taken for the toolkit's: %s", status, r.code, nodeFaultCode, text)
		}
	})
}

// Debian's real libnvidia-ml1 carries its driver version in its file
// name: against a kernel module of that version nothing differs, against
// a newer or an older one the image's mismatch is named with both versions.
func TestDriverLibraryOnDebiansRealLibrary(t *testing.T) {
	lib := realLibrary(t)
	file, err := filepath.EvalSymlinks(lib)
	if err != nil {
		t.Fatal(err)
	}
	version, ok := strings.CutPrefix(filepath.Base(file), "libnvidia-ml.so.")
	if !ok || strings.Count(version, ".") < 1 {
		t.Fatalf("%s carries no driver version in its name", file)
	}
	for _, tt := range []struct {
		module, status string
		code           int
	}{{version, "pass", 0}, {"550.54.15", "error", abortCode}, {"525.147.05", "error", abortCode}} {
		env := shimEnv(t, lib, nil)
		writeProcDriver(t, env, tt.module)
		rec, r := checkJSON(t, env)
		status, text := finding(t, rec, "driver-library")
		if status != tt.status || r.code != tt.code || rec.Host.NVML.Outcome != "driver-not-loaded" {
			t.Errorf("module %s: driver-library %s, exit %d, NVML %q: %s", tt.module, status, r.code, rec.Host.NVML.Outcome, text)
		}
		if tt.status == "error" && (!strings.Contains(text, version) || !strings.Contains(text, tt.module)) {
			t.Errorf("does not name both versions: %s", text)
		}
	}
}

// A launcher that starts more processes than the container sees GPUs
// stops the job with the mismatch code, before the command starts.
func TestRanksPerNodeEndToEnd(t *testing.T) {
	bin := t.TempDir()
	for _, name := range []string{"torchrun", "python3", "deepspeed", "accelerate"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\necho ran\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	torchrun, python := filepath.Join(bin, "torchrun"), filepath.Join(bin, "python3")
	// srun's step environment (Slurm's src/common/env.c, env_array_for_step).
	step := func(tasksPerNode, node string) []string {
		return []string{"SLURM_JOB_ID=7", "SLURM_STEP_ID=0", "SLURM_TASKS_PER_NODE=" + tasksPerNode,
			"SLURM_STEP_TASKS_PER_NODE=" + tasksPerNode, "SLURM_NODEID=" + node}
	}
	for _, tt := range []struct {
		name string
		argv []string
		env  []string
		code int
	}{
		{"torchrun --nproc-per-node=8 on 4 GPUs", []string{torchrun, "--standalone", "--nproc-per-node=8", "train.py"}, nil, abortCode},
		{"Kubeflow's PET_NPROC_PER_NODE=8 on 4 GPUs", []string{torchrun, "train.py"}, []string{"PET_NPROC_PER_NODE=8"}, abortCode},
		{"torchrun --nproc-per-node=4 on 4 GPUs", []string{torchrun, "--nproc-per-node=4", "train.py"}, nil, 0},
		{"torchrun --nproc-per-node=gpu counts the GPUs itself", []string{torchrun, "--nproc-per-node=gpu", "train.py"}, nil, 0},
		{"python -m torch.distributed.run --nproc_per_node 8 on 4 GPUs", []string{python, "-m", "torch.distributed.run", "--nproc_per_node", "8", "train.py"}, nil, abortCode},
		{"srun --ntasks-per-node=8 on 4 GPUs", []string{torchrun, "train.py"}, []string{"SLURM_JOB_ID=7", "SLURM_NTASKS_PER_NODE=8"}, abortCode},
		{"a torchrun worker with LOCAL_WORLD_SIZE=8 on 4 GPUs", []string{torchrun, "train.py"}, []string{"LOCAL_WORLD_SIZE=8", "WORLD_SIZE=16"}, abortCode},
		{"srun -N2 -n16: 8(x2) tasks on 4 GPUs", []string{python, "train.py"}, step("8(x2)", "1"), abortCode},
		{"srun -N2 -n8: 4(x2) tasks on 4 GPUs", []string{python, "train.py"}, step("4(x2)", "1"), 0},
		{"srun -N3 -n8: the last node of 3(x2),2 runs 2", []string{python, "train.py"}, step("3(x2),2", "2"), 0},
		{"srun -N3 -n22: the first node of 8,7(x2) runs 8", []string{python, "train.py"}, step("8,7(x2)", "0"), abortCode},
		{"srun -N2 -n9: the second node of 5,4 runs 4", []string{python, "train.py"}, step("5,4", "1"), 0},
		{"sbatch -N2 -n16: the batch script, one process, only warns of the job's 8(x2)", []string{python, "train.py"},
			[]string{"SLURM_JOB_ID=7", "SLURM_TASKS_PER_NODE=8(x2)", "SLURM_NODEID=0"}, 0},
		{"srun --ntasks-per-node=1 torchrun --nproc-per-node=4: one task, torchrun's 4", []string{torchrun, "--nproc-per-node=4", "train.py"},
			append(step("1(x2)", "0"), "SLURM_NTASKS_PER_NODE=1"), 0},
		{"srun -n8 --ntasks-per-gpu=2: two tasks bound to each GPU", []string{python, "train.py"}, append(step("8", "0"), "SLURM_NTASKS_PER_GPU=2"), 0},
		{"srun --gpus-per-task: each task its own GPUs", []string{torchrun, "train.py"}, []string{"SLURM_NTASKS_PER_NODE=8", "SLURM_GPUS_PER_TASK=1"}, 0},
		{"paddle.distributed.launch --gpus 0,...,7 on 4 GPUs", []string{python, "-m", "paddle.distributed.launch", "--gpus", "0,1,2,3,4,5,6,7", "train.py"}, nil, abortCode},
		{"Paddle's PADDLE_DEVICES over --devices", []string{python, "-m", "paddle.distributed.launch", "--devices=0,1", "train.py"},
			[]string{"PADDLE_DEVICES=0,1,2,3,4,5,6,7"}, abortCode},
		{"deepspeed --num_gpus 8 on 4 GPUs", []string{filepath.Join(bin, "deepspeed"), "--num_gpus", "8", "train.py"}, nil, abortCode},
		{"accelerate launch --num_machines 1 --num_processes=8 on 4 GPUs", []string{filepath.Join(bin, "accelerate"), "launch", "--num_machines", "1", "--num_processes=8", "train.py"}, nil, abortCode},
		{"accelerate launch --num_processes 16 --num_machines 2: 8 on each of 4 GPUs", []string{filepath.Join(bin, "accelerate"), "launch", "--num_processes", "16", "--num_machines", "2", "train.py"}, nil, abortCode},
		{"accelerate launch --num_processes=8 with its machines unknown warns", []string{filepath.Join(bin, "accelerate"), "launch", "--num_processes=8", "train.py"}, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.HealthyH100x8()), append([]string{"CUDA_VISIBLE_DEVICES=0,1,2,3"}, tt.env...)...)
			r := run(t, 30*time.Second, env, shimBin(t), append([]string{"--"}, tt.argv...)...)
			if r.code != tt.code || (r.stdout == "ran\n") != (tt.code == 0) {
				t.Fatalf("exit %d, stdout %q; want %d\nstderr: %s", r.code, r.stdout, tt.code, r.stderr)
			}
			if tt.code == 0 {
				return
			}
			line := logLines(r.stderr, "ranks-per-node")
			term, _ := os.ReadFile(envValue(env, "PREFLIGHT_TERMINATION_LOG"))
			for _, want := range []string{"starts 8 processes", "4 GPU(s) are visible", "invalid device ordinal"} {
				if !strings.Contains(line, want) {
					t.Errorf("log does not say %q: %s", want, line)
				}
			}
			if !strings.Contains(string(term), "start at most 4 process(es) per node") {
				t.Errorf("termination message lacks the remedy: %s", term)
			}
		})
	}
}

// writeProcDriver lays out the host's /proc/driver/nvidia for a kernel
// module of version under env's PREFLIGHT_HOST_ROOT.
func writeProcDriver(t *testing.T, env []string, version string) {
	t.Helper()
	d := procdriver.Driver{Version: version, GPUs: []procdriver.GPU{procdriver.H100}}
	if err := d.Write(filepath.Join(envValue(env, "PREFLIGHT_HOST_ROOT"), "proc", "driver")); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

func withoutVar(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// The probe calls some health entry points without asking the library
// first: those of every driver gpu-preflight supports. Debian's R535
// libnvidia-ml1 exports each; of the guarded ones it lacks the versioned
// fabric call (docs/node-health.md, "The calls").
func TestHealthEntryPointsOfDebiansLibrary(t *testing.T) {
	file, err := filepath.EvalSymlinks(realLibrary(t))
	if err != nil {
		t.Fatal(err)
	}
	exported, err := fakenvml.Exported(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetComputeMode", "nvmlDeviceGetNvLinkState",
		"nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetCurrPcieLinkWidth", "nvmlDeviceGetMaxPcieLinkGeneration",
		"nvmlDeviceGetMaxPcieLinkWidth", "nvmlDeviceGetCurrentClocksThrottleReasons"} {
		if !exported[name] {
			t.Errorf("%s does not export %s, which the probe calls unguarded", file, name)
		}
	}
	if exported["nvmlDeviceGetGpuFabricInfoV"] || !exported["nvmlDeviceGetGpuFabricInfo"] {
		t.Errorf("%s: the versioned fabric call exported %v, the unversioned %v; docs/node-health.md says otherwise",
			file, exported["nvmlDeviceGetGpuFabricInfoV"], exported["nvmlDeviceGetGpuFabricInfo"])
	}
}
