package cuda

import "strconv"

// Fault says whose problem a failure is, which picks an abort's exit code:
// a node fault (another node of the kind would run the job: the node-fault
// code, retried elsewhere) or a mismatch (image and node do not fit).
type Fault int

// Faults.
const (
	Mismatch Fault = iota
	NodeFault
)

// Meaning is what a CUresult means for the job about to start.
type Meaning struct {
	Name   string // CUDA's, cuGetErrorName's
	Fault  Fault
	Remedy string
}

// Meanings are the CUresults the smoke test can meet, by code, named as the
// CUDA Driver API's CUresult enum and cuGetErrorName of driver 535 name them
// (testdata/libcuda-error-names.txt). Remedies: docs/cuda.md.
var Meanings = map[int]Meaning{
	2: {"CUDA_ERROR_OUT_OF_MEMORY", NodeFault,
		"another process holds this GPU's memory: nvidia-smi on the host lists it; wait for it or drain the node (a process left over from an earlier job is the usual cause)"},
	3: {"CUDA_ERROR_NOT_INITIALIZED", NodeFault,
		"the driver did not initialise: check the node's driver (nvidia-smi, dmesg)"},
	34: {"CUDA_ERROR_STUB_LIBRARY", Mismatch,
		"the libcuda.so.1 loaded is the CUDA toolkit's link-time stub (lib64/stubs): take the stubs directory out of LD_LIBRARY_PATH and /etc/ld.so.conf.d in the image"},
	46: {"CUDA_ERROR_DEVICE_UNAVAILABLE", NodeFault,
		"the GPU is busy or unavailable: another process holds it in exclusive-process compute mode (nvidia-smi on the host shows \"E. Process\" and the process); wait for it or drain the node, or set the compute mode back with nvidia-smi -c DEFAULT if exclusivity is not wanted"},
	100: {"CUDA_ERROR_NO_DEVICE", Mismatch,
		"CUDA sees no GPU: run the container with GPUs exposed (docker --gpus, the nvidia.com/gpu resource, NVIDIA_VISIBLE_DEVICES) and check that CUDA_VISIBLE_DEVICES does not hide them all"},
	101: {"CUDA_ERROR_INVALID_DEVICE", Mismatch,
		"CUDA_VISIBLE_DEVICES names a device this container does not have: fix or unset it"},
	200: {"CUDA_ERROR_INVALID_IMAGE", Mismatch,
		"the framework library's GPU code is not a valid image for this driver: reinstall the framework build for this platform"},
	209: {"CUDA_ERROR_NO_BINARY_FOR_GPU", Mismatch,
		"the framework library has no kernel image for this GPU (no cubin for its compute capability, no PTX the driver can compile for it): install a build of the framework compiled for this GPU, or run the job on GPUs the build supports"},
	214: {"CUDA_ERROR_ECC_UNCORRECTABLE", NodeFault,
		"the GPU reports an uncorrectable ECC error: drain the node and have the GPU reset (nvidia-smi -r) or replaced"},
	218: {"CUDA_ERROR_INVALID_PTX", Mismatch,
		"the driver's PTX JIT compiler failed on PTX it should accept: the container's libnvidia-ptxjitcompiler.so.1 is not the one of its libcuda.so.1 (a forward-compatibility directory without it, or driver libraries installed in the image); use the libraries the NVIDIA Container Toolkit mounts"},
	221: {"CUDA_ERROR_JIT_COMPILER_NOT_FOUND", Mismatch,
		"libnvidia-ptxjitcompiler.so.1 is not in the container: set NVIDIA_DRIVER_CAPABILITIES to include compute (the toolkit then mounts it)"},
	222: {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", Mismatch,
		"the PTX was produced by a newer CUDA than this driver supports: upgrade the host driver, use the image's forward-compatibility package on a data-center GPU, or use a build for an older CUDA"},
	223: {"CUDA_ERROR_JIT_COMPILATION_DISABLED", Mismatch,
		"PTX JIT compilation is disabled (CUDA_DISABLE_PTX_JIT): unset it, or use a build with cubins for this GPU"},
	304: {"CUDA_ERROR_OPERATING_SYSTEM", NodeFault,
		"an operating system call of the driver failed: check the container's device access (/dev/nvidia*, the device cgroup) and dmesg on the host"},
	700: {"CUDA_ERROR_ILLEGAL_ADDRESS", NodeFault, gpuFaulty},
	714: {"CUDA_ERROR_HARDWARE_STACK_ERROR", NodeFault, gpuFaulty},
	715: {"CUDA_ERROR_ILLEGAL_INSTRUCTION", NodeFault, gpuFaulty},
	719: {"CUDA_ERROR_LAUNCH_FAILED", NodeFault, gpuFaulty},
	702: {"CUDA_ERROR_LAUNCH_TIMEOUT", NodeFault,
		"the kernel was stopped by the display watchdog: run training on GPUs that do not drive a display"},
	802: {"CUDA_ERROR_SYSTEM_NOT_READY", NodeFault,
		"the system is not ready for CUDA work: on an NVSwitch system (HGX/DGX) start nvidia-fabricmanager on the node, at the driver's exact version (systemctl start nvidia-fabricmanager), and wait until nvidia-smi -q shows the fabric state Completed"},
	803: {"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", Mismatch,
		"the image's forward-compatibility libcuda does not match the host's kernel driver: take /usr/local/cuda/compat out of LD_LIBRARY_PATH (and /etc/ld.so.conf.d) so the host driver's libcuda is used, or upgrade the image's cuda-compat package or the host driver so they pair"},
	804: {"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", Mismatch,
		"forward compatibility was attempted on a GPU that does not support it (it needs a data-center GPU): take /usr/local/cuda/compat out of the library path on this kind of node and use a build for the host driver's CUDA, or upgrade the host driver"},
	805: {"CUDA_ERROR_MPS_CONNECTION_FAILED", NodeFault, mpsFaulty},
	806: {"CUDA_ERROR_MPS_RPC_FAILURE", NodeFault, mpsFaulty},
	807: {"CUDA_ERROR_MPS_SERVER_NOT_READY", NodeFault, mpsFaulty},
	808: {"CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", NodeFault, mpsFaulty},
	999: {"CUDA_ERROR_UNKNOWN", NodeFault,
		"the driver failed without a reason: check dmesg on the host for Xid errors and drain the node if the GPU is unhealthy"},
}

const (
	gpuFaulty = "a one-thread kernel that cannot fault failed on this GPU: check dmesg on the host for Xid errors, drain the node and run DCGM diagnostics (dcgmi diag -r 3) before it takes jobs again"
	mpsFaulty = "the CUDA MPS daemon of the node refused the connection: check nvidia-cuda-mps-control on the host (its log, its client limit) or run without MPS"
)

// Name returns the library's name for code, else the table's, else "CUresult <code>".
func Name(code int, name string) string {
	if name != "" {
		return name
	}
	if m, ok := Meanings[code]; ok {
		return m.Name
	}
	return "CUresult " + strconv.Itoa(code)
}

// Lookup returns the meaning of code; an unknown one is a mismatch.
func Lookup(code int) Meaning {
	if m, ok := Meanings[code]; ok {
		return m
	}
	return Meaning{Name: Name(code, ""), Fault: Mismatch,
		Remedy: "see the CUresult list of the CUDA Driver API reference for this code, and run the job's own CUDA check in the container to reproduce it"}
}
