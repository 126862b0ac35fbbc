package nvml

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/test/fakecuda"
	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
	"github.com/gpu-preflight/gpu-preflight/test/fakeverbs"
)

// printEnv runs /usr/bin/env as the probe program with env, and returns what it was given.
func printEnv(t *testing.T, env []string) []string {
	t.Helper()
	x := Execute(context.Background(), nil, Options{Path: "/usr/bin/env", NoMemfd: true, Env: env})
	if !x.Started() || x.WaitErr != nil {
		t.Fatalf("/usr/bin/env as the probe: %v %v", x.Tried, x.WaitErr)
	}
	return strings.Fields(string(x.Stdout))
}

func TestTheProbeGetsWhatItTheDriverAndTheLoaderReadAndNothingElse(t *testing.T) {
	read := []string{
		"PREFLIGHT_NVML_LIBRARY=/lib/libnvidia-ml.so.1",
		"CUDA_VISIBLE_DEVICES=1,0", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_CACHE_PATH=/cache", "CUDA_INJECTION64_PATH=/cupti.so",
		"HOME=/root",
		"NVIDIA_VISIBLE_DEVICES=GPU-0", "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
		"NVIDIA_MIG_CONFIG_DEVICES=all", "NVIDIA_MIG_MONITOR_DEVICES=all",
		"LD_LIBRARY_PATH=/usr/local/cuda/compat", "LD_PRELOAD=/share.so", "LD_AUDIT=/audit.so", "GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2",
		"QEMU_LD_PREFIX=/usr/aarch64-linux-gnu",
		"RDMAV_FORK_SAFE=1", "IBV_DRIVERS=mlx5", "MLX5_SINGLE_THREADED=1", "MLX4_SINGLE_THREADED=1",
		fakeverbs.EnvScenario + "=/s", fakeverbs.EnvLoaded + "=/l",
		fakenvml.EnvScenario + "=/s", fakecuda.EnvScenario + "=/s", fakecuda.EnvCompatScenario + "=/s", fakecuda.EnvLoaded + "=/l",
		"GPU_PREFLIGHT_E2E_RUN=00",
	}
	jobs := []string{
		"JOB_BLOB=" + strings.Repeat("x", 1<<16), "NVIDIA_REQUIRE_CUDA=cuda>=12.0", "PATH=/bin", "PREFLIGHT_LOG_FORMAT=json",
		"CUDAX=1", "LDFLAGS=-s", "HOMEDIR=/h", "NVIDIA_VISIBLE_DEVICESX=1", "PYTHONPATH=/p",
	}
	var env []string
	for i, kv := range read {
		env = append(env, kv, jobs[i%len(jobs)])
	}
	if got := printEnv(t, env); !slices.Equal(got, read) {
		t.Errorf("the probe got\n%q\nwant\n%q", got, read)
	}
}

// exec.Cmd reads a nil Env as this process's whole environment.
func TestAProbeGivenNoneOfItsVariablesGetsNone(t *testing.T) {
	if got := printEnv(t, []string{"JOB=1", "PATH=/bin"}); len(got) != 0 {
		t.Errorf("the probe got %q, want nothing", got)
	}
}
