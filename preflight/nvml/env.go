package nvml

import "strings"

// probeEnv is what a probe is started with of the environment: what it, the driver libraries
// and ld.so read; "_" ends a family (docs/node-health.md, "The probe's environment").
var probeEnv = []struct{ name, readBy string }{
	{"PREFLIGHT_NVML_LIBRARY", "the probe: the NVML library it loads"},
	{"CUDA_", "libcuda: the CUDA Environment Variables of the CUDA C++ Programming Guide, CUPTI's CUDA_INJECTION64_PATH"},
	{"HOME", "libcuda: CUDA_CACHE_PATH's default, ~/.nv/ComputeCache"},
	{"NVIDIA_VISIBLE_DEVICES", "the NVIDIA Container Toolkit: the GPUs given to the container"},
	{"NVIDIA_DRIVER_CAPABILITIES", "the NVIDIA Container Toolkit: the driver libraries given to the container"},
	{"NVIDIA_MIG_CONFIG_DEVICES", "the NVIDIA Container Toolkit: the MIG devices the container may configure"},
	{"NVIDIA_MIG_MONITOR_DEVICES", "the NVIDIA Container Toolkit: the MIG devices the container may monitor"},
	{"LD_", "ld.so: which libcuda and libnvidia-ml load, what is preloaded or audited beside them"},
	{"GLIBC_TUNABLES", "ld.so: the hardware capabilities that choose a library's subdirectory"},
	{"QEMU_", "qemu-user, which binfmt_misc runs a probe of another architecture under: its sysroot, its CPU"},
	{"RDMAV_", "libibverbs, in the RDMA check: fork and huge-page safety, the providers to load"},
	{"IBV_", "libibverbs: the older names of the same"},
	{"MLX5_", "the mlx5 provider's tuning"},
	{"MLX4_", "the mlx4 provider's tuning"},
	{"FAKE_NVML_SCENARIO", "test/fakenvml's library, in place of libnvidia-ml"},
	{"FAKE_CUDA_SCENARIO", "test/fakecuda's library, in place of libcuda"},
	{"FAKE_CUDA_COMPAT_SCENARIO", "test/fakecuda's library, in place of the compat libcuda"},
	{"FAKE_CUDA_LOADED", "test/fakecuda's library: the file each load appends to"},
	{"FAKE_VERBS_SCENARIO", "test/fakeverbs's library, in place of libibverbs"},
	{"FAKE_VERBS_LOADED", "test/fakeverbs's library: the file each load appends to"},
	{"GPU_PREFLIGHT_E2E_RUN", "test/e2e: the tag that finds a probe left running"},
}

// ProbeEnviron is env's share for a probe, in order; never nil, which exec.Cmd reads as all of ours.
func ProbeEnviron(env []string) []string {
	out := []string{}
	for _, kv := range env {
		if name, _, ok := strings.Cut(kv, "="); ok && probeReads(name) {
			out = append(out, kv)
		}
	}
	return out
}

func probeReads(name string) bool {
	for _, v := range probeEnv {
		if name == v.name || strings.HasSuffix(v.name, "_") && strings.HasPrefix(name, v.name) {
			return true
		}
	}
	return false
}
