package diff

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// smoke is a kernel-mode CUDA check that passed on two H100s.
func smoke(lib string, free uint64, millis float64) facts.CUDACheck {
	c := facts.CUDACheck{Mode: facts.CUDAModeKernel, Outcome: facts.CUDAOK, Library: lib, DriverAPIVersion: 12020,
		Init: &facts.CUDAStep{Step: facts.CUDAStepInit, Millis: millis}, DeviceCount: 2, DurationMillis: millis * 10,
		Fatbin: &facts.CUDAFatbin{Library: "/paddle/base/libpaddle.so", Framework: "paddlepaddle", Bytes: 4096, Targets: []string{"sm_80", "sm_90"}}}
	for i, u := range []string{"GPU-5c4b7a2e-0000-4d7e-9f1a-000000000000", "GPU-5c4b7a2e-1111-4d7e-9f1a-111111111111"} {
		c.Devices = append(c.Devices, facts.CUDADevice{Ordinal: i, Name: "NVIDIA H100 80GB HBM3", UUID: u, ComputeCapability: "9.0",
			ComputeMode: "default", TotalBytes: 85520809984, FreeBytes: free, Result: "ok",
			Steps: []facts.CUDAStep{{Step: facts.CUDAStepContext, Millis: millis}}, DurationMillis: millis})
	}
	return c
}

// What the CUDA check saw matters where it changes whether CUDA works: the
// library the linker chose, the driver API, each GPU's result and compute
// mode. Free memory and timings differ between any two runs.
func TestDiffCUDARules(t *testing.T) {
	const u1 = "GPU-5c4b7a2e-1111-4d7e-9f1a-111111111111"
	host := "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
	compat := "/usr/local/cuda/compat/libcuda.so.1"
	withCUDA := func(c facts.CUDACheck) facts.Facts {
		f := baseFacts()
		f.Host.CUDA = c
		return f
	}
	old := record(withCUDA(smoke(host, 80<<30, 3)), passAll(), nil, "0123456789abcdef0123456789abcdef", t0)
	new := record(withCUDA(smoke(host, 70<<30, 9)), passAll(), nil, "fedcba9876543210fedcba9876543210", t0)
	if got := Diff(old, new); len(got) != 0 {
		t.Fatalf("free memory and timings counted as changes: %+v", got)
	}

	f := withCUDA(smoke(compat, 80<<30, 3))
	f.Host.CUDA.Outcome, f.Host.CUDA.DriverAPIVersion = facts.CUDAFailed, 12040
	f.Host.CUDA.Devices[1].ComputeMode = "exclusive-process"
	f.Host.CUDA.Devices[1].Steps[0] = facts.CUDAStep{Step: facts.CUDAStepContext, Code: 46, Error: "CUDA_ERROR_DEVICE_UNAVAILABLE"}
	f.Host.CUDA.Devices[1].Result = "context: CUDA_ERROR_DEVICE_UNAVAILABLE"
	assertChanges(t, Diff(old, record(f, passAll(), nil, new.RunID, t0)), []Change{
		{"CUDA check", "kernel: ok", "kernel: failed", true},
		{"CUDA driver API", "12.2", "12.4", true},
		{"CUDA library", host, compat, true},
		{"CUDA GPU " + u1, "ok", "context: CUDA_ERROR_DEVICE_UNAVAILABLE", true},
		{"CUDA GPU " + u1 + " compute mode", "default", "exclusive-process", true},
	})
}
