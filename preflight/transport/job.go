package transport

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/nccl"
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

// nodeCounts are the variables that count a job's nodes, or its ranks
// against the ranks of this node, from the launchers' own documentation
// (docs/transport.md, "The job's shape"). The first pair that decides,
// decides.
var nodeCounts = []struct{ total, local string }{
	{"SLURM_STEP_NUM_NODES", ""},                           // srun(1)
	{"SLURM_JOB_NUM_NODES", ""},                            // sbatch(1), salloc(1)
	{"SLURM_NNODES", ""},                                   // the older name of SLURM_JOB_NUM_NODES
	{"PET_NNODES", ""},                                     // Kubeflow's PyTorchJob: torchrun --nnodes
	{"PADDLE_NNODES", ""},                                  // paddle.distributed.launch --nnodes
	{"GROUP_WORLD_SIZE", ""},                               // torchrun: the number of agents (nodes)
	{"WORLD_SIZE", "LOCAL_WORLD_SIZE"},                     // torchrun's workers
	{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE"}, // Open MPI's mpirun
	{"PMI_SIZE", "MPI_LOCALNRANKS"},                        // MPICH's and Intel MPI's Hydra
}

// JobFromEnv reads the job's shape from the launchers' variables. A
// count of nodes is read up to a ":" ("1:4", torchrun's elastic range,
// counts its maximum). Kubeflow's PyTorchJob without an elastic policy
// sets only WORLD_SIZE, the number of pods, with MASTER_ADDR naming the
// master pod "<job>-master-0"; each pod is taken as a node.
func JobFromEnv(get nccl.Lookup) Job {
	j := Job{Launcher: Docker}
	if _, ok := get("SLURM_JOB_ID"); ok {
		j.Launcher = Slurm
	}
	if _, ok := get("KUBERNETES_SERVICE_HOST"); ok {
		j.Launcher = Kubernetes
	}
	count := func(name string) (int, bool) {
		v, ok := get(name)
		if !ok {
			return 0, false
		}
		if _, max, ranged := strings.Cut(v, ":"); ranged {
			v = max
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		return n, err == nil && n > 0
	}
	for _, c := range nodeCounts {
		total, ok := count(c.total)
		if !ok {
			continue
		}
		if c.local == "" {
			j.MultiNode, j.Evidence = total > 1, fmt.Sprintf("%s=%d", c.total, total)
			return j
		}
		if local, ok := count(c.local); ok {
			j.MultiNode, j.Evidence = total > local, fmt.Sprintf("%s=%d, %s=%d", c.total, total, c.local, local)
			return j
		}
	}
	if master, _ := get("MASTER_ADDR"); strings.HasSuffix(master, "-master-0") && j.Launcher == Kubernetes {
		if n, ok := count("WORLD_SIZE"); ok {
			j.MultiNode, j.Evidence = n > 1, fmt.Sprintf("WORLD_SIZE=%d pods of PyTorchJob %s", n, strings.TrimSuffix(master, "-master-0"))
		}
	}
	return j
}
