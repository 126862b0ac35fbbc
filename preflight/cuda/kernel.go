// Package cuda is what the shim's checks and the probe share about the
// opt-in CUDA smoke test (PREFLIGHT_CUDA_CHECK): the kernel the probe runs,
// the table of CUresult codes with what each means for the job, the bounds
// on what the probe does, and the formats of what it reports. It is pure:
// the runner that starts the probe is preflight/cudaprobe, and the probe
// side (dlopen of libcuda.so.1, the calls) is cmd/gpu-preflight-nvml.
package cuda

import (
	"encoding/hex"
	"fmt"
)

// ProbeArg is the probe's first argument for its cuda mode.
const ProbeArg = "cuda"

// Soname is the driver library the probe loads, as the CUDA runtime and
// every framework do: by soname, through the library path, so that an image
// which puts /usr/local/cuda/compat first gets its forward-compatibility
// copy, as the job will.
const Soname = "libcuda.so.1"

// KernelName is the kernel's entry in KernelPTX.
const KernelName = "gpu_preflight_write"

// KernelPTX is the module kernel mode JIT-compiles on every device: one
// thread stores its second parameter at the address in its first.
//
// PTX ISA 4.0 with target sm_50 (CUDA 6.0), so that any driver that
// supports a Maxwell or newer GPU can compile it: a failure is then the
// driver's or the GPU's, never this module's. Checked with ptxas of CUDA
// 11.8 for sm_50, sm_70, sm_80 and sm_90 (docs/cuda.md).
const KernelPTX = `.version 4.0
.target sm_50
.address_size 64

.visible .entry gpu_preflight_write(
	.param .u64 out,
	.param .u32 value
)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<3>;

	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [value];
	cvta.to.global.u64 %rd2, %rd1;
	st.global.u32 [%rd2], %r1;
	ret;
}
`

// KernelValue is what the kernel writes on device ordinal i: distinct per
// device, so a value copied from the wrong device does not pass.
func KernelValue(ordinal int) uint32 { return 0x9f1e0000 | uint32(ordinal&0xffff) }

// Bounds on what the probe does and reports.
const (
	// MaxDevices bounds the devices tested; a node has at most a few dozen.
	MaxDevices = 64
	// MaxFatbins bounds the fatbin containers kernel mode loads, one per
	// distinct set of targets: libraries carry a handful.
	MaxFatbins = 8
	// MaxFatbinBytes bounds their bytes in all (the probe holds them in
	// memory once). Framework containers are a few MiB.
	MaxFatbinBytes = 256 << 20
)

// FormatUUID writes a 16-byte CUuuid the way NVML and nvidia-smi print a
// GPU's UUID, "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", so devices match
// the GPUs of the NVML probe.
func FormatUUID(b []byte) string {
	if len(b) != 16 {
		return ""
	}
	h := hex.EncodeToString(b)
	return fmt.Sprintf("GPU-%s-%s-%s-%s-%s", h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])
}

// ComputeModeName names a CU_DEVICE_ATTRIBUTE_COMPUTE_MODE value
// (CUcomputemode: 0 default, 2 prohibited, 3 exclusive process; 1, exclusive
// thread, was removed in CUDA 8).
func ComputeModeName(mode int) string {
	switch mode {
	case 0:
		return "default"
	case 2:
		return "prohibited"
	case 3:
		return "exclusive-process"
	}
	return fmt.Sprintf("mode %d", mode)
}
