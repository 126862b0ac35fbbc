package facts

// Orchestrator is the launchers' view of the run: raw strings, "" when unset.
type Orchestrator struct {
	JobID       string     `json:"jobId"`       // the same on every rank of one job
	JobIDSource string     `json:"jobIdSource"` // the variable it came from
	Detected    []string   `json:"detected"`    // the launchers whose variables are set, in field order
	Kubernetes  Kubernetes `json:"kubernetes"`
	Kubeflow    Kubeflow   `json:"kubeflow"`
	Slurm       Slurm      `json:"slurm"`
	Torchrun    Torchrun   `json:"torchrun"`
	Paddle      Paddle     `json:"paddle"`
	MPI         MPI        `json:"mpi"`
}

// Kubernetes is the pod, from the downward API.
type Kubernetes struct {
	InCluster       bool   `json:"inCluster"`
	PodName         string `json:"podName"`
	Namespace       string `json:"namespace"`
	PodUID          string `json:"podUid"`
	NodeName        string `json:"nodeName"`
	CompletionIndex string `json:"completionIndex"`
}

// Kubeflow is the training-operator job: Kind "PyTorchJob" or "PaddleJob".
type Kubeflow struct {
	JobName string `json:"jobName"`
	Kind    string `json:"kind"`
}

// Slurm is the job, the step and the task's ranks.
type Slurm struct {
	JobID            string `json:"jobId"`
	StepID           string `json:"stepId"`
	ProcID           string `json:"procId"`
	LocalID          string `json:"localId"`
	NodeID           string `json:"nodeId"`
	NodeName         string `json:"nodeName"`
	NumTasks         string `json:"numTasks"`
	Cluster          string `json:"cluster"`
	ArrayJobID       string `json:"arrayJobId"`
	ArrayTaskID      string `json:"arrayTaskId"`
	StepNumNodes     string `json:"stepNumNodes"`
	JobNumNodes      string `json:"jobNumNodes"`
	NNodes           string `json:"nnodes"` // the older name of JobNumNodes
	NTasksPerNode    string `json:"ntasksPerNode"`
	GPUsPerTask      string `json:"gpusPerTask"`
	NTasksPerGPU     string `json:"ntasksPerGpu"`
	TasksPerNode     string `json:"tasksPerNode"`     // the job's per node, "2(x3),1" in node-list order
	StepTasksPerNode string `json:"stepTasksPerNode"` // the srun step's
}

// Torchrun is torch.distributed's rank environment.
type Torchrun struct {
	Rank           string `json:"rank"`
	LocalRank      string `json:"localRank"`
	WorldSize      string `json:"worldSize"`
	LocalWorldSize string `json:"localWorldSize"`
	RunID          string `json:"runId"`
	MasterAddr     string `json:"masterAddr"`
	MasterPort     string `json:"masterPort"`
	GroupWorldSize string `json:"groupWorldSize"` // the agents: one per node
	// Kubeflow's PET_ variables, torchrun's --nnodes and --nproc-per-node.
	NNodes       string `json:"nnodes"`
	NProcPerNode string `json:"nprocPerNode"`
}

// Paddle is PaddlePaddle's distributed environment.
type Paddle struct {
	TrainerID    string `json:"trainerId"`
	TrainersNum  string `json:"trainersNum"`
	JobID        string `json:"jobId"`
	NNodes       string `json:"nnodes"`
	Master       string `json:"master"`
	Devices      string `json:"devices"`
	NProcPerNode string `json:"nprocPerNode"`
}

// MPI is the ranks an MPI launcher counts: Open MPI's mpirun, and the
// Hydra process manager of MPICH and Intel MPI.
type MPI struct {
	WorldSize   string `json:"worldSize"`   // OMPI_COMM_WORLD_SIZE
	LocalSize   string `json:"localSize"`   // OMPI_COMM_WORLD_LOCAL_SIZE
	PMISize     string `json:"pmiSize"`     // PMI_SIZE
	LocalNRanks string `json:"localNRanks"` // MPI_LOCALNRANKS
}
