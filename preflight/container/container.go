// Package container gathers what the image says about itself from its
// environment and files: the environment variables gpu-preflight reads,
// the CUDA toolkit under /usr/local/cuda, and the forward-compatibility
// libcuda libraries beside it. It also decides which of the host's GPUs
// the training process will see (VisibleGPUs).
//
// Requirements, the library stack, frameworks and identity are filled by
// other packages (require, image, report/identity). Every gatherer fails
// soft: a missing file is a fact, and any other failure becomes a warning
// for the caller to log.
package container

import (
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// Gather reads the container facts under root; environ is the process
// environment in os.Environ form.
func Gather(root fsroot.Root, environ []string) (facts.Container, []string) {
	var c facts.Container
	var warns []string
	c.Env = Env(environ)
	var w []string
	c.CUDA, w = gatherCUDA(root, c.Env)
	warns = append(warns, w...)
	c.Compat, w = gatherCompat(root)
	warns = append(warns, w...)
	return c, warns
}

// Variables kept by Env, by prefix and by name. Sources: the nvidia/cuda
// and NGC images' environments (docs/sources.md, "CUDA stack versions on disk"), the NVIDIA
// Container Toolkit's NVIDIA_* variables (docs/sources.md, "Who evaluates
// NVIDIA_REQUIRE_*"), and what the image scan reads (image.EnvKeys).
var (
	keptPrefixes = []string{
		"NVIDIA_",    // NVIDIA_VISIBLE_DEVICES, NVIDIA_REQUIRE_*, NVIDIA_DISABLE_REQUIRE, NVIDIA_DRIVER_CAPABILITIES, NVIDIA_PYTORCH_VERSION...
		"NV_",        // NV_CUDA_CUDART_VERSION, NV_CUDNN_VERSION, NV_LIBNCCL_PACKAGE_VERSION, NV_CUDA_COMPAT_PACKAGE...
		"CUDA_",      // CUDA_VERSION, CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, CUDA_DRIVER_VERSION, CUDA_MODULE_LOADING...
		"PREFLIGHT_", // gpu-preflight's own configuration and PREFLIGHT_IMAGE*
	}
	keptNames = map[string]bool{
		"NVARCH":                true,
		"CUDNN_VERSION":         true,
		"NCCL_VERSION":          true,
		"CUBLAS_VERSION":        true,
		"TENSORRT_VERSION":      true,
		"TRT_VERSION":           true,
		"TORCH_CUDA_ARCH_LIST":  true,
		"PYTORCH_VERSION":       true,
		"PYTORCH_BUILD_VERSION": true,
		"LD_LIBRARY_PATH":       true, // compat libraries are used through it
		"PYTHONPATH":            true, // site-packages the scan reads
		"VIRTUAL_ENV":           true,
		"CONDA_PREFIX":          true,
	}
)

// Kept reports whether Env keeps the variable name.
func Kept(name string) bool {
	if keptNames[name] {
		return true
	}
	for _, p := range keptPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Env returns the variables of environ that gpu-preflight reads. A variable
// set to the empty string is kept with the value "" (an empty
// CUDA_VISIBLE_DEVICES hides every GPU; an unset one hides none). When a
// name appears twice the first wins, as it does for getenv(3) and Go's
// os.Getenv.
func Env(environ []string) map[string]string {
	env := map[string]string{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || !Kept(name) {
			continue
		}
		if _, dup := env[name]; !dup {
			env[name] = value
		}
	}
	return env
}
