package redact

import (
	"slices"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
)

// allowedPrefixes are the variable families a record keeps: the GPU stack,
// the launchers and gpu-preflight, none meant to carry a secret.
var allowedPrefixes = []string{
	"NVIDIA_",       // container toolkit: NVIDIA_VISIBLE_DEVICES, NVIDIA_REQUIRE_*, NVIDIA_DRIVER_CAPABILITIES
	"NV_",           // nvidia/cuda base images: NV_CUDA_LIB_VERSION, NV_CUDNN_VERSION
	"CUDA_",         // CUDA_VERSION, CUDA_VISIBLE_DEVICES, CUDA_MODULE_LOADING
	"CUDNN_",        // cuDNN settings
	"CUBLAS_",       // CUBLAS_WORKSPACE_CONFIG
	"NCCL_",         // NCCL tuning and debugging
	"PREFLIGHT_",    // gpu-preflight's own configuration
	"TORCH_",        // TORCH_CUDA_ARCH_LIST, TORCH_NCCL_*
	"PYTORCH_",      // PYTORCH_CUDA_ALLOC_CONF
	"TORCHELASTIC_", // torchrun: TORCHELASTIC_RUN_ID, TORCHELASTIC_RESTART_COUNT
	"PET_",          // torchrun options set as env by Kubeflow's PyTorchJob: PET_NNODES, PET_RDZV_ID
	"PADDLE_",       // PaddlePaddle distributed: PADDLE_TRAINER_ID, PADDLE_JOB_ID
	"FLAGS_",        // PaddlePaddle runtime flags: FLAGS_cudnn_deterministic
	"SLURM_",        // Slurm job, step and rank
	"OMPI_COMM_WORLD_",
	"XLA_",        // XLA_FLAGS, XLA_PYTHON_CLIENT_MEM_FRACTION
	"KUBERNETES_", // KUBERNETES_SERVICE_HOST says the pod runs in a cluster
}

// TensorFlowPrefixes are TensorFlow's own families, not every TF_ name:
// TF_VAR_* and TF_CLI_CONFIG_FILE are Terraform's and may hold credentials
// (docs/sources.md, "The recorded environment").
var TensorFlowPrefixes = []string{"TF_CPP_", "TF_FORCE_GPU_", "TF_GPU_", "TF_XLA_", "TF_ENABLE_", "TF_CUDNN_",
	"TF_DETERMINISTIC_", "TF_NUM_INTEROP_", "TF_NUM_INTRAOP_"}

// allowedNames are single variables recorded by exact name.
var allowedNames = map[string]bool{
	// The search paths explain "command not found" and "wrong libcuda loaded".
	"PATH": true, "LD_LIBRARY_PATH": true, "LD_PRELOAD": true,
	// torchrun / generic distributed launchers.
	"RANK": true, "LOCAL_RANK": true, "WORLD_SIZE": true, "LOCAL_WORLD_SIZE": true,
	"GROUP_RANK": true, "ROLE_RANK": true, "MASTER_ADDR": true, "MASTER_PORT": true,
	// The downward-API names gpu-preflight documents, Indexed Jobs' index.
	"POD_NAME": true, "POD_NAMESPACE": true, "POD_UID": true, "NODE_NAME": true,
	"JOB_COMPLETION_INDEX": true,
	// TensorFlow's cluster and task for MultiWorkerMirroredStrategy.
	"TF_CONFIG":       true,
	"OMP_NUM_THREADS": true,
	"HOSTNAME":        true,
}

var allowed = envvars.Names{Exact: allowedNames, Prefixes: slices.Concat(allowedPrefixes, TensorFlowPrefixes)}

// Allowed reports whether the variable name may be recorded: those
// gpu-preflight reads and the record's own families.
func Allowed(name string) bool { return envvars.IsRead(name) || allowed.Has(name) }

// Env returns the allow-listed variables of env, credentials replaced.
func Env(env envvars.Env) map[string]string {
	out := env.Filter(Allowed)
	for name, value := range out {
		if Sensitive(name) {
			out[name] = Placeholder
		} else {
			out[name] = Value(value)
		}
		if r := redactTokens(name); r != name {
			out[r] = Placeholder
			delete(out, name)
		}
	}
	return out
}
