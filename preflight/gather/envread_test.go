package gather

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/nccl"
	"github.com/gpu-preflight/gpu-preflight/preflight/orchestrator"
	"github.com/gpu-preflight/gpu-preflight/preflight/rdma/rdmatest"
)

// Every row of envvars.Read is read: for each, an environment where it is
// set and a run without it differ in what the checks see (the facts other
// than the kept environment itself, the visible GPUs, the warnings, the
// findings). A row no rule reads any more fails here, and a row added
// without a case too.
func TestEveryVariableReadChangesWhatTheChecksSee(t *testing.T) {
	root := t.TempDir()
	write := func(p, content string) {
		t.Helper()
		full := filepath.Join(root, p)
		dir := filepath.Dir(full)
		if strings.HasSuffix(p, "/") {
			dir = full
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if dir == full {
			return
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Two GPUs of different models, so that CUDA_DEVICE_ORDER matters.
	for _, g := range []struct{ file, bus string }{
		{"information-v100.txt", "0000:3b:00.0"},
		{"information-h100-uninitialised.txt", "0000:1b:00.0"},
	} {
		b, err := os.ReadFile(filepath.Join("../host/testdata", g.file))
		if err != nil {
			t.Fatal(err)
		}
		write("proc/driver/nvidia/gpus/"+g.bus+"/information", string(b))
	}
	write("usr/local/cuda/compat/libcuda.so.525.147.05", "elf")
	write("opt/extra/lib/libcudnn.so.9.1.0", "elf")
	write("venv/lib/python3.10/site-packages/torch-2.1.0+cu121.dist-info/", "")
	write("conda/lib/python3.11/site-packages/torch-2.2.0+cu121.dist-info/", "")
	write("pp/torch-2.3.0+cu121.dist-info/", "")
	// A venv reached only through PATH.
	write("opt/pathvenv/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\n")
	write("opt/pathvenv/bin/python3", "")
	write("opt/pathvenv/lib/python3.12/site-packages/torch-2.4.0+cu124.dist-info/", "")
	// Two pyenv versions: which one comes first depends on PYENV_VERSION.
	write("pyenvroot/versions/3.10.4/lib/python3.10/site-packages/torch-1.13.0+cu117.dist-info/", "")
	write("pyenvroot/versions/3.9.1/lib/python3.9/site-packages/torch-1.12.0+cu116.dist-info/", "")
	// A user base named by PYTHONUSERBASE, read by the venv's python3.10.
	write("ub/lib/python3.10/site-packages/torch-2.0.0+cu118.dist-info/", "")
	// A micromamba root whose environment an activation variable names,
	// and a pixi project in the working directory.
	write("mamba/envs/train/conda-meta/", "")
	write("mamba/envs/train/bin/python3", "")
	write("mamba/envs/train/lib/python3.11/site-packages/torch-2.5.1+cu124.dist-info/", "")
	write("proj/.pixi/envs/default/conda-meta/", "")
	write("proj/.pixi/envs/default/bin/python3.12", "")
	write("proj/.pixi/envs/default/lib/python3.12/site-packages/torch-2.6.0+cu126.dist-info/", "")

	// An RoCE HCA, and a configuration file NCCL_CONF_FILE names.
	if err := rdmatest.Layout(root, rdmatest.RoCE()); err != nil {
		t.Fatal(err)
	}
	write("etc/job-nccl.conf", "NCCL_NET_GDR_LEVEL=SYS\n")

	cases := map[string][]string{
		"NVIDIA_VISIBLE_DEVICES":     {"NVIDIA_VISIBLE_DEVICES=none"},
		"CUDA_VISIBLE_DEVICES":       {"CUDA_VISIBLE_DEVICES=1"},
		"CUDA_DEVICE_ORDER":          {"CUDA_VISIBLE_DEVICES=0", "CUDA_DEVICE_ORDER=PCI_BUS_ID"},
		"NVIDIA_REQUIRE_*":           {"NVIDIA_REQUIRE_CUDA=cuda>=12.0"},
		"NVIDIA_DISABLE_REQUIRE":     {"NVIDIA_REQUIRE_CUDA=cuda>=12.0", "NVIDIA_DISABLE_REQUIRE=true"},
		"CUDA_VERSION":               {"CUDA_VERSION=12.1.0"},
		"LD_LIBRARY_PATH":            {"LD_LIBRARY_PATH=/opt/extra/lib:/usr/local/cuda/compat"},
		"VIRTUAL_ENV":                {"VIRTUAL_ENV=/venv"},
		"CONDA_PREFIX":               {"CONDA_PREFIX=/conda"},
		"PYTHONPATH":                 {"PYTHONPATH=/pp"},
		"PATH":                       {"PATH=/opt/pathvenv/bin"},
		"PYENV_ROOT":                 {"PYENV_ROOT=/pyenvroot"},
		"PYENV_VERSION":              {"PATH=/pyenvroot/shims", "PYENV_ROOT=/pyenvroot", "PYENV_VERSION=3.9.1"},
		"PYTHONUSERBASE":             {"VIRTUAL_ENV=/venv", "PYTHONUSERBASE=/ub"},
		"PYTHONNOUSERSITE":           {"VIRTUAL_ENV=/venv", "PYTHONUSERBASE=/ub", "PYTHONNOUSERSITE=1"},
		"MAMBA_ROOT_PREFIX":          {"MAMBA_ROOT_PREFIX=/mamba"},
		"ENV_NAME":                   {"MAMBA_ROOT_PREFIX=/mamba", "ENV_NAME=train"},
		"MAMBA_DEFAULT_ENV":          {"MAMBA_ROOT_PREFIX=/mamba", "MAMBA_DEFAULT_ENV=train"},
		"CONDA_DEFAULT_ENV":          {"MAMBA_ROOT_PREFIX=/mamba", "CONDA_DEFAULT_ENV=train"},
		"PWD":                        {"PWD=/proj"},
		"NV_CUDNN_VERSION":           {"NV_CUDNN_VERSION=9.8.0.87-1"},
		"CUDNN_VERSION":              {"CUDNN_VERSION=8.9.5.29"},
		"NCCL_VERSION":               {"NCCL_VERSION=2.19.3"},
		"PREFLIGHT_IMAGE":            {"PREFLIGHT_IMAGE=registry.example/train:1"},
		"PREFLIGHT_IMAGE_DIGEST":     {"PREFLIGHT_IMAGE=registry.example/train:1", "PREFLIGHT_IMAGE_DIGEST=sha256:" + strings.Repeat("4f", 32)},
		"PREFLIGHT_IMAGE_REVISION":   {"PREFLIGHT_IMAGE_REVISION=9c1e5d2"},
		"PREFLIGHT_IMAGE_CREATED":    {"PREFLIGHT_IMAGE_CREATED=2026-11-01T10:00:00Z"},
		"PREFLIGHT_IMAGE_SOURCE":     {"PREFLIGHT_IMAGE_SOURCE=https://git.example/ml/train"},
		"PREFLIGHT_JOB_ID":           {"PREFLIGHT_JOB_ID=exp-7"},
		"KUBERNETES_SERVICE_HOST":    {"KUBERNETES_SERVICE_HOST=10.96.0.1"},
		"POD_NAME":                   {"POD_NAME=bert-worker-0"},
		"POD_NAMESPACE":              {"POD_NAMESPACE=ml"},
		"POD_UID":                    {"POD_UID=0f3a"},
		"NODE_NAME":                  {"NODE_NAME=gpu-17"},
		"JOB_COMPLETION_INDEX":       {"JOB_COMPLETION_INDEX=3"},
		"SLURM_JOB_ID":               {"SLURM_JOB_ID=42"},
		"SLURM_STEP_ID":              {"SLURM_STEP_ID=0"},
		"SLURM_PROCID":               {"SLURM_PROCID=5"},
		"SLURM_LOCALID":              {"SLURM_LOCALID=1"},
		"SLURM_NODEID":               {"SLURM_NODEID=2"},
		"SLURMD_NODENAME":            {"SLURMD_NODENAME=gpu-17"},
		"SLURM_NTASKS":               {"SLURM_NTASKS=16"},
		"SLURM_CLUSTER_NAME":         {"SLURM_CLUSTER_NAME=dgx"},
		"SLURM_ARRAY_JOB_ID":         {"SLURM_ARRAY_JOB_ID=40"},
		"SLURM_ARRAY_TASK_ID":        {"SLURM_ARRAY_TASK_ID=2"},
		"SLURM_STEP_NUM_NODES":       {"SLURM_STEP_NUM_NODES=2"},
		"SLURM_JOB_NUM_NODES":        {"SLURM_JOB_NUM_NODES=4"},
		"SLURM_NNODES":               {"SLURM_NNODES=4"},
		"SLURM_NTASKS_PER_NODE":      {"SLURM_NTASKS_PER_NODE=4"},
		"SLURM_GPUS_PER_TASK":        {"SLURM_NTASKS_PER_NODE=4", "SLURM_GPUS_PER_TASK=1"},
		"SLURM_NTASKS_PER_GPU":       {"SLURM_TASKS_PER_NODE=8", "SLURM_NODEID=0", "SLURM_NTASKS_PER_GPU=2"},
		"SLURM_TASKS_PER_NODE":       {"SLURM_TASKS_PER_NODE=4(x2)", "SLURM_NODEID=1"},
		"SLURM_STEP_TASKS_PER_NODE":  {"SLURM_STEP_ID=0", "SLURM_STEP_TASKS_PER_NODE=4(x2)"},
		"RANK":                       {"RANK=3"},
		"LOCAL_RANK":                 {"LOCAL_RANK=1"},
		"WORLD_SIZE":                 {"WORLD_SIZE=16"},
		"LOCAL_WORLD_SIZE":           {"LOCAL_WORLD_SIZE=8"},
		"GROUP_WORLD_SIZE":           {"GROUP_WORLD_SIZE=2"},
		"TORCHELASTIC_RUN_ID":        {"TORCHELASTIC_RUN_ID=r1"},
		"MASTER_ADDR":                {"MASTER_ADDR=bert-master-0"},
		"MASTER_PORT":                {"MASTER_PORT=29500"},
		"PET_RDZV_ID":                {"PET_RDZV_ID=job-a"},
		"PET_RDZV_ENDPOINT":          {"KUBERNETES_SERVICE_HOST=10.96.0.1", "PET_RDZV_ID=job-a", "PET_RDZV_ENDPOINT=job-a-worker-0:29400"},
		"PET_NNODES":                 {"PET_NNODES=1:4"},
		"PET_NPROC_PER_NODE":         {"PET_NPROC_PER_NODE=8"},
		"PADDLE_TRAINER_ID":          {"PADDLE_TRAINER_ID=1"},
		"PADDLE_TRAINERS_NUM":        {"PADDLE_TRAINERS_NUM=4"},
		"PADDLE_JOB_ID":              {"PADDLE_JOB_ID=pj"},
		"PADDLE_NNODES":              {"PADDLE_NNODES=2"},
		"PADDLE_MASTER":              {"PADDLE_MASTER=10.1.2.3:37777"},
		"PADDLE_DEVICES":             {"PADDLE_DEVICES=0,1"},
		"PADDLE_NPROC_PER_NODE":      {"PADDLE_NPROC_PER_NODE=2"},
		"OMPI_COMM_WORLD_SIZE":       {"OMPI_COMM_WORLD_SIZE=16"},
		"OMPI_COMM_WORLD_LOCAL_SIZE": {"OMPI_COMM_WORLD_LOCAL_SIZE=8"},
		"PMI_SIZE":                   {"PMI_SIZE=16"},
		"MPI_LOCALNRANKS":            {"MPI_LOCALNRANKS=8"},
		"NCCL_SOCKET_IFNAME":         {"NCCL_SOCKET_IFNAME=ens1f0np0"},
		"NCCL_SOCKET_FAMILY":         {"NCCL_SOCKET_FAMILY=AF_INET6"},
		"NCCL_COMM_ID":               {"NCCL_COMM_ID=10.10.1.5:29400"},
		"NCCL_IB_DISABLE":            {"NCCL_IB_DISABLE=1"},
		"NCCL_IB_HCA":                {"NCCL_IB_HCA=mlx5_1"},
		"NCCL_IB_GID_INDEX":          {"NCCL_IB_GID_INDEX=3"},
		"NCCL_IB_ADDR_FAMILY":        {"NCCL_IB_ADDR_FAMILY=AF_INET6"},
		"NCCL_IB_ADDR_RANGE":         {"NCCL_IB_ADDR_RANGE=10.10.0.0/16"},
		"NCCL_IB_ROCE_VERSION_NUM":   {"NCCL_IB_ROCE_VERSION_NUM=1"},
		"NCCL_NET":                   {"NCCL_NET=Socket"},
		"NCCL_NET_PLUGIN":            {"NCCL_NET_PLUGIN=none"},
		"NCCL_NET_GDR_LEVEL":         {"NCCL_NET_GDR_LEVEL=PHB"},
		"NCCL_DMABUF_ENABLE":         {"NCCL_DMABUF_ENABLE=0"},
		"NCCL_CONF_FILE":             {"NCCL_CONF_FILE=/etc/job-nccl.conf"},
		"RDMAV_DRIVERS":              {"RDMAV_DRIVERS=mlx5"},
		"IBV_DRIVERS":                {"IBV_DRIVERS=mlx5"},
	}
	seen := func(environ []string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, warnings := Gather(ctx, Options{Root: fsroot.Root(root), Environ: envvars.Parse(environ), NVMLTimeout: time.Second})
		f := res.Facts
		f.Container.Env = nil
		f.Host.NVML.DurationMillis = 0
		b, err := json.Marshal(struct {
			Facts    any
			Visible  any
			Warnings []string
			Findings []check.Finding
		}{f, res.Visible, warnings, check.Run(check.Input{Facts: res.Facts, Visible: res.Visible, Now: time.Unix(0, 0)})})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, v := range envvars.Read {
		environ, ok := cases[v.Name]
		if !ok {
			t.Errorf("%s: no case shows that it is read", v.Name)
			continue
		}
		delete(cases, v.Name)
		name := strings.TrimSuffix(v.Name, "*")
		without := slices.DeleteFunc(slices.Clone(environ), func(kv string) bool { return strings.HasPrefix(kv, name) })
		if len(without) == len(environ) {
			t.Errorf("%s: the case %q does not set it", v.Name, environ)
			continue
		}
		if seen(environ) == seen(without) {
			t.Errorf("%s: %q and %q look the same to the checks: nothing reads it", v.Name, environ, without)
		}
	}
	for name := range cases {
		t.Errorf("a case for %s, which envvars.Read does not list", name)
	}
}

// The launchers' and NCCL's variables the gatherers read are rows of
// envvars.Read, so the container facts and the record keep them.
func TestGatherersReadOnlyRowsOfRead(t *testing.T) {
	for _, name := range slices.Concat(orchestrator.Variables(), nccl.Read, []string{nccl.ConfFileVar}) {
		if !envvars.IsRead(name) {
			t.Errorf("%s is read but is no row of envvars.Read", name)
		}
	}
}
