// Package reporttest holds one sample run for the tests of report and its
// sub-packages: facts of a two-GPU host under an image that needs a newer
// driver, findings of every status, and credentials planted in the
// environment, the argv and a finding's text that no output may carry.
package reporttest

import (
	"os"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/identity"
	"github.com/gpu-preflight/gpu-preflight/preflight/orchestrator"
	"github.com/gpu-preflight/gpu-preflight/report"
)

// Secrets are planted in Inputs' environment, argv and finding text; none may appear in any output.
var Secrets = []string{
	"wJalrXUtnFEMI", // AWS_SECRET_ACCESS_KEY
	"hf_PLANTED2",   // HF_TOKEN
	"hunter2",       // --password=hunter2
	"u:p@",          // https://u:p@host/x
	"tok_PLANTED3",  // --token tok_PLANTED3
	"pw_PLANTED4",   // PASSWORD=pw_PLANTED4
	"pt_PLANTED5",   // PREFLIGHT_TOKEN: an allow-listed family with a credential name
	"glpat_PLANTED6",
	"fm_PLANTED7", // inside a finding's message
	"bearer_PLANTED8",
}

// Environ is the run's environment: allow-listed variables, credentials
// under names and in values, and a Kubernetes pod's.
var Environ = []string{
	"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"HF_TOKEN=hf_PLANTED2",
	"PREFLIGHT_TOKEN=pt_PLANTED5",
	"PREFLIGHT_IMAGE_SOURCE=https://oauth2:glpat_PLANTED6@gitlab.example/ml/train.git",
	"PREFLIGHT_IMAGE=registry.example/ml/train:2.3@sha256:4f1c2d1b7f8e3a9c0d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4",
	"PREFLIGHT_IMAGE_REVISION=9c1e5d2",
	"PREFLIGHT_IMAGE_CREATED=2026-11-01T10:00:00Z",
	"NVIDIA_VISIBLE_DEVICES=all",
	"NVIDIA_REQUIRE_CUDA=cuda>=12.2 brand=tesla,driver>=470,driver<471 brand=tesla,driver>=525,driver<526",
	"CUDA_VERSION=12.2.2",
	"NCCL_DEBUG=WARN",
	"PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/bin:/bin",
	"HOME=/root",
	"KUBERNETES_SERVICE_HOST=10.96.0.1",
	"POD_NAME=bert-worker-1", "POD_NAMESPACE=ml", "NODE_NAME=gpu-node-3", "POD_UID=0b7e2a4c-1111-2222-3333-444455556666",
	"MASTER_ADDR=bert-master-0", "MASTER_PORT=23456", "RANK=1", "WORLD_SIZE=2",
}

// Argv is the command, with credentials in three forms.
var Argv = []string{
	"python", "train.py", "--password=hunter2", "--token", "tok_PLANTED3", "PASSWORD=pw_PLANTED4",
	"--data", "https://u:p@host/x", "--lr", "0.1",
}

func u64(v uint64) *uint64 { return &v }
func boolp(v bool) *bool   { return &v }
func intp(v int) *int      { return &v }

// Facts are what was gathered: driver 515 (CUDA 11.7), two A100s, an image
// built for CUDA 12.2 with torch and paddle, a Kubeflow pod.
func Facts() facts.Facts {
	return facts.Facts{
		Host: facts.Host{
			Hostname: "bert-worker-1",
			Kernel:   "6.1.0-18-amd64",
			Driver: facts.Driver{Version: "515.65.01", CUDAVersion: "11.7", CUDAVersionSource: "branch-table", Source: "procfs",
				Branch: compat.DriverBranchOn("515.65.01", Time)},
			GPUs: []facts.GPU{
				{Index: 0, Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-6e0bc4a1-7c7f-2b1a-9d3e-0a1b2c3d4e5f", PCIBusID: "00000000:07:00.0",
					Brand: "Tesla", ComputeCapability: "8.0", Architecture: "Ampere", MemoryBytes: 85899345920,
					MIGMode: "disabled", PersistenceMode: "enabled", ECCUncorrectedVolatile: u64(0), RetiredPagesPending: boolp(false), MIGDevices: intp(0)},
				{Index: 1, Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718", PCIBusID: "00000000:0F:00.0"},
			},
			DeviceNodes: []string{"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia-uvm"},
			ShmBytes:    64 << 20,
			Cgroup:      facts.Cgroup{Version: 2, MemoryBytes: 64 << 30, CPUs: 8},
			NVML:        facts.NVML{Outcome: facts.ProbeNotRun},
		},
		Container: facts.Container{
			Env: map[string]string{"NVIDIA_VISIBLE_DEVICES": "all"},
			Requirements: []facts.Requirement{
				{Var: "NVIDIA_REQUIRE_CUDA", Value: "cuda>=12.2 brand=tesla,driver>=470,driver<471 brand=tesla,driver>=525,driver<526"},
			},
			CUDA:   facts.CUDAToolkit{Version: "12.2", Full: "12.2.2", Source: "/usr/local/cuda/version.json"},
			Compat: []facts.CompatLib{{Path: "/usr/local/cuda/compat/libcuda.so.535.129.03", DriverVersion: "535.129.03"}},
			Stack: facts.Stack{
				CuDNN: facts.Component{Version: "8.9.7"},
				NCCL:  facts.Component{Version: "2.18.5"},
			},
			Frameworks: []facts.Framework{
				{Name: "torch", Version: "2.1.2+cu121", CUDAVersion: "12.1", CuDNNVersion: "8.9.2", Archs: []string{"sm_80", "sm_90", "sm_50", "compute_90"}},
				{Name: "paddlepaddle", Version: "2.6.1", CUDAVersion: "12.0"},
			},
			ScanSource: "scan",
			Identity:   identity.FromEnv(envvars.Parse(Environ)),
		},
		Orchestrator: orchestrator.FromEnv(envvars.Parse(Environ)),
	}
}

// Findings has one finding of each status, in check order.
var Findings = []check.Finding{
	{ID: "driver", Status: check.Pass, Message: "NVIDIA driver 515.65.01 (procfs)"},
	{ID: "cuda-requirement", Status: check.Error,
		Message: "driver 515.65.01 supports CUDA <= 11.7; this image needs CUDA 12.2 (NVIDIA_REQUIRE_CUDA)",
		Remedy:  "upgrade the driver to >= 535.54.03, or use an image built for CUDA <= 11.7"},
	{ID: "shm", Status: check.Warn, Message: "/dev/shm is 64 MiB, the container default; mirror https://u:fm_PLANTED7@mirror.example/x",
		Remedy: "run with --ipc=host or --shm-size=16g"},
	{ID: "nvml", Status: check.Info, Message: "NVML not run: Authorization: Bearer bearer_PLANTED8", Remedy: "none needed"},
	{ID: "gpu-arch", Status: check.Skip, Message: "no framework kernels to check"},
}

// Time is when the run started, in a zone that is not UTC.
var Time = time.Date(2026, 11, 29, 16, 31, 42, 123456789, time.FixedZone("CET", 3600))

// Inputs is the sample run, aborted under the fail policy.
func Inputs() report.Inputs {
	return report.Inputs{
		Facts:    Facts(),
		Findings: Findings,
		// Under fail the error blocks, the warning does not.
		Decision:    decision.Decision{Policy: "fail", Action: decision.Abort, ExitCode: 78, Blocking: []string{"cuda-requirement"}},
		Argv:        Argv,
		Cwd:         "/workspace",
		UID:         1000,
		GID:         1000,
		Environ:     envvars.Parse(Environ),
		ToolVersion: "v0.1.0",
		ToolCommit:  "f073bda",
		Now:         Time,
	}
}

// ReadFile returns the file's contents, failing the test when it cannot be read.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
