package envvars

import (
	"strings"
	"sync"
)

// Variable is one variable, or a family, read from the container's environment.
type Variable struct {
	Name string // a family ends in '*': "NVIDIA_REQUIRE_*"
	// Scan: the image scan reads it; a baked manifest goes stale when it changes.
	Scan bool
	// Version is the library whose version it states, taken when no file says it.
	Version Library
	Use     string // what reads it and what for
	Source  string // where its meaning is documented
}

// Library is a CUDA stack library the image scan versions.
type Library string

// The libraries that have a version variable.
const (
	CuDNN Library = "cuDNN"
	NCCL  Library = "NCCL"
)

// Sources, by the document that defines each group (docs/sources.md, "The container's environment").
const (
	srcToolkit   = "NVIDIA Container Toolkit, \"Specialized Configurations with Docker\"; NCT `cuda_image.go`"
	srcCUDAEnv   = "CUDA Programming Guide, \"CUDA Environment Variables\""
	srcCUDAImage = "nvidia/cuda Dockerfiles (`ENV CUDA_VERSION`); NCT `cuda_image.go` `IsLegacy`"
	srcStackEnv  = "the nvidia/cuda and NGC images' environments"
	srcIdentity  = "gpu-preflight's own: the deployer sets it (docs/schema/README.md)"
	srcLabel     = "gpu-preflight's own: the image's Dockerfile sets it beside the OCI image-spec annotation it mirrors (docs/schema/README.md)"
	srcJobID     = "gpu-preflight's own: the deployer sets it the same on every rank (docs/schema/README.md)"
	srcDownward  = "Kubernetes, \"Expose Pod Information to Containers Through Environment Variables\" (the pod spec sets it)"
	srcK8sSvc    = "Kubernetes, \"Service\" (\"Environment variables\": the kubelet sets it in every container)"
	srcSlurm     = "srun(1), sbatch(1), \"OUTPUT ENVIRONMENT VARIABLES\""
	srcSrun      = "srun(1), \"OUTPUT ENVIRONMENT VARIABLES\"; Slurm `src/common/env.c`, `env_array_for_step`"
	srcTorchrun  = "PyTorch, \"torchrun (Elastic Launch)\": the variables each worker gets (`torch/distributed/elastic/agent/server/api.py`)"
	srcKubeflow  = "Kubeflow training-operator, `pkg/controller.v1/pytorch/envvar.go` (torchrun's options as `PET_` variables)"
	srcPaddle    = "PaddlePaddle, `python/paddle/distributed/launch/context/args_envs.py`"
	srcOpenMPI   = "Open MPI, mpirun(1), \"Exported Environment Variables\""
	srcHydra     = "MPICH's Hydra process manager (`pm/hydra`), which Intel MPI shares"
	srcNCCL      = "NCCL, \"Environment Variables\" (`docs/userguide/source/env.rst`); docs/transport.md"
	srcVerbs     = "rdma-core, `libibverbs/dynamic_driver.c` (`load_drivers`); docs/transport.md"
	launchers    = "the launchers' view of the run: the record's `orchestrator`"
	shape        = "the job's shape (multi-node or not) for `nccl-transport`, `gpudirect-rdma`, `rdma-memlock`"
	ranksPerNode = "the processes a launcher starts on this node: `ranks-per-node`"
	ncclUse      = "NCCL's setting, as the image's NCCL resolves it: `nccl-transport`, `gpudirect-rdma`"
)

// Read are the variables gpu-preflight reads from the container's
// environment, in the order the scan tries version variables. Those no rule reads stay
// out: NV_*_VERSION pins, CUDA_DRIVER_VERSION, PYTORCH_VERSION, TORCH_CUDA_ARCH_LIST, TensorRT's.
var Read = []Variable{
	{Name: "NVIDIA_VISIBLE_DEVICES", Use: "the GPUs the container toolkit gives the container: the visible GPUs, `gpu-count`", Source: srcToolkit},
	{Name: "CUDA_VISIBLE_DEVICES", Use: "the GPUs CUDA shows the process, and their order: the visible GPUs, `gpu-count`", Source: srcCUDAEnv},
	{Name: "CUDA_DEVICE_ORDER", Use: "how `CUDA_VISIBLE_DEVICES` indices count (`FASTEST_FIRST`, `PCI_BUS_ID`)", Source: srcCUDAEnv},
	{Name: "NVIDIA_REQUIRE_*", Use: "the image's requirements (`NVIDIA_REQUIRE_JETPACK*` excepted): `cuda-requirement`", Source: srcToolkit},
	{Name: "NVIDIA_DISABLE_REQUIRE", Use: "turns the requirements off: `cuda-requirement`", Source: srcToolkit},
	{Name: "CUDA_VERSION", Use: "the image's CUDA when no toolkit file says it, and a legacy image's `cuda>=X.Y`", Source: srcCUDAImage},
	{Name: "LD_LIBRARY_PATH", Scan: true, Use: "where the scan looks for cuDNN, NCCL and TensorRT and how it models the loader; a compat libcuda taken through it (`cuda-driver`, `cuda-stack`)", Source: "ld.so(8), ENVIRONMENT"},
	{Name: "VIRTUAL_ENV", Scan: true, Use: "a virtual environment's site-packages, searched first", Source: "Python, `venv` (`activate` sets it)"},
	{Name: "CONDA_PREFIX", Scan: true, Use: "a conda environment's site-packages and lib, searched first", Source: "conda, \"Managing environments\""},
	{Name: "PYTHONPATH", Scan: true, Use: "Python package directories searched before the system's", Source: "Python, \"Command line and environment\""},
	{Name: "PATH", Scan: true, Use: "the Python interpreters the container runs (a venv or conda `bin` on `PATH`), and the one the command runs", Source: "POSIX execvp; Python, `venv` (\"How venvs work\")"},
	{Name: "PYENV_ROOT", Scan: true, Use: "where pyenv keeps its Python versions (`$PYENV_ROOT/versions/*`, its `shims` on `PATH`)", Source: "pyenv README, \"Environment variables\""},
	{Name: "PYENV_VERSION", Scan: true, Use: "the version pyenv's shims run", Source: "pyenv README, \"Environment variables\""},
	{Name: "PYTHONUSERBASE", Scan: true, Use: "the user site's base directory, in place of `~/.local`", Source: "Python, \"Command line and environment\""},
	{Name: "PYTHONNOUSERSITE", Scan: true, Use: "leaves the user site off `sys.path`", Source: "Python, \"Command line and environment\""},
	{Name: "MAMBA_ROOT_PREFIX", Scan: true, Use: "micromamba's root prefix: its environments (`envs/*`) are searched, and the one an activation variable names", Source: "mamba-org/micromamba-docker `Dockerfile` (`ENV MAMBA_ROOT_PREFIX=\"/opt/conda\"`)"},
	{Name: "ENV_NAME", Scan: true, Use: "the conda environment micromamba's entrypoint activates: the `python` a command names is taken from it", Source: "mamba-org/micromamba-docker `_activate_current_env.sh` (`micromamba activate \"${ENV_NAME}\"`)"},
	{Name: "MAMBA_DEFAULT_ENV", Scan: true, Use: "the environment `mamba activate` recorded, when `ENV_NAME` is unset", Source: "mamba, \"Activation\" (the variables `activate` exports)"},
	{Name: "CONDA_DEFAULT_ENV", Scan: true, Use: "the environment `conda activate` recorded, when neither of the above is set", Source: "conda, \"Managing environments\" (the variables `activate` exports)"},
	{Name: "PWD", Scan: true, Use: "the working directory (a shell's, else gpu-preflight's own inside the container, or under `--root` the image config's `WorkingDir`): pixi's environments under its `.pixi/envs`, as under `/app`, count as activated, `uv run` takes its `.venv`, and a relative `./script` is found from it; a baked manifest does not compare it, only the environments found", Source: "POSIX `sh`, \"Shell Variables\"; pixi, \"Container\" (`WORKDIR /app`, `pixi shell-hook` entrypoint); OCI image-spec `config.md` (`WorkingDir`)"},
	{Name: "NV_CUDNN_VERSION", Scan: true, Version: CuDNN, Use: "cuDNN's version when no file says it (nvidia/cuda cuDNN images)", Source: srcStackEnv},
	{Name: "CUDNN_VERSION", Scan: true, Version: CuDNN, Use: "cuDNN's version when no file says it (NGC images)", Source: srcStackEnv},
	{Name: "NCCL_VERSION", Scan: true, Version: NCCL, Use: "NCCL's version when no file says it", Source: srcStackEnv},
	{Name: "PREFLIGHT_IMAGE", Use: "the image reference as deployed: `image-pinned`", Source: srcIdentity},
	{Name: "PREFLIGHT_IMAGE_DIGEST", Use: "the image's manifest digest: `image-pinned`", Source: srcIdentity},
	{Name: "PREFLIGHT_IMAGE_REVISION", Use: "the source revision the image was built from (the OCI label `org.opencontainers.image.revision`): the record's `image.revision`", Source: srcLabel},
	{Name: "PREFLIGHT_IMAGE_CREATED", Use: "when the image was built, RFC 3339 (`org.opencontainers.image.created`): the record's `image.created`", Source: srcLabel},
	{Name: "PREFLIGHT_IMAGE_SOURCE", Use: "the image's source repository (`org.opencontainers.image.source`): the record's `image.source`", Source: srcLabel},
	{Name: "PREFLIGHT_JOB_ID", Use: "the job id the same on every rank: the record's `orchestrator.jobId`", Source: srcJobID},
	{Name: "KUBERNETES_SERVICE_HOST", Use: "running in a Kubernetes pod: the record's `orchestrator`, the remedies for Kubernetes", Source: srcK8sSvc},
	{Name: "POD_NAME", Use: launchers, Source: srcDownward},
	{Name: "POD_NAMESPACE", Use: launchers, Source: srcDownward},
	{Name: "POD_UID", Use: launchers, Source: srcDownward},
	{Name: "NODE_NAME", Use: launchers, Source: srcDownward},
	{Name: "JOB_COMPLETION_INDEX", Use: launchers, Source: "Kubernetes, \"Indexed Job for Parallel Processing with Static Work Assignment\""},
	{Name: "SLURM_JOB_ID", Use: "the job id, and the remedies for Slurm", Source: srcSlurm},
	{Name: "SLURM_STEP_ID", Use: "running in an srun step, whose `SLURM_STEP_TASKS_PER_NODE` counts: `ranks-per-node`; the record's `orchestrator`", Source: srcSrun},
	{Name: "SLURM_PROCID", Use: launchers, Source: srcSlurm},
	{Name: "SLURM_LOCALID", Use: launchers, Source: srcSlurm},
	{Name: "SLURM_NODEID", Use: "this node's place in the tasks-per-node list: `ranks-per-node`; the record's `orchestrator`", Source: srcSlurm},
	{Name: "SLURMD_NODENAME", Use: launchers, Source: srcSlurm},
	{Name: "SLURM_NTASKS", Use: launchers, Source: srcSlurm},
	{Name: "SLURM_CLUSTER_NAME", Use: launchers, Source: srcSlurm},
	{Name: "SLURM_ARRAY_JOB_ID", Use: launchers, Source: srcSlurm},
	{Name: "SLURM_ARRAY_TASK_ID", Use: launchers, Source: srcSlurm},
	{Name: "SLURM_STEP_NUM_NODES", Use: shape, Source: srcSlurm},
	{Name: "SLURM_JOB_NUM_NODES", Use: shape, Source: srcSlurm},
	{Name: "SLURM_NNODES", Use: shape, Source: srcSlurm},
	{Name: "SLURM_NTASKS_PER_NODE", Use: ranksPerNode, Source: srcSlurm},
	{Name: "SLURM_GPUS_PER_TASK", Use: "each task sees GPUs of its own, so Slurm's task counts do not count against them: `ranks-per-node`", Source: srcSlurm},
	{Name: "SLURM_NTASKS_PER_GPU", Use: "tasks bound to one GPU each, several to a GPU, so Slurm's task counts do not count against them: `ranks-per-node`", Source: srcSlurm},
	{Name: "SLURM_TASKS_PER_NODE", Use: "the job's tasks on each node (`2(x3),1`), this node's at `SLURM_NODEID`: `ranks-per-node`", Source: srcSlurm},
	{Name: "SLURM_STEP_TASKS_PER_NODE", Use: "the step's tasks on each node, read in place of the job's inside an srun step: `ranks-per-node`", Source: srcSrun},
	{Name: "RANK", Use: launchers, Source: srcTorchrun},
	{Name: "LOCAL_RANK", Use: launchers, Source: srcTorchrun},
	{Name: "WORLD_SIZE", Use: "the job's shape, against `LOCAL_WORLD_SIZE`; the record's `orchestrator`", Source: srcTorchrun},
	{Name: "LOCAL_WORLD_SIZE", Use: ranksPerNode, Source: srcTorchrun},
	{Name: "GROUP_WORLD_SIZE", Use: shape, Source: srcTorchrun},
	{Name: "TORCHELASTIC_RUN_ID", Use: "the job id", Source: srcTorchrun},
	{Name: "MASTER_ADDR", Use: "the job id of a Kubeflow PyTorchJob (`<job>-master-0`)", Source: srcTorchrun},
	{Name: "MASTER_PORT", Use: launchers, Source: srcTorchrun},
	{Name: "PET_RDZV_ID", Use: "the job id of a Kubeflow elastic PyTorchJob", Source: srcKubeflow},
	{Name: "PET_RDZV_ENDPOINT", Use: "recognises a Kubeflow elastic PyTorchJob", Source: srcKubeflow},
	{Name: "PET_NNODES", Use: shape, Source: srcKubeflow},
	{Name: "PET_NPROC_PER_NODE", Use: ranksPerNode, Source: srcKubeflow},
	{Name: "PADDLE_TRAINER_ID", Use: launchers, Source: srcPaddle},
	{Name: "PADDLE_TRAINERS_NUM", Use: launchers, Source: srcPaddle},
	{Name: "PADDLE_JOB_ID", Use: "the job id", Source: srcPaddle},
	{Name: "PADDLE_NNODES", Use: shape, Source: srcPaddle},
	{Name: "PADDLE_MASTER", Use: "recognises a Kubeflow PaddleJob", Source: srcPaddle},
	{Name: "PADDLE_DEVICES", Use: ranksPerNode, Source: srcPaddle},
	{Name: "PADDLE_NPROC_PER_NODE", Use: ranksPerNode, Source: srcPaddle},
	{Name: "OMPI_COMM_WORLD_SIZE", Use: shape, Source: srcOpenMPI},
	{Name: "OMPI_COMM_WORLD_LOCAL_SIZE", Use: shape, Source: srcOpenMPI},
	{Name: "PMI_SIZE", Use: shape, Source: srcHydra},
	{Name: "MPI_LOCALNRANKS", Use: shape, Source: srcHydra},
	{Name: "NCCL_SOCKET_IFNAME", Use: ncclUse, Source: srcNCCL},
	{Name: "NCCL_SOCKET_FAMILY", Use: ncclUse, Source: srcNCCL},
	{Name: "NCCL_COMM_ID", Use: ncclUse, Source: srcNCCL},
	{Name: "NCCL_IB_DISABLE", Use: ncclUse, Source: srcNCCL},
	{Name: "NCCL_IB_HCA", Use: ncclUse, Source: srcNCCL},
	{Name: "NCCL_IB_GID_INDEX", Use: ncclUse, Source: srcNCCL},
	{Name: "NCCL_IB_ADDR_FAMILY", Use: ncclUse, Source: srcNCCL},
	{Name: "NCCL_IB_ADDR_RANGE", Use: ncclUse, Source: srcNCCL},
	{Name: "NCCL_IB_ROCE_VERSION_NUM", Use: ncclUse, Source: srcNCCL},
	{Name: "NCCL_NET", Use: ncclUse, Source: srcNCCL},
	{Name: "NCCL_NET_PLUGIN", Use: ncclUse, Source: srcNCCL},
	{Name: "NCCL_NET_GDR_LEVEL", Use: ncclUse, Source: srcNCCL},
	{Name: "NCCL_DMABUF_ENABLE", Use: ncclUse, Source: srcNCCL},
	{Name: "NCCL_CONF_FILE", Use: "the configuration file NCCL 2.23.4 and later reads first: `nccl-transport`", Source: srcNCCL},
	{Name: "RDMAV_DRIVERS", Use: "the libibverbs providers loaded besides `/etc/libibverbs.d`'s: `nccl-transport`", Source: srcVerbs},
	{Name: "IBV_DRIVERS", Use: "the older name of `RDMAV_DRIVERS`, read when it is unset", Source: srcVerbs},
}

var read = sync.OnceValue(func() Names {
	n := Names{Exact: map[string]bool{}}
	for _, v := range Read {
		if p, family := strings.CutSuffix(v.Name, "*"); family {
			n.Prefixes = append(n.Prefixes, p)
		} else {
			n.Exact[v.Name] = true
		}
	}
	return n
})

// IsRead reports whether gpu-preflight reads name from the container's environment.
func IsRead(name string) bool { return read().Has(name) }

// Scanned are the variables the image scan reads, in table order.
func Scanned() []string {
	var out []string
	for _, v := range Read {
		if v.Scan {
			out = append(out, v.Name)
		}
	}
	return out
}

// VersionOf are the variables that state lib's version, best first.
func VersionOf(lib Library) []string {
	var out []string
	for _, v := range Read {
		if v.Version == lib {
			out = append(out, v.Name)
		}
	}
	return out
}
