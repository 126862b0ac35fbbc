package transport

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// Launcher is what started the container, for the remedy a person can
// apply there.
type Launcher string

// The launchers remedies are written for; Docker stands for any engine
// run by hand (docker, podman, nerdctl).
const (
	Docker     Launcher = "docker"
	Kubernetes Launcher = "kubernetes"
	Slurm      Launcher = "slurm"
)

// Job is the shape of the job this rank belongs to.
type Job struct {
	// MultiNode is true when the launcher's environment says the job
	// spans nodes; Evidence says which variables said so.
	MultiNode bool     `json:"multiNode"`
	Evidence  string   `json:"evidence,omitempty"`
	Launcher  Launcher `json:"launcher"`
}

// nodeCounts are the launchers' counts of nodes, or of ranks against this
// node's (docs/transport.md, "The job's shape"); the first set decides.
var nodeCounts = []struct {
	total, local string
	get          func(o facts.Orchestrator, c facts.Container) (total, local string)
}{
	{"SLURM_STEP_NUM_NODES", "", func(o facts.Orchestrator, _ facts.Container) (string, string) { return o.Slurm.StepNumNodes, "" }},
	{"SLURM_JOB_NUM_NODES", "", func(o facts.Orchestrator, _ facts.Container) (string, string) { return o.Slurm.JobNumNodes, "" }},
	{"SLURM_NNODES", "", func(o facts.Orchestrator, _ facts.Container) (string, string) { return o.Slurm.NNodes, "" }},
	{"--nnodes", "", func(_ facts.Orchestrator, c facts.Container) (string, string) { return c.Nodes, "" }},
	{"PET_NNODES", "", func(o facts.Orchestrator, _ facts.Container) (string, string) { return o.Torchrun.NNodes, "" }},
	{"PADDLE_NNODES", "", func(o facts.Orchestrator, _ facts.Container) (string, string) { return o.Paddle.NNodes, "" }},
	{"GROUP_WORLD_SIZE", "", func(o facts.Orchestrator, _ facts.Container) (string, string) { return o.Torchrun.GroupWorldSize, "" }},
	{"WORLD_SIZE", "LOCAL_WORLD_SIZE", func(o facts.Orchestrator, _ facts.Container) (string, string) {
		return o.Torchrun.WorldSize, o.Torchrun.LocalWorldSize
	}},
	{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", func(o facts.Orchestrator, _ facts.Container) (string, string) {
		return o.MPI.WorldSize, o.MPI.LocalSize
	}},
	{"PMI_SIZE", "MPI_LOCALNRANKS", func(o facts.Orchestrator, _ facts.Container) (string, string) {
		return o.MPI.PMISize, o.MPI.LocalNRanks
	}},
}

// JobOf reads the job's shape from the launchers' variables and the
// command's --nnodes. A count of
// nodes is read up to a ":" ("1:4", torchrun's elastic range, counts its
// maximum). Kubeflow's PyTorchJob without an elastic policy sets only
// WORLD_SIZE, the number of pods, each taken as a node.
func JobOf(o facts.Orchestrator, c facts.Container) Job {
	j := Job{Launcher: Docker}
	if o.Slurm.JobID != "" {
		j.Launcher = Slurm
	}
	if o.Kubernetes.InCluster {
		j.Launcher = Kubernetes
	}
	count := func(v string) (int, bool) {
		if _, max, ranged := strings.Cut(v, ":"); ranged {
			v = max
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		return n, err == nil && n > 0
	}
	for _, n := range nodeCounts {
		tv, lv := n.get(o, c)
		total, ok := count(tv)
		if !ok {
			continue
		}
		if n.local == "" {
			j.MultiNode, j.Evidence = total > 1, fmt.Sprintf("%s=%d", n.total, total)
			if n.total == "--nnodes" {
				j.Evidence = "the command's " + c.NodesSource
			}
			return j
		}
		if local, ok := count(lv); ok {
			j.MultiNode, j.Evidence = total > local, fmt.Sprintf("%s=%d, %s=%d", n.total, total, n.local, local)
			return j
		}
	}
	if o.Kubeflow.Kind == "PyTorchJob" && strings.HasSuffix(o.Torchrun.MasterAddr, "-master-0") {
		if n, ok := count(o.Torchrun.WorldSize); ok {
			j.MultiNode, j.Evidence = n > 1, fmt.Sprintf("WORLD_SIZE=%d pods of PyTorchJob %s", n, o.Kubeflow.JobName)
		}
	}
	return j
}
