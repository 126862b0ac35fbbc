package report_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
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
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

var update = flag.Bool("update", false, "rewrite testdata/records from the records New builds")

// TestRecordsKeepTheirBytes: each run below gives the record in
// testdata/records byte for byte (compacted), so a change to the record's
// types, New or the encoder that moves a field, drops one or changes a
// value fails here.
func TestRecordsKeepTheirBytes(t *testing.T) {
	for name, r := range goldenRecords(t) {
		got, err := r.AppendJSON(nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		schematest.Validate(t, got)
		path := filepath.Join("testdata", "records", name+".json")
		if *update {
			var b bytes.Buffer
			if err := json.Indent(&b, got, "", "  "); err != nil {
				t.Fatal(err)
			}
			b.WriteByte('\n')
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var want bytes.Buffer
		if err := json.Compact(&want, reporttest.ReadFile(t, path)); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: the record is not %s:\ngot  %s\nwant %s", name, path, got, want.Bytes())
		}
	}
}

// goldenRecords are the records of the sample run (as built, finished,
// not started), of a run that knew nothing, and of runs whose facts fill
// every field the record has, one of them on the last instant of its
// driver branch's support and one on the first after it.
func goldenRecords(t *testing.T) map[string]report.Record {
	const runID = "0123456789abcdef0123456789abcdef"
	out := map[string]report.Record{}
	in := reporttest.Inputs()
	in.RunID = runID
	sample := report.New(in)
	out["sample"] = sample
	finished, notStarted := sample, sample
	if err := finished.Finish(137, 9, reporttest.Time.Add(1500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := notStarted.NotStarted(127, 0, reporttest.Time.Add(time.Millisecond), "exec: \"trian.py\": not found <&>"); err != nil {
		t.Fatal(err)
	}
	out["sample-finished"], out["sample-not-started"] = finished, notStarted
	out["nothing-known"] = report.New(report.Inputs{RunID: runID, Decision: decision.Decision{Policy: "warn", Action: decision.Exec}})

	env := []string{
		"NVIDIA_VISIBLE_DEVICES=0,1", "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
		"CUDA_VISIBLE_DEVICES=GPU-9d1c0b6e-0000-1111-2222-333344445555",
		"PREFLIGHT_IMAGE=registry.example/ml/train@sha256:4f1c2d1b7f8e3a9c0d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4",
		"PREFLIGHT_IMAGE_SOURCE=https://git.example/ml/train <main> & more",
		"SLURM_JOB_ID=4242", "SLURM_STEP_ID=0", "SLURM_PROCID=9", "SLURM_LOCALID=1", "SLURM_NODEID=1",
		"SLURMD_NODENAME=dgx02", "SLURM_NTASKS=16", "SLURM_CLUSTER_NAME=hpc", "SLURM_ARRAY_JOB_ID=4240", "SLURM_ARRAY_TASK_ID=2",
		"RANK=9", "LOCAL_RANK=1", "WORLD_SIZE=16", "LOCAL_WORLD_SIZE=8", "PET_RDZV_ID=rdzv-7",
		"MASTER_ADDR=https://u:pw_GOLDEN@10.0.0.1", "MASTER_PORT=29500",
		"PADDLE_TRAINER_ID=9", "PADDLE_TRAINERS_NUM=16", "PADDLE_JOB_ID=default", "PADDLE_NNODES=2", "PADDLE_MASTER=10.0.0.1:37777",
		"SLURM_STEP_NUM_NODES=2", "SLURM_JOB_NUM_NODES=2", "SLURM_NNODES=2", "SLURM_NTASKS_PER_NODE=8", "SLURM_GPUS_PER_TASK=1", "SLURM_NTASKS_PER_GPU=2",
		"SLURM_TASKS_PER_NODE=8(x2)", "SLURM_STEP_TASKS_PER_NODE=8(x2)",
		"GROUP_WORLD_SIZE=2", "PET_NNODES=1:2", "PET_NPROC_PER_NODE=8", "PADDLE_DEVICES=0,1,2,3,4,5,6,7", "PADDLE_NPROC_PER_NODE=8",
		"OMPI_COMM_WORLD_SIZE=16", "OMPI_COMM_WORLD_LOCAL_SIZE=8", "PMI_SIZE=16", "MPI_LOCALNRANKS=8",
		"NCCL_DEBUG=INFO", "NCCL_SOCKET_IFNAME=" + strings.Repeat("eth0,", 1000), "HF_TOKEN=hf_GOLDEN", "XLA_FLAGS=--xla_gpu_autotune_level=0 \u2028\x01",
	}
	full := report.Inputs{
		Facts: everyFact(env), Environ: envvars.Parse(env), RunID: runID,
		Findings: []check.Finding{
			{ID: "nvml", Status: check.Error, Message: "NVML failed: https://u:fm_GOLDEN@mirror.example", Remedy: "reboot the node", NodeFault: true},
			{ID: "cuda", Status: check.Error, Message: strings.Repeat("long message ", 400)},
			{ID: "shm", Status: check.Pass, Message: "/dev/shm is unlimited"},
		},
		Decision:   decision.Decision{Policy: "strict", Action: decision.Abort, ExitCode: 75, NodeFault: true, Blocking: []string{"nvml", "cuda"}},
		Argv:       []string{"torchrun", "--nproc-per-node=8", "train.py", "--token=tok_GOLDEN", strings.Repeat("x", 5000)},
		ArgvRecord: report.ArgvFull, Cwd: "/work/<job>", UID: 0, GID: 0, Supervised: true,
		ToolVersion: "v1.2.3-4-gabcdef012345", ToolCommit: "abcdef0123456789",
		Now: time.Date(2026, 6, 30, 23, 59, 59, 999999999, time.UTC),
	}
	out["every-field"] = report.New(gathered(full))
	full.ArgvRecord = report.ArgvDigestOnly
	full.Now = time.Date(2026, 7, 1, 0, 0, 0, 0, time.FixedZone("PDT", -7*3600))
	out["every-field-digest-argv"] = report.New(gathered(full))

	// No driver, a CUDA check that stopped at cuInit, and a driver branch
	// past its end of life or missing from the table.
	none := report.Inputs{RunID: runID, ArgvRecord: report.ArgvNone, Argv: []string{"python", "x.py"}, Now: reporttest.Time,
		Facts: facts.Facts{Host: facts.Host{
			Driver: facts.Driver{Source: "none"},
			NVML:   facts.NVML{Outcome: facts.ProbeNotRun, Error: "no driver evidence (/proc/driver/nvidia, /dev/nvidia*)"},
			CUDA: facts.CUDACheck{Mode: facts.CUDAModeInit, Outcome: facts.CUDAFailed, Library: "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
				Init:   &facts.CUDAStep{Step: facts.CUDAStepInit, Code: 100, Error: "CUDA_ERROR_NO_DEVICE", Message: "no CUDA-capable device is detected"},
				Fatbin: &facts.CUDAFatbin{Library: "/usr/lib/libtorch_cuda.so", Framework: "torch", Error: "no fatbin in the library"}},
		}},
		Decision: decision.Decision{Policy: "warn", Action: decision.Exec},
	}
	out["no-driver"] = report.New(gathered(none))
	for name, v := range map[string]string{"driver-past-end-of-life": "470.256.02", "driver-branch-unknown": "600.10.01", "driver-new-feature-branch": "560.35.03"} {
		in := none
		in.Facts.Host.Driver = facts.Driver{Version: v, CUDAVersion: "11.4", CUDAVersionSource: facts.CUDAAssumed, Source: "procfs"}
		in.Facts.Host.CUDA = facts.CUDACheck{Mode: facts.CUDAModeOff, Outcome: facts.CUDANotRun}
		out[name] = report.New(gathered(in))
	}
	return out
}

// gathered completes in's facts as the gatherers do from the driver, the
// clock and the environment.
func gathered(in report.Inputs) report.Inputs {
	in.Facts.Host.Driver.Branch = compat.DriverBranchOn(in.Facts.Host.Driver.Version, in.Now)
	in.Facts.Orchestrator = orchestrator.FromEnv(in.Environ)
	return in
}

// everyFact is a host with every fact the record shows filled, a
// field NVML did not answer, a CUDA check in kernel mode with a failed
// device, and an image with frameworks, CUDA libraries and more than one
// source of its CUDA; texts hold what the record must escape, cut or
// redact.
func everyFact(env []string) facts.Facts {
	ecc, retired, mig, mounted, mask, clocks := uint64(3), true, 2, true, uint32(1), uint64(0x48)
	ok := func(step string, ms float64) facts.CUDAStep { return facts.CUDAStep{Step: step, Millis: ms} }
	return facts.Facts{
		Host: facts.Host{
			Hostname: "dgx-<02>&", Kernel: "6.8.0-1015-nvidia",
			Driver: facts.Driver{Version: "535.183.01", CUDAVersion: "12.2", CUDAVersionSource: facts.CUDAFromNVML, Source: "nvml-memfd", OpenKernelModule: true},
			GPUs: []facts.GPU{
				{Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-9d1c0b6e-0000-1111-2222-333344445555", PCIBusID: "00000000:18:00.0",
					Brand: facts.BrandNvidia, ComputeCapability: "9.0", Architecture: "Hopper", MemoryBytes: 85520809984,
					MIGMode: "enabled", PersistenceMode: "disabled", ECCUncorrectedVolatile: &ecc, RetiredPagesPending: &retired, MIGDevices: &mig,
					Health: &facts.GPUHealth{
						RemappedRows: &facts.RemappedRows{Correctable: 2, Uncorrectable: 1, Pending: true},
						Fabric: &facts.Fabric{State: facts.FabricCompleted, StatusText: "Success", CliqueID: 7, ClusterUUID: "c0ffee00-0000-1111-2222-333344445555",
							HealthMask: &mask, Degraded: []string{facts.FabricHealthDegradedBandwidth}},
						Memory:      &facts.MemoryUse{TotalBytes: 85520809984, ReservedBytes: 536870912, UsedBytes: 34359738368},
						Processes:   &facts.Processes{Count: 9, First: []facts.Process{{PID: 48213, UsedBytes: 34359738368}, {PID: 48214}}},
						ComputeMode: facts.ComputeModeDefault, NVLink: &facts.NVLink{Active: 14, Inactive: []int{3, 7, 11, 15}},
						PCIe:        &facts.PCIe{CurrentGeneration: 5, CurrentWidth: 8, MaxGeneration: 5, MaxWidth: 16, GPUMaxGeneration: 5},
						ClockEvents: []string{facts.ClockHWSlowdown, facts.ClockHWThermal}, ClockEventMask: &clocks,
						Unsupported: []string{"retiredPages"}, Errors: map[string]string{"fabric.health": "Unknown Error <&>"}}},
				{Index: 1, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-00000000-1111-2222-3333-444455556666", PCIBusID: "00000000:2A:00.0",
					Brand: facts.BrandNvidia, ComputeCapability: "9.0",
					Errors: map[string]string{"memoryBytes": "Not Supported", "migMode": "GPU is lost <&>"}},
			},
			Cgroup: facts.Cgroup{Version: 1},
			NVML: facts.NVML{Outcome: facts.ProbeInitFailed, Error: "nvmlInit: Unknown Error (https://u:nvml_GOLDEN@x.example/y)",
				Via: "file:/tmp/gpu-preflight-nvml", Version: "12.535.183.01", DurationMillis: 12.5, Embedded: true,
				Library: &facts.DriverLibrary{Path: "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.183.01", Version: "535.183.01", Mounted: &mounted}},
			Transport: facts.Transport{
				Prediction: facts.TransportPrediction{Network: facts.NetIB, Devices: []string{"mlx5_0:1", "mlx5_1:1"}, LinkLayer: facts.LinkInfiniBand,
					Bootstrap: "eth0", Summary: "NET/IB on mlx5_0:1, mlx5_1:1 (InfiniBand)",
					Causes: []facts.TransportCause{{Code: "gdr-off", Message: "GPUDirect RDMA is off: no nvidia_peermem <&>"}}},
				HCAs: []facts.HCA{{Name: "mlx5_0", Driver: "mlx5_core", Vendor: "0x15b3", Device: "0x1021", Address: "0000:1a:00.0", IOMMU: "identity",
					Verbs: "uverbs0", Node: facts.UverbsNode{Path: "/dev/infiniband/uverbs0", Open: facts.UverbsOK},
					Ports: []facts.HCAPort{{Num: 1, State: "ACTIVE", PhysState: "LinkUp", LinkLayer: facts.LinkInfiniBand, Rate: "400 Gb/sec (4X NDR)"}}},
					{Name: "mlx5_1", Driver: "mlx5_core", Verbs: "uverbs1", Node: facts.UverbsNode{Path: "/dev/infiniband/uverbs1", Open: "EPERM"},
						Ports: []facts.HCAPort{{Num: 1, State: "DOWN", PhysState: "Polling", LinkLayer: facts.LinkInfiniBand}}}},
			},
			CUDA: facts.CUDACheck{
				Mode: facts.CUDAModeKernel, Outcome: facts.CUDAFailed, Error: strings.Repeat("dlopen ", 700), Via: "memfd",
				Library: "/usr/local/cuda/compat/libcuda.so.1", DriverAPIVersion: 12040,
				Init: &facts.CUDAStep{Step: facts.CUDAStepInit, Millis: 850.25}, DeviceCount: 2,
				Devices: []facts.CUDADevice{
					{Ordinal: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-9d1c0b6e-0000-1111-2222-333344445555", PCIBusID: "0000:18:00.0",
						ComputeCapability: "9.0", ComputeMode: "default", TotalBytes: 85520809984, FreeBytes: 84000000000, Result: "ok",
						Steps: []facts.CUDAStep{ok(facts.CUDAStepDevice, 0.01), ok(facts.CUDAStepContext, 120), ok(facts.CUDAStepMemory, 0.1),
							ok(facts.CUDAStepFatbin, 3), ok(facts.CUDAStepModule, 40), ok(facts.CUDAStepAlloc, 0.2), ok(facts.CUDAStepLaunch, 0.3),
							ok(facts.CUDAStepCopy, 0.1), ok(facts.CUDAStepCompare, 0), ok(facts.CUDAStepRelease, 1)},
						DurationMillis: 164.71},
					{Ordinal: 1, Result: "launch: CUDA_ERROR_LAUNCH_FAILED", Steps: []facts.CUDAStep{ok(facts.CUDAStepDevice, 0), ok(facts.CUDAStepContext, 0),
						{Step: facts.CUDAStepLaunch, Code: 719, Error: "CUDA_ERROR_LAUNCH_FAILED", Message: strings.Repeat("unspecified launch failure; ", 200)}}},
					{Ordinal: 2, Result: "compare: WRONG_VALUE", Steps: []facts.CUDAStep{{Step: facts.CUDAStepCompare, Error: facts.CUDAWrongValue, Message: "read 0, wrote 42"}}},
				},
				Fatbin: &facts.CUDAFatbin{Library: "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so", Framework: "torch",
					Containers: 2, Bytes: 123456, Targets: []string{"sm_90", "compute_90"}},
				DurationMillis: 900.5,
			},
		},
		Container: facts.Container{
			Env: map[string]string{"NVIDIA_VISIBLE_DEVICES": "0,1"},
			Requirements: []facts.Requirement{
				{Var: "NVIDIA_REQUIRE_CUDA", Value: "cuda>=12.4 brand=tesla,driver>=535,driver<536"},
				{Var: "PREFLIGHT_REQUIRE", Value: "driver>=550 https://u:req_GOLDEN@h.example " + strings.Repeat("arch>=9.0 ", 500)},
			},
			RequireDisabled: true,
			CUDA: facts.CUDAToolkit{Version: "12.4", Full: "12.4.127", Source: "/opt/venv/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12",
				Kind: facts.CUDAFromRuntime, Others: []facts.CUDASource{
					{Kind: facts.CUDAFromToolkit, Version: "12.2", Full: "12.2.140", Source: "/usr/local/cuda/version.json"},
					{Kind: facts.CUDAFromEnv, Version: "12.2", Source: "CUDA_VERSION"},
				}},
			Stack: facts.Stack{CuDNN: facts.Component{Version: "9.1.0.70", Source: "/usr/include/cudnn_version.h"}, TensorRT: facts.Component{Version: "10.0.1"}},
			Frameworks: []facts.Framework{
				{Name: "torch", Version: "2.4.0+cu124", CUDAVersion: "12.4", Build: facts.BuildCUDA, CuDNNVersion: "9.1.0",
					Archs: []string{"sm_90", "sm_80", "compute_90"},
					Kernels: []facts.KernelLibrary{{Path: "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so", Size: 1 << 30,
						Images: []facts.KernelImage{{Kind: "cubin", Arch: "sm_90", Count: 3}}}},
					Location: "/opt/venv/lib/python3.11/site-packages/torch", Source: "/opt/venv/lib/python3.11/site-packages/torch/version.py",
					Environment: "/opt/venv", EnvironmentKind: "venv", PathEntry: "/opt/venv/lib/python3.11/site-packages", PathFrom: "site-packages",
					CUDARuntime: "12.4.127", CUDARuntimeSource: "/opt/venv/lib/python3.11/site-packages/nvidia_cuda_runtime_cu12-12.4.127.dist-info"},
				{Name: "jax", Version: "0.4.30", NotJudged: "shadowed by " + strings.Repeat("/usr/lib/python3/dist-packages ", 200),
					PathEntry: "/usr/lib/python3/dist-packages", PathFrom: ".pth <distutils-precedence.pth>"},
				{Name: "paddlepaddle", Version: "2.6.1", Build: facts.BuildCPU, Archs: []string{}},
			},
			CUDALibraries: []facts.CUDALibrary{
				{Framework: "torch", FrameworkLocation: "/opt/venv/lib/python3.11/site-packages/torch", Name: "libcudnn.so.9", Library: "libcudnn",
					Wheel: "nvidia-cudnn-cu12",
					Loaded: facts.LibraryCopy{Path: "/opt/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9", Version: "9.1.0",
						VersionSource: "wheel", Via: "DT_RUNPATH", ViaObject: "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so"},
					BuiltFor: "9.1.0.70", BuiltForSource: "torch/_C: cudnn version",
					Others: []facts.LibraryCopy{{Path: "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", Version: "9.0.0"}}},
				{Framework: "torch", Name: "libnccl.so.2", Library: "libnccl"},
			},
			Python: &facts.Python{Interpreter: "/opt/venv/bin/python", How: "python on PATH", Environment: "/opt/venv", Version: "3.11",
				Candidates: []string{"/opt/venv"}},
			ScanSource: "manifest",
			Ranks: []facts.Ranks{{Launcher: facts.LauncherTorchrun, Source: "--nproc-per-node=8", PerNode: 8},
				{Launcher: facts.LauncherAccelerate, Source: "--num_processes 16", PerNode: 16, Assumed: "one machine"}},
			Identity: identity.FromEnv(envvars.Parse(env)),
		},
	}
}
