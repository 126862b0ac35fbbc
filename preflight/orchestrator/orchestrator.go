// Package orchestrator gathers, from the environment, where a run sits in
// the systems that launched it (Kubernetes, Kubeflow, Slurm, torchrun,
// PaddlePaddle), and a job id the same on every rank of one job, so that
// its nodes' records join. Values are kept as set, trimmed, never parsed
// (docs/schema/README.md, "Orchestrator context").
package orchestrator

import (
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// EnvJobID names the job explicitly.
const EnvJobID = "PREFLIGHT_JOB_ID"

// Variables read besides the fields they fill, or a job id's source.
const (
	envInCluster    = "KUBERNETES_SERVICE_HOST"
	envSlurmJob     = "SLURM_JOB_ID"
	envElasticRun   = "TORCHELASTIC_RUN_ID"
	envRdzvID       = "PET_RDZV_ID" // Kubeflow's --rdzv-id for torchrun
	envRdzvEndpoint = "PET_RDZV_ENDPOINT"
	envPaddleJob    = "PADDLE_JOB_ID"
	envMasterAddr   = "MASTER_ADDR"
)

// variables are the launchers' variables and the field each fills, the
// one place a launcher's variable is read (envvars.Read says each one's
// source).
var variables = []struct {
	name string
	to   func(*facts.Orchestrator) *string
}{
	{"POD_NAME", func(o *facts.Orchestrator) *string { return &o.Kubernetes.PodName }},
	{"POD_NAMESPACE", func(o *facts.Orchestrator) *string { return &o.Kubernetes.Namespace }},
	{"POD_UID", func(o *facts.Orchestrator) *string { return &o.Kubernetes.PodUID }},
	{"NODE_NAME", func(o *facts.Orchestrator) *string { return &o.Kubernetes.NodeName }},
	{"JOB_COMPLETION_INDEX", func(o *facts.Orchestrator) *string { return &o.Kubernetes.CompletionIndex }},
	{envSlurmJob, func(o *facts.Orchestrator) *string { return &o.Slurm.JobID }},
	{"SLURM_STEP_ID", func(o *facts.Orchestrator) *string { return &o.Slurm.StepID }},
	{"SLURM_PROCID", func(o *facts.Orchestrator) *string { return &o.Slurm.ProcID }},
	{"SLURM_LOCALID", func(o *facts.Orchestrator) *string { return &o.Slurm.LocalID }},
	{"SLURM_NODEID", func(o *facts.Orchestrator) *string { return &o.Slurm.NodeID }},
	{"SLURMD_NODENAME", func(o *facts.Orchestrator) *string { return &o.Slurm.NodeName }},
	{"SLURM_NTASKS", func(o *facts.Orchestrator) *string { return &o.Slurm.NumTasks }},
	{"SLURM_CLUSTER_NAME", func(o *facts.Orchestrator) *string { return &o.Slurm.Cluster }},
	{"SLURM_ARRAY_JOB_ID", func(o *facts.Orchestrator) *string { return &o.Slurm.ArrayJobID }},
	{"SLURM_ARRAY_TASK_ID", func(o *facts.Orchestrator) *string { return &o.Slurm.ArrayTaskID }},
	{"SLURM_STEP_NUM_NODES", func(o *facts.Orchestrator) *string { return &o.Slurm.StepNumNodes }},
	{"SLURM_JOB_NUM_NODES", func(o *facts.Orchestrator) *string { return &o.Slurm.JobNumNodes }},
	{"SLURM_NNODES", func(o *facts.Orchestrator) *string { return &o.Slurm.NNodes }},
	{"SLURM_NTASKS_PER_NODE", func(o *facts.Orchestrator) *string { return &o.Slurm.NTasksPerNode }},
	{"SLURM_GPUS_PER_TASK", func(o *facts.Orchestrator) *string { return &o.Slurm.GPUsPerTask }},
	{"SLURM_NTASKS_PER_GPU", func(o *facts.Orchestrator) *string { return &o.Slurm.NTasksPerGPU }},
	{"SLURM_TASKS_PER_NODE", func(o *facts.Orchestrator) *string { return &o.Slurm.TasksPerNode }},
	{"SLURM_STEP_TASKS_PER_NODE", func(o *facts.Orchestrator) *string { return &o.Slurm.StepTasksPerNode }},
	{"RANK", func(o *facts.Orchestrator) *string { return &o.Torchrun.Rank }},
	{"LOCAL_RANK", func(o *facts.Orchestrator) *string { return &o.Torchrun.LocalRank }},
	{"WORLD_SIZE", func(o *facts.Orchestrator) *string { return &o.Torchrun.WorldSize }},
	{"LOCAL_WORLD_SIZE", func(o *facts.Orchestrator) *string { return &o.Torchrun.LocalWorldSize }},
	{envElasticRun, func(o *facts.Orchestrator) *string { return &o.Torchrun.RunID }},
	{envMasterAddr, func(o *facts.Orchestrator) *string { return &o.Torchrun.MasterAddr }},
	{"MASTER_PORT", func(o *facts.Orchestrator) *string { return &o.Torchrun.MasterPort }},
	{"GROUP_WORLD_SIZE", func(o *facts.Orchestrator) *string { return &o.Torchrun.GroupWorldSize }},
	{"PET_NNODES", func(o *facts.Orchestrator) *string { return &o.Torchrun.NNodes }},
	{"PET_NPROC_PER_NODE", func(o *facts.Orchestrator) *string { return &o.Torchrun.NProcPerNode }},
	{"PADDLE_TRAINER_ID", func(o *facts.Orchestrator) *string { return &o.Paddle.TrainerID }},
	{"PADDLE_TRAINERS_NUM", func(o *facts.Orchestrator) *string { return &o.Paddle.TrainersNum }},
	{envPaddleJob, func(o *facts.Orchestrator) *string { return &o.Paddle.JobID }},
	{"PADDLE_NNODES", func(o *facts.Orchestrator) *string { return &o.Paddle.NNodes }},
	{"PADDLE_MASTER", func(o *facts.Orchestrator) *string { return &o.Paddle.Master }},
	{"PADDLE_DEVICES", func(o *facts.Orchestrator) *string { return &o.Paddle.Devices }},
	{"PADDLE_NPROC_PER_NODE", func(o *facts.Orchestrator) *string { return &o.Paddle.NProcPerNode }},
	{"OMPI_COMM_WORLD_SIZE", func(o *facts.Orchestrator) *string { return &o.MPI.WorldSize }},
	{"OMPI_COMM_WORLD_LOCAL_SIZE", func(o *facts.Orchestrator) *string { return &o.MPI.LocalSize }},
	{"PMI_SIZE", func(o *facts.Orchestrator) *string { return &o.MPI.PMISize }},
	{"MPI_LOCALNRANKS", func(o *facts.Orchestrator) *string { return &o.MPI.LocalNRanks }},
}

// Variables are every variable FromEnv reads, each a row of envvars.Read.
func Variables() []string {
	out := []string{EnvJobID, envInCluster, envRdzvID, envRdzvEndpoint}
	for _, v := range variables {
		out = append(out, v.name)
	}
	return out
}

// placeholderIDs are launcher defaults the same for every job, which join
// nothing: torchrun's --rdzv-id "none" (torch/distributed/run.py) and
// paddle.distributed.launch's --job_id "default"
// (python/paddle/distributed/launch/context/args_envs.py).
var placeholderIDs = map[string]bool{"": true, "none": true, "default": true}

// FromEnv reads the orchestrator facts of env.
func FromEnv(env envvars.Env) facts.Orchestrator {
	v := func(name string) string { s, _ := env.Lookup(name); return strings.TrimSpace(s) }
	var o facts.Orchestrator
	for _, x := range variables {
		*x.to(&o) = v(x.name)
	}
	_, o.Kubernetes.InCluster = env.Lookup(envInCluster)
	rdzv := v(envRdzvID)
	if o.Torchrun.RunID == "" {
		o.Torchrun.RunID = rdzv
	}
	o.Kubeflow = kubeflow(o, rdzv, v(envRdzvEndpoint))
	for _, l := range []struct {
		name string
		set  bool
	}{
		{"kubernetes", o.Kubernetes.InCluster || o.Kubernetes.PodName != "" || o.Kubernetes.Namespace != ""},
		{"kubeflow", o.Kubeflow.JobName != ""},
		{"slurm", o.Slurm.JobID != ""},
		{"torchrun", o.Torchrun.RunID != "" || o.Torchrun.Rank != "" || o.Torchrun.WorldSize != ""},
		{"paddle", o.Paddle.JobID != "" || o.Paddle.TrainerID != "" || o.Paddle.Master != ""},
		{"mpi", o.MPI.WorldSize != "" || o.MPI.PMISize != ""},
	} {
		if l.set {
			o.Detected = append(o.Detected, l.name)
		}
	}
	o.JobID, o.JobIDSource = jobID(o, v(EnvJobID), v(envElasticRun), rdzv)
	return o
}

// kubeflow recognises the training operator's pods by the variables it
// sets (kubeflow/training-operator pkg/controller.v1/{paddlepaddle,pytorch}).
func kubeflow(o facts.Orchestrator, rdzvID, rdzvEndpoint string) facts.Kubeflow {
	switch {
	case !o.Kubernetes.InCluster:
	case o.Paddle.JobID != "" && o.Paddle.Master != "" && o.Paddle.NNodes != "":
		return facts.Kubeflow{JobName: o.Paddle.JobID, Kind: "PaddleJob"}
	case strings.HasSuffix(o.Torchrun.MasterAddr, "-master-0") && o.Torchrun.MasterAddr != "-master-0":
		return facts.Kubeflow{JobName: strings.TrimSuffix(o.Torchrun.MasterAddr, "-master-0"), Kind: "PyTorchJob"}
	case rdzvID != "" && rdzvEndpoint != "":
		return facts.Kubeflow{JobName: rdzvID, Kind: "PyTorchJob"}
	}
	return facts.Kubeflow{}
}

// jobID is the first of the ids the launchers give that is not a default.
func jobID(o facts.Orchestrator, explicit, elasticRun, rdzvID string) (id, source string) {
	ns := o.Kubernetes.Namespace
	switch {
	case explicit != "":
		return explicit, EnvJobID
	case o.Slurm.JobID != "":
		return namespaced("slurm:", o.Slurm.Cluster, o.Slurm.JobID), envSlurmJob
	case !placeholderIDs[elasticRun]:
		return "torchelastic:" + elasticRun, envElasticRun
	case !placeholderIDs[rdzvID]:
		return "torchelastic:" + rdzvID, envRdzvID
	case !placeholderIDs[o.Paddle.JobID]:
		return namespaced("paddle:", ns, o.Paddle.JobID), envPaddleJob
	case o.Kubeflow.Kind == "PyTorchJob":
		return namespaced("kubeflow:", ns, o.Kubeflow.JobName), envMasterAddr
	}
	return "", ""
}

func namespaced(prefix, ns, name string) string {
	if ns != "" {
		return prefix + ns + "/" + name
	}
	return prefix + name
}
