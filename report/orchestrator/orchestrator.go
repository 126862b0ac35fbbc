// Package orchestrator reads, from the environment, where a run sits in the
// systems that launched it: the Kubernetes pod, the Slurm job and step, the
// torchrun or PaddlePaddle rank, the Kubeflow training job. It also derives a
// job id that is the same on every rank of one job, so the records written
// by many nodes of one training job can be joined.
//
// Every value is the raw string the launcher set (ranks are not parsed, so an
// odd value is recorded as it is rather than lost); an unset variable is "".
//
// Kubernetes does not put pod metadata into the environment by itself. The
// names read here are the ones gpu-preflight documents for the downward API:
//
//	env:
//	- {name: POD_NAME,      valueFrom: {fieldRef: {fieldPath: metadata.name}}}
//	- {name: POD_NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
//	- {name: POD_UID,       valueFrom: {fieldRef: {fieldPath: metadata.uid}}}
//	- {name: NODE_NAME,     valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
//	- {name: PREFLIGHT_JOB_ID, valueFrom: {fieldRef: {fieldPath: "metadata.labels['batch.kubernetes.io/job-name']"}}}
//
// (downward-API env fields: kubernetes.io, "Expose Pod Information to
// Containers Through Environment Variables"; KUBERNETES_SERVICE_HOST and
// JOB_COMPLETION_INDEX are injected by Kubernetes itself.)
package orchestrator

import (
	"strings"
)

// Context is the orchestrator part of a provenance record.
type Context struct {
	// JobID is the same on every rank of one job; "" when nothing says.
	JobID string `json:"jobId"`
	// JobIDSource names the variable JobID came from.
	JobIDSource string `json:"jobIdSource"`
	// Detected lists the launchers whose variables are present, in the
	// order kubernetes, kubeflow, slurm, torchrun, paddle.
	Detected   []string   `json:"detected"`
	Kubernetes Kubernetes `json:"kubernetes"`
	Kubeflow   Kubeflow   `json:"kubeflow"`
	Slurm      Slurm      `json:"slurm"`
	Torchrun   Torchrun   `json:"torchrun"`
	Paddle     Paddle     `json:"paddle"`
}

// Kubernetes is the pod, from the downward-API variables above.
type Kubernetes struct {
	// InCluster is true when KUBERNETES_SERVICE_HOST is set.
	InCluster bool   `json:"inCluster"`
	PodName   string `json:"podName"`   // POD_NAME
	Namespace string `json:"namespace"` // POD_NAMESPACE
	PodUID    string `json:"podUid"`    // POD_UID
	NodeName  string `json:"nodeName"`  // NODE_NAME
	// CompletionIndex is JOB_COMPLETION_INDEX of an Indexed Job.
	CompletionIndex string `json:"completionIndex"`
}

// Kubeflow is the training-operator job the pod belongs to.
type Kubeflow struct {
	// JobName is the PyTorchJob / PaddleJob name, when it can be told.
	JobName string `json:"jobName"`
	// Kind is "PyTorchJob" or "PaddleJob" when recognised.
	Kind string `json:"kind"`
}

// Slurm is the job and step from slurmd's task environment (Slurm's
// "OUTPUT ENVIRONMENT VARIABLES" in srun(1) and sbatch(1)).
type Slurm struct {
	JobID       string `json:"jobId"`       // SLURM_JOB_ID
	StepID      string `json:"stepId"`      // SLURM_STEP_ID
	ProcID      string `json:"procId"`      // SLURM_PROCID: global task rank
	LocalID     string `json:"localId"`     // SLURM_LOCALID: task rank on the node
	NodeID      string `json:"nodeId"`      // SLURM_NODEID
	NodeName    string `json:"nodeName"`    // SLURMD_NODENAME
	NumTasks    string `json:"numTasks"`    // SLURM_NTASKS
	Cluster     string `json:"cluster"`     // SLURM_CLUSTER_NAME
	ArrayJobID  string `json:"arrayJobId"`  // SLURM_ARRAY_JOB_ID
	ArrayTaskID string `json:"arrayTaskId"` // SLURM_ARRAY_TASK_ID
}

// Torchrun is torch.distributed's rank environment (set by torchrun for each
// worker, or by Kubeflow's PyTorchJob for each pod).
type Torchrun struct {
	Rank           string `json:"rank"`           // RANK
	LocalRank      string `json:"localRank"`      // LOCAL_RANK
	WorldSize      string `json:"worldSize"`      // WORLD_SIZE
	LocalWorldSize string `json:"localWorldSize"` // LOCAL_WORLD_SIZE
	// RunID is TORCHELASTIC_RUN_ID, or PET_RDZV_ID (the --rdzv-id that
	// Kubeflow passes to torchrun) when the first is unset.
	RunID      string `json:"runId"`
	MasterAddr string `json:"masterAddr"` // MASTER_ADDR
	MasterPort string `json:"masterPort"` // MASTER_PORT
}

// Paddle is PaddlePaddle's distributed environment (paddle.distributed.launch
// and Kubeflow's PaddleJob).
type Paddle struct {
	TrainerID   string `json:"trainerId"`   // PADDLE_TRAINER_ID
	TrainersNum string `json:"trainersNum"` // PADDLE_TRAINERS_NUM
	JobID       string `json:"jobId"`       // PADDLE_JOB_ID
	NNodes      string `json:"nnodes"`      // PADDLE_NNODES
	Master      string `json:"master"`      // PADDLE_MASTER
}

// Lookup returns the value of an environment variable and whether it is set.
type Lookup func(name string) (string, bool)

// placeholderIDs are launcher defaults that are the same for every job, so
// they cannot join one job's records: torchrun's --rdzv-id defaults to
// "none" (torch/distributed/run.py) and paddle.distributed.launch's --job_id
// to "default" (python/paddle/distributed/launch/context/args_envs.py).
var placeholderIDs = map[string]bool{"": true, "none": true, "default": true}

// FromEnv reads the orchestrator context.
//
// JobID is the first of:
//  1. PREFLIGHT_JOB_ID, as given (the user's explicit choice; in Kubernetes,
//     a downward-API label such as batch.kubernetes.io/job-name or
//     training.kubeflow.org/job-name);
//  2. SLURM_JOB_ID, as "slurm:<cluster>/<id>" or "slurm:<id>";
//  3. TORCHELASTIC_RUN_ID, then PET_RDZV_ID, as "torchelastic:<id>";
//  4. PADDLE_JOB_ID, as "paddle:<namespace>/<id>" or "paddle:<id>";
//  5. the Kubeflow job name taken from MASTER_ADDR "<job>-master-0" inside
//     Kubernetes, as "kubeflow:<namespace>/<job>".
//
// Launcher defaults that are the same for every job ("none", "default") are
// skipped. Every rank of a job sees the same values for all of these.
func FromEnv(get Lookup) Context {
	v := func(name string) string { s, _ := get(name); return strings.TrimSpace(s) }
	var c Context

	_, c.Kubernetes.InCluster = get("KUBERNETES_SERVICE_HOST")
	c.Kubernetes.PodName = v("POD_NAME")
	c.Kubernetes.Namespace = v("POD_NAMESPACE")
	c.Kubernetes.PodUID = v("POD_UID")
	c.Kubernetes.NodeName = v("NODE_NAME")
	c.Kubernetes.CompletionIndex = v("JOB_COMPLETION_INDEX")

	c.Slurm = Slurm{
		JobID: v("SLURM_JOB_ID"), StepID: v("SLURM_STEP_ID"), ProcID: v("SLURM_PROCID"),
		LocalID: v("SLURM_LOCALID"), NodeID: v("SLURM_NODEID"), NodeName: v("SLURMD_NODENAME"),
		NumTasks: v("SLURM_NTASKS"), Cluster: v("SLURM_CLUSTER_NAME"),
		ArrayJobID: v("SLURM_ARRAY_JOB_ID"), ArrayTaskID: v("SLURM_ARRAY_TASK_ID"),
	}
	c.Torchrun = Torchrun{
		Rank: v("RANK"), LocalRank: v("LOCAL_RANK"), WorldSize: v("WORLD_SIZE"),
		LocalWorldSize: v("LOCAL_WORLD_SIZE"), RunID: v("TORCHELASTIC_RUN_ID"),
		MasterAddr: v("MASTER_ADDR"), MasterPort: v("MASTER_PORT"),
	}
	if c.Torchrun.RunID == "" {
		c.Torchrun.RunID = v("PET_RDZV_ID")
	}
	c.Paddle = Paddle{
		TrainerID: v("PADDLE_TRAINER_ID"), TrainersNum: v("PADDLE_TRAINERS_NUM"),
		JobID: v("PADDLE_JOB_ID"), NNodes: v("PADDLE_NNODES"), Master: v("PADDLE_MASTER"),
	}
	c.Kubeflow = kubeflow(c, v)

	c.Detected = []string{}
	if c.Kubernetes.InCluster || c.Kubernetes.PodName != "" || c.Kubernetes.Namespace != "" {
		c.Detected = append(c.Detected, "kubernetes")
	}
	if c.Kubeflow.JobName != "" {
		c.Detected = append(c.Detected, "kubeflow")
	}
	if c.Slurm.JobID != "" {
		c.Detected = append(c.Detected, "slurm")
	}
	if c.Torchrun.RunID != "" || c.Torchrun.Rank != "" || c.Torchrun.WorldSize != "" {
		c.Detected = append(c.Detected, "torchrun")
	}
	if c.Paddle.JobID != "" || c.Paddle.TrainerID != "" || c.Paddle.Master != "" {
		c.Detected = append(c.Detected, "paddle")
	}

	c.JobID, c.JobIDSource = jobID(c, v)
	return c
}

// kubeflow recognises the training operator's pods. Kubeflow's PaddleJob
// sets PADDLE_JOB_ID to the job name next to PADDLE_MASTER and PADDLE_NNODES;
// PyTorchJob sets MASTER_ADDR to the replica "<job>-master-0" and, with an
// elastic policy, PET_RDZV_ID (kubeflow/training-operator
// pkg/controller.v1/paddlepaddle/envvar.go and pytorch/envvar.go, elastic.go).
func kubeflow(c Context, v func(string) string) Kubeflow {
	if !c.Kubernetes.InCluster {
		return Kubeflow{}
	}
	if c.Paddle.JobID != "" && c.Paddle.Master != "" && c.Paddle.NNodes != "" {
		return Kubeflow{JobName: c.Paddle.JobID, Kind: "PaddleJob"}
	}
	if name, ok := strings.CutSuffix(c.Torchrun.MasterAddr, "-master-0"); ok && name != "" {
		return Kubeflow{JobName: name, Kind: "PyTorchJob"}
	}
	if id := v("PET_RDZV_ID"); id != "" && v("PET_RDZV_ENDPOINT") != "" {
		return Kubeflow{JobName: id, Kind: "PyTorchJob"}
	}
	return Kubeflow{}
}

// EnvJobID is the variable that names the job explicitly.
const EnvJobID = "PREFLIGHT_JOB_ID"

func jobID(c Context, v func(string) string) (id, source string) {
	if id := v(EnvJobID); id != "" {
		return id, EnvJobID
	}
	if c.Slurm.JobID != "" {
		if c.Slurm.Cluster != "" {
			return "slurm:" + c.Slurm.Cluster + "/" + c.Slurm.JobID, "SLURM_JOB_ID"
		}
		return "slurm:" + c.Slurm.JobID, "SLURM_JOB_ID"
	}
	if id := v("TORCHELASTIC_RUN_ID"); !placeholderIDs[id] {
		return "torchelastic:" + id, "TORCHELASTIC_RUN_ID"
	}
	if id := v("PET_RDZV_ID"); !placeholderIDs[id] {
		return "torchelastic:" + id, "PET_RDZV_ID"
	}
	if id := c.Paddle.JobID; !placeholderIDs[id] {
		return namespaced("paddle:", c.Kubernetes.Namespace, id), "PADDLE_JOB_ID"
	}
	if c.Kubeflow.JobName != "" && c.Kubeflow.Kind == "PyTorchJob" {
		return namespaced("kubeflow:", c.Kubernetes.Namespace, c.Kubeflow.JobName), "MASTER_ADDR"
	}
	return "", ""
}

func namespaced(prefix, ns, name string) string {
	if ns != "" {
		return prefix + ns + "/" + name
	}
	return prefix + name
}
