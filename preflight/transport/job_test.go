package transport

import "testing"

func TestJobShapeFromTheLaunchers(t *testing.T) {
	cases := []struct {
		name  string
		env   map[string]string
		multi bool
		l     Launcher
	}{
		{"nothing", nil, false, Docker},
		{"sbatch over 4 nodes", map[string]string{"SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": "4"}, true, Slurm},
		{"srun step on 1 node of 4", map[string]string{"SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": "4", "SLURM_STEP_NUM_NODES": "1"}, false, Slurm},
		{"torchrun worker", map[string]string{"WORLD_SIZE": "16", "LOCAL_WORLD_SIZE": "8"}, true, Docker},
		{"torchrun on one node", map[string]string{"WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "8"}, false, Docker},
		{"Kubeflow elastic", map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "PET_NNODES": "1:4"}, true, Kubernetes},
		{"PyTorchJob master and worker", map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "MASTER_ADDR": "llm-master-0", "WORLD_SIZE": "2"}, true, Kubernetes},
		{"PyTorchJob of one pod", map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "MASTER_ADDR": "llm-master-0", "WORLD_SIZE": "1"}, false, Kubernetes},
		{"Paddle", map[string]string{"PADDLE_NNODES": "2"}, true, Docker},
		{"Open MPI", map[string]string{"OMPI_COMM_WORLD_SIZE": "16", "OMPI_COMM_WORLD_LOCAL_SIZE": "8"}, true, Docker},
		{"Hydra", map[string]string{"PMI_SIZE": "8", "MPI_LOCALNRANKS": "8"}, false, Docker},
		{"garbage", map[string]string{"SLURM_JOB_NUM_NODES": "many"}, false, Docker},
	}
	for _, c := range cases {
		j := JobFromEnv(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
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
