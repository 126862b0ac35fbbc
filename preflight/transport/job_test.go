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
		c     facts.Container
		multi bool
		l     Launcher
	}{
		{"nothing", facts.Orchestrator{}, facts.Container{}, false, Docker},
		{"sbatch over 4 nodes", facts.Orchestrator{Slurm: facts.Slurm{JobID: "7", JobNumNodes: "4"}}, facts.Container{}, true, Slurm},
		{"srun step on 1 node of 4", facts.Orchestrator{Slurm: facts.Slurm{JobID: "7", JobNumNodes: "4", StepNumNodes: "1"}}, facts.Container{}, false, Slurm},
		{"torchrun worker", facts.Orchestrator{Torchrun: facts.Torchrun{WorldSize: "16", LocalWorldSize: "8"}}, facts.Container{}, true, Docker},
		{"torchrun on one node", facts.Orchestrator{Torchrun: facts.Torchrun{WorldSize: "8", LocalWorldSize: "8"}}, facts.Container{}, false, Docker},
		{"Kubeflow elastic", facts.Orchestrator{Kubernetes: inCluster, Torchrun: facts.Torchrun{NNodes: "1:4"}}, facts.Container{}, true, Kubernetes},
		{"PyTorchJob master and worker", facts.Orchestrator{Kubernetes: inCluster, Kubeflow: pytorchJob, Torchrun: facts.Torchrun{MasterAddr: "llm-master-0", WorldSize: "2"}}, facts.Container{}, true, Kubernetes},
		{"PyTorchJob of one pod", facts.Orchestrator{Kubernetes: inCluster, Kubeflow: pytorchJob, Torchrun: facts.Torchrun{MasterAddr: "llm-master-0", WorldSize: "1"}}, facts.Container{}, false, Kubernetes},
		{"Paddle", facts.Orchestrator{Paddle: facts.Paddle{NNodes: "2"}}, facts.Container{}, true, Docker},
		{"Open MPI", facts.Orchestrator{MPI: facts.MPI{WorldSize: "16", LocalSize: "8"}}, facts.Container{}, true, Docker},
		{"Hydra", facts.Orchestrator{MPI: facts.MPI{PMISize: "8", LocalNRanks: "8"}}, facts.Container{}, false, Docker},
		{"garbage", facts.Orchestrator{Slurm: facts.Slurm{JobNumNodes: "many"}}, facts.Container{}, false, Docker},
		{"torchrun --nnodes=2 before its workers start", facts.Orchestrator{}, facts.Container{Nodes: "2", NodesSource: "--nnodes=2"}, true, Docker},
		{"torchrun --nnodes 1:4", facts.Orchestrator{}, facts.Container{Nodes: "1:4", NodesSource: "--nnodes 1:4"}, true, Docker},
		{"--nnodes=1 overrides PET_NNODES", facts.Orchestrator{Kubernetes: inCluster, Torchrun: facts.Torchrun{NNodes: "2"}}, facts.Container{Nodes: "1", NodesSource: "--nnodes=1"}, false, Kubernetes},
		{"Slurm's count over the command's", facts.Orchestrator{Slurm: facts.Slurm{JobID: "7", NNodes: "1"}}, facts.Container{Nodes: "2", NodesSource: "--nnodes=2"}, false, Slurm},
		{"Kubeflow's PET_NNODES", facts.Orchestrator{Kubernetes: inCluster, Torchrun: facts.Torchrun{NNodes: "2"}}, facts.Container{}, true, Kubernetes},
		{"Open MPI on one node", facts.Orchestrator{MPI: facts.MPI{WorldSize: "8", LocalSize: "8"}}, facts.Container{}, false, Docker},
		{"Open MPI without its local size", facts.Orchestrator{MPI: facts.MPI{WorldSize: "16"}}, facts.Container{}, false, Docker},
		{"Hydra over two nodes", facts.Orchestrator{MPI: facts.MPI{PMISize: "16", LocalNRanks: "8"}}, facts.Container{}, true, Docker},
	}
	for _, c := range cases {
		j := JobOf(c.o, c.c)
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
