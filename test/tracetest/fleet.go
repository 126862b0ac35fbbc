// Package tracetest builds generated fleets' records, with report.New as a
// real run does, and the log paths that carry them, for trace's tests and
// its benchmark.
package tracetest

import (
	"fmt"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/imageref"
	"github.com/gpu-preflight/gpu-preflight/preflight/orchestrator"
	"github.com/gpu-preflight/gpu-preflight/report"
)

// Run is one run of a fleet.
type Run struct {
	RunID string
	At    time.Time
	Node  string
	// Job is SLURM_JOB_ID when Slurm is set, else PREFLIGHT_JOB_ID.
	Job                string
	Slurm              bool
	Rank               int
	Driver, DriverCUDA string
	Digest, Ref        string
	GPU                string
	GPUs               int
	NCCL               string
	// Abort blocks on these findings: 75 with NodeFault, else 78.
	Abort     []string
	NodeFault bool
	Exit      *int
	// NotStarted is why the command never ran; Exit is then gpu-preflight's.
	NotStarted string
	Envs       []string
	// Check makes it a record of gpu-preflight check: no command.
	Check bool
	// Transport is NCCL's predicted network.
	Transport facts.TransportPrediction
}

func Exit(code int) *int { return &code }

// Record is r's record once the run ended.
func Record(r Run) report.Record {
	rec := Start(r)
	if r.Exit != nil && len(r.Abort) == 0 {
		var err error
		if r.NotStarted != "" {
			err = rec.NotStarted(*r.Exit, 0, r.At.Add(time.Second), r.NotStarted)
		} else {
			err = rec.Finish(*r.Exit, 0, r.End())
		}
		if err != nil {
			panic(err) // StartedAt is ours
		}
	}
	return rec
}

// End is when a supervised run's command ended.
func (r Run) End() time.Time { return r.At.Add(time.Hour) }

// Start builds r's provenance record as the run starts.
func Start(r Run) report.Record {
	gpus := r.GPUs
	if gpus == 0 {
		gpus = 8
	}
	gpu := r.GPU
	if gpu == "" {
		gpu = "NVIDIA H100 80GB HBM3"
	}
	nccl := r.NCCL
	if nccl == "" {
		nccl = "2.21.5"
	}
	f := facts.Facts{
		Host: facts.Host{
			Hostname:  r.Node,
			Kernel:    "6.1.0-18-amd64",
			Driver:    facts.Driver{Version: r.Driver, CUDAVersion: r.DriverCUDA, CUDAVersionSource: "nvml", Source: "procfs"},
			Cgroup:    facts.Cgroup{Version: 2},
			NVML:      facts.NVML{Outcome: facts.ProbeOK, Via: "libnvidia-ml.so.1", Version: r.Driver, DurationMillis: 6.2},
			ShmBytes:  64 << 30,
			Transport: facts.Transport{Prediction: r.Transport},
		},
		Container: facts.Container{
			Requirements: []facts.Requirement{{Var: "NVIDIA_REQUIRE_CUDA", Value: "cuda>=12.4 brand=tesla,driver>=535,driver<536"}},
			CUDA:         facts.CUDAToolkit{Version: "12.4", Full: "12.4.1", Source: "/usr/local/cuda/version.json"},
			Stack:        facts.Stack{CuDNN: facts.Component{Version: "9.1.0"}, NCCL: facts.Component{Version: nccl}},
			Frameworks: []facts.Framework{{Name: "torch", Version: "2.4.0+cu124", CUDAVersion: "12.4", CuDNNVersion: "9.1.0",
				Archs: []string{"sm_80", "sm_90"}}},
			ScanSource: "manifest",
			Identity:   facts.Identity{Ref: r.Ref, Digest: r.Digest, From: "env", Pinned: imageref.ValidDigest(r.Digest)},
		},
	}
	for i := range gpus {
		f.Host.GPUs = append(f.Host.GPUs, facts.GPU{Index: i, Name: gpu, Brand: facts.BrandTesla,
			UUID:     fmt.Sprintf("GPU-%08x-0000-0000-0000-%012d", hash(r.Node), i),
			PCIBusID: fmt.Sprintf("00000000:%02X:00.0", 0x18+i), ComputeCapability: "9.0", Architecture: "Hopper",
			MemoryBytes: 85520809984, MIGMode: "disabled", PersistenceMode: "enabled"})
	}
	findings := []check.Finding{
		{ID: "driver", Status: check.Pass, Message: "NVIDIA driver " + r.Driver + " (procfs)"},
		{ID: "cuda-requirement", Status: check.Pass, Message: "driver " + r.Driver + " satisfies NVIDIA_REQUIRE_CUDA"},
		{ID: "gpu-health", Status: check.Pass, Message: "no uncorrected ECC errors, no retired pages pending"},
	}
	d := decision.Decision{Policy: "fail", Action: decision.Exec}
	if len(r.Abort) > 0 {
		d = decision.Decision{Policy: "fail", Action: decision.Abort, ExitCode: 78, Blocking: r.Abort, NodeFault: r.NodeFault}
		if r.NodeFault {
			d.ExitCode = 75
		}
		for _, id := range r.Abort {
			found := false
			for i := range findings {
				if findings[i].ID == id {
					findings[i].Status, findings[i].NodeFault, found = check.Error, r.NodeFault, true
					findings[i].Message = id + " failed on " + r.Node
				}
			}
			if !found {
				findings = append(findings, check.Finding{ID: id, Status: check.Error, NodeFault: r.NodeFault, Message: id + " failed"})
			}
		}
	}
	env := []string{
		"PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/bin:/bin",
		"NVIDIA_VISIBLE_DEVICES=all", "CUDA_VERSION=12.4.1", "NCCL_DEBUG=WARN",
		"KUBERNETES_SERVICE_HOST=10.96.0.1", "POD_NAMESPACE=ml", "NODE_NAME=" + r.Node,
		fmt.Sprintf("POD_NAME=%s-%d", r.Job, r.Rank),
	}
	if r.Slurm {
		env = []string{"PATH=/usr/bin:/bin", "SLURM_JOB_ID=" + r.Job, fmt.Sprintf("SLURM_PROCID=%d", r.Rank),
			"SLURMD_NODENAME=" + r.Node, "SLURM_CLUSTER_NAME=hpc", "NCCL_DEBUG=WARN"}
	} else if r.Job != "" {
		env = append(env, "PREFLIGHT_JOB_ID="+r.Job, fmt.Sprintf("RANK=%d", r.Rank), "WORLD_SIZE=16")
	}
	argv := []string{"torchrun", "--nproc-per-node=8", "train.py"}
	if r.Check {
		argv = nil
	}
	env = append(env, r.Envs...)
	f.Host.Driver.Branch = compat.DriverBranchOn(f.Host.Driver.Version, r.At)
	f.Orchestrator = orchestrator.FromEnv(envvars.Parse(env))
	return report.New(report.Inputs{
		Facts: f, Findings: findings, Decision: d,
		Argv: argv, Cwd: "/workspace", Supervised: r.Exit != nil,
		Environ: envvars.Parse(env), ToolVersion: "v0.4.0", ToolCommit: "0123abc",
		Now: r.At, RunID: r.RunID,
	})
}

func hash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

// RunID is a run id made from n: 32 hex digits, as gpu-preflight's.
func RunID(n int) string {
	return fmt.Sprintf("%08x%08x%08x%08x", hash(fmt.Sprint(n)), n, hash(fmt.Sprint(-n)), n*2654435761)[:32]
}
