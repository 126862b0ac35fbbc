package orchestrator

import (
	"reflect"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

func TestJobIDPrecedence(t *testing.T) {
	tests := []struct {
		name       string
		env        map[string]string
		wantID     string
		wantSource string
	}{
		{"nothing set", map[string]string{}, "", ""},
		{"explicit id wins over everything",
			map[string]string{"PREFLIGHT_JOB_ID": "exp-7", "SLURM_JOB_ID": "42", "TORCHELASTIC_RUN_ID": "r1"},
			"exp-7", "PREFLIGHT_JOB_ID"},
		{"slurm job id", map[string]string{"SLURM_JOB_ID": "42", "SLURM_PROCID": "3"}, "slurm:42", "SLURM_JOB_ID"},
		{"slurm job id with cluster", map[string]string{"SLURM_JOB_ID": "42", "SLURM_CLUSTER_NAME": "dgx"}, "slurm:dgx/42", "SLURM_JOB_ID"},
		{"slurm beats torchrun", map[string]string{"SLURM_JOB_ID": "42", "TORCHELASTIC_RUN_ID": "r1"}, "slurm:42", "SLURM_JOB_ID"},
		{"torchelastic run id", map[string]string{"TORCHELASTIC_RUN_ID": "r1", "RANK": "0"}, "torchelastic:r1", "TORCHELASTIC_RUN_ID"},
		{"torchrun's default rdzv id joins nothing", map[string]string{"TORCHELASTIC_RUN_ID": "none", "RANK": "0"}, "", ""},
		{"kubeflow elastic rdzv id", map[string]string{"PET_RDZV_ID": "job-a", "PET_RDZV_ENDPOINT": "job-a-worker-0:29400"}, "torchelastic:job-a", "PET_RDZV_ID"},
		{"paddle job id", map[string]string{"PADDLE_JOB_ID": "pj", "PADDLE_TRAINER_ID": "1"}, "paddle:pj", "PADDLE_JOB_ID"},
		{"paddle's default job id joins nothing", map[string]string{"PADDLE_JOB_ID": "default"}, "", ""},
		{"kubeflow paddlejob in a namespace",
			map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "POD_NAMESPACE": "ml", "PADDLE_JOB_ID": "pj", "PADDLE_MASTER": "10.1.2.3:37777", "PADDLE_NNODES": "2"},
			"paddle:ml/pj", "PADDLE_JOB_ID"},
		{"kubeflow pytorchjob from MASTER_ADDR",
			map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "POD_NAMESPACE": "ml", "MASTER_ADDR": "bert-master-0", "RANK": "2", "WORLD_SIZE": "4"},
			"kubeflow:ml/bert", "MASTER_ADDR"},
		{"MASTER_ADDR outside Kubernetes says nothing", map[string]string{"MASTER_ADDR": "bert-master-0"}, "", ""},
		{"whitespace is trimmed", map[string]string{"PREFLIGHT_JOB_ID": "  "}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := FromEnv(envOf(tt.env))
			if c.JobID != tt.wantID || c.JobIDSource != tt.wantSource {
				t.Errorf("jobId = %q from %q, want %q from %q", c.JobID, c.JobIDSource, tt.wantID, tt.wantSource)
			}
		})
	}
}

// Every rank of one job sees the same job-level variables and different
// rank variables; the job id must not depend on the rank.
func TestJobIDIsTheSameOnEveryRank(t *testing.T) {
	jobs := []map[string]string{
		{"SLURM_JOB_ID": "9", "SLURM_CLUSTER_NAME": "c"},
		{"TORCHELASTIC_RUN_ID": "abc"},
		{"KUBERNETES_SERVICE_HOST": "h", "POD_NAMESPACE": "ns", "MASTER_ADDR": "j-master-0"},
		{"PADDLE_JOB_ID": "pj"},
	}
	for _, job := range jobs {
		var first string
		for rank := 0; rank < 4; rank++ {
			env := map[string]string{
				"RANK": string(rune('0' + rank)), "LOCAL_RANK": string(rune('0' + rank%2)),
				"SLURM_PROCID": string(rune('0' + rank)), "PADDLE_TRAINER_ID": string(rune('0' + rank)),
				"POD_NAME": "pod-" + string(rune('a'+rank)), "NODE_NAME": "node-" + string(rune('a'+rank/2)),
				"SLURMD_NODENAME": "n" + string(rune('0'+rank/2)),
			}
			for k, v := range job {
				env[k] = v
			}
			id := FromEnv(envOf(env)).JobID
			if id == "" {
				t.Fatalf("job %v rank %d: empty job id", job, rank)
			}
			if rank == 0 {
				first = id
			} else if id != first {
				t.Errorf("job %v: rank %d has job id %q, rank 0 has %q", job, rank, id, first)
			}
		}
	}
}

func TestFromEnvReadsEveryLauncher(t *testing.T) {
	env := []string{
		"KUBERNETES_SERVICE_HOST=10.96.0.1", "POD_NAME=bert-worker-1", "POD_NAMESPACE=ml",
		"POD_UID=0b7e2a4c-1111-2222-3333-444455556666", "NODE_NAME=gpu-node-3", "JOB_COMPLETION_INDEX=1",
		"SLURM_JOB_ID=77", "SLURM_STEP_ID=0", "SLURM_PROCID=5", "SLURM_LOCALID=1", "SLURM_NODEID=2",
		"SLURMD_NODENAME=dgx02", "SLURM_NTASKS=16", "SLURM_CLUSTER_NAME=dgx", "SLURM_ARRAY_JOB_ID=70", "SLURM_ARRAY_TASK_ID=7",
		"SLURM_TASKS_PER_NODE=8(x2)", "SLURM_STEP_TASKS_PER_NODE=8(x2)",
		"RANK=5", "LOCAL_RANK=1", "WORLD_SIZE=16", "LOCAL_WORLD_SIZE=8", "TORCHELASTIC_RUN_ID=run-1",
		"MASTER_ADDR=bert-master-0", "MASTER_PORT=23456",
		"PADDLE_TRAINER_ID=5", "PADDLE_TRAINERS_NUM=16", "PADDLE_JOB_ID=pj", "PADDLE_NNODES=2", "PADDLE_MASTER=10.0.0.5:37777",
		"SLURM_JOB_ID=ignored-duplicate",
	}
	got := FromEnv(envvars.Parse(env))
	want := facts.Orchestrator{
		JobID: "slurm:dgx/77", JobIDSource: "SLURM_JOB_ID",
		Detected:   []string{"kubernetes", "kubeflow", "slurm", "torchrun", "paddle"},
		Kubernetes: facts.Kubernetes{InCluster: true, PodName: "bert-worker-1", Namespace: "ml", PodUID: "0b7e2a4c-1111-2222-3333-444455556666", NodeName: "gpu-node-3", CompletionIndex: "1"},
		Kubeflow:   facts.Kubeflow{JobName: "pj", Kind: "PaddleJob"},
		Slurm: facts.Slurm{JobID: "77", StepID: "0", ProcID: "5", LocalID: "1", NodeID: "2", NodeName: "dgx02", NumTasks: "16", Cluster: "dgx", ArrayJobID: "70", ArrayTaskID: "7",
			TasksPerNode: "8(x2)", StepTasksPerNode: "8(x2)"},
		Torchrun: facts.Torchrun{Rank: "5", LocalRank: "1", WorldSize: "16", LocalWorldSize: "8", RunID: "run-1", MasterAddr: "bert-master-0", MasterPort: "23456"},
		Paddle:   facts.Paddle{TrainerID: "5", TrainersNum: "16", JobID: "pj", NNodes: "2", Master: "10.0.0.5:37777"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FromEnv =\n%+v\nwant\n%+v", got, want)
	}
}

func TestNoLauncherGivesEmptyContext(t *testing.T) {
	got := FromEnv(envvars.Parse([]string{"HOME=/root", "PATH=/bin"}))
	want := facts.Orchestrator{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FromEnv = %+v, want %+v", got, want)
	}
}

// envOf is env as the process environment.
func envOf(env map[string]string) envvars.Env {
	var l []string
	for k, v := range env {
		l = append(l, k+"="+v)
	}
	return envvars.Parse(l)
}
