// Package cuda is what the checks and the probe share about the opt-in CUDA
// smoke test: the kernel, the CUresult table, the bounds and the report
// formats. It is pure: preflight/cudaprobe runs the probe, and
// cmd/gpu-preflight-nvml is its other side.
package cuda

import (
	"encoding/hex"
	"fmt"
)

// ProbeArg is the probe's first argument for its cuda mode.
const ProbeArg = "cuda"

// Soname is the driver library the probe loads, by soname as the runtime
// does, so an image that puts /usr/local/cuda/compat first gets its forward
// compatibility copy, as the job will.
const Soname = "libcuda.so.1"

// KernelName is the kernel's entry in KernelPTX.
const KernelName = "gpu_preflight_write"

// KernelPTX is the module kernel mode JIT-compiles on every device: one
// thread stores its second parameter at the address in its first. PTX ISA
// 4.0 for sm_50 (CUDA 6.0), so any driver of a Maxwell or newer GPU compiles
// it and a failure is never the module's (ptxas checks: docs/cuda.md).
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

// KernelValue is what the kernel writes on device ordinal i, distinct per device.
func KernelValue(ordinal int) uint32 { return 0x9f1e0000 | uint32(ordinal&0xffff) }

// Bounds on what the probe does and reports.
const (
	MaxDevices     = 64        // a node has at most a few dozen
	MaxFatbins     = 8         // kernel mode's containers, one per distinct target set: libraries carry a handful
	MaxFatbinBytes = 256 << 20 // all of them, held once; framework containers are a few MiB
)

// FormatUUID writes a CUuuid as NVML prints a GPU's UUID, so devices match the NVML probe's.
func FormatUUID(b []byte) string {
	if len(b) != 16 {
		return ""
	}
	h := hex.EncodeToString(b)
	return fmt.Sprintf("GPU-%s-%s-%s-%s-%s", h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])
}

// ComputeModeName names a CU_DEVICE_ATTRIBUTE_COMPUTE_MODE value (1,
// exclusive thread, was removed in CUDA 8).
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
