package transport

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

func TestJobShapeFromTheLaunchers(t *testing.T) {
	inCluster := facts.Kubernetes{InCluster: true}
	pytorchJob := facts.Kubeflow{JobName: "llm", Kind: "PyTorchJob"}
	cases := []struct {
		name  string
		o     facts.Orchestrator
		multi bool
		l     Launcher
	}{
		{"nothing", facts.Orchestrator{}, false, Docker},
		{"sbatch over 4 nodes", facts.Orchestrator{Slurm: facts.Slurm{JobID: "7", JobNumNodes: "4"}}, true, Slurm},
		{"srun step on 1 node of 4", facts.Orchestrator{Slurm: facts.Slurm{JobID: "7", JobNumNodes: "4", StepNumNodes: "1"}}, false, Slurm},
		{"torchrun worker", facts.Orchestrator{Torchrun: facts.Torchrun{WorldSize: "16", LocalWorldSize: "8"}}, true, Docker},
		{"torchrun on one node", facts.Orchestrator{Torchrun: facts.Torchrun{WorldSize: "8", LocalWorldSize: "8"}}, false, Docker},
		{"Kubeflow elastic", facts.Orchestrator{Kubernetes: inCluster, Torchrun: facts.Torchrun{NNodes: "1:4"}}, true, Kubernetes},
		{"PyTorchJob master and worker", facts.Orchestrator{Kubernetes: inCluster, Kubeflow: pytorchJob, Torchrun: facts.Torchrun{MasterAddr: "llm-master-0", WorldSize: "2"}}, true, Kubernetes},
		{"PyTorchJob of one pod", facts.Orchestrator{Kubernetes: inCluster, Kubeflow: pytorchJob, Torchrun: facts.Torchrun{MasterAddr: "llm-master-0", WorldSize: "1"}}, false, Kubernetes},
		{"Paddle", facts.Orchestrator{Paddle: facts.Paddle{NNodes: "2"}}, true, Docker},
		{"Open MPI", facts.Orchestrator{MPI: facts.MPI{WorldSize: "16", LocalSize: "8"}}, true, Docker},
		{"Hydra", facts.Orchestrator{MPI: facts.MPI{PMISize: "8", LocalNRanks: "8"}}, false, Docker},
		{"garbage", facts.Orchestrator{Slurm: facts.Slurm{JobNumNodes: "many"}}, false, Docker},
	}
	for _, c := range cases {
		j := JobOf(c.o)
		if j.MultiNode != c.multi || j.Launcher != c.l {
			t.Errorf("%s: %+v, want multi-node %v on %s", c.name, j, c.multi, c.l)
		}
	}
}

func FuzzParseCPUList(f *testing.F) {
	// Cpus_allowed_list and local_cpulist as the kernel prints them.
	for _, s := range []string{"0-111", "0-55,112-167", "3", "", "0-3,8-11\n", "5-2", "1,,2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, ok := ParseCPUList(s)
		if !ok {
			return
		}
		for c := range set {
			if c < 0 || c >= maxCPU {
				t.Fatalf("%q: CPU %d", s, c)
			}
		}
		_ = set.Meets(set)
	})
}
