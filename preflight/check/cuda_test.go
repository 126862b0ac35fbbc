package check

import (
	"fmt"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// cudaDev is device i with every step of kernel mode passing, then
// step failing with code (when step is set).
func cudaDev(i int, step string, code int, name string) facts.CUDADevice {
	d := facts.CUDADevice{Ordinal: i, Name: "NVIDIA H100 80GB HBM3", UUID: fmt.Sprintf("GPU-5eed0001-%04x-4000-8001-000000001000", i),
		PCIBusID: "0000:18:00.0", ComputeCapability: "9.0", TotalBytes: 80 << 30, FreeBytes: 79 << 30}
	for _, s := range []string{facts.CUDAStepDevice, facts.CUDAStepContext, facts.CUDAStepMemory, facts.CUDAStepFatbin,
		facts.CUDAStepModule, facts.CUDAStepAlloc, facts.CUDAStepLaunch, facts.CUDAStepCopy, facts.CUDAStepCompare, facts.CUDAStepRelease} {
		st := facts.CUDAStep{Step: s}
		if s == step {
			st.Code, st.Error = code, name
			if code == 0 {
				st.Message = "the kernel was to write 0x9f1e0000 and 0x60e1ffff was copied back"
			}
			d.Steps = append(d.Steps, st)
			if s != facts.CUDAStepRelease {
				d.Steps = append(d.Steps, facts.CUDAStep{Step: facts.CUDAStepRelease})
			}
			return d
		}
		d.Steps = append(d.Steps, st)
	}
	return d
}

func cudaRan(n int, fail map[int]facts.CUDADevice) facts.CUDACheck {
	c := facts.CUDACheck{Mode: facts.CUDAModeKernel, Outcome: facts.CUDAOK, Library: "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
		DriverAPIVersion: 12040, Init: &facts.CUDAStep{Step: facts.CUDAStepInit}, DeviceCount: n, DurationMillis: 180,
		Fatbin: &facts.CUDAFatbin{Library: "/usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so", Framework: "torch",
			Bytes: 81920, Targets: []string{"sm_80", "sm_90"}}}
	for i := 0; i < n; i++ {
		d, ok := fail[i]
		if !ok {
			d = cudaDev(i, "", 0, "")
		} else {
			c.Outcome = facts.CUDAFailed
		}
		c.Devices = append(c.Devices, d)
	}
	return c
}

func cudaInitFails(code int, name, lib string) facts.CUDACheck {
	return facts.CUDACheck{Mode: facts.CUDAModeInit, Outcome: facts.CUDAFailed, Library: lib, DriverAPIVersion: 12040,
		Init: &facts.CUDAStep{Step: facts.CUDAStepInit, Code: code, Error: name, Message: "cuGetErrorString's text"}}
}

func TestCUDACheck(t *testing.T) {
	gpus := []facts.GPU{{Index: 0, Name: "NVIDIA H100 80GB HBM3"}}
	compat := "/usr/local/cuda/compat/libcuda.so.1"
	tests := []struct {
		rule      string
		cuda      facts.CUDACheck
		visible   []facts.GPU
		status    Status
		nodeFault bool
		says      []string
	}{
		{"off starts nothing and is skipped", facts.CUDACheck{Mode: facts.CUDAModeOff, Outcome: facts.CUDANotRun}, gpus, Skip, false,
			[]string{"PREFLIGHT_CUDA_CHECK=off"}},
		{"success on 8 GPUs passes, naming what ran and the fatbin", cudaRan(8, nil), gpus, Pass, false,
			[]string{"8 GPU(s)", "driver API 12.4", "PTX kernel", "libtorch_cuda.so", "sm_80 sm_90", "632.0 GiB free of 640.0 GiB"}},
		{"a hung cuInit is a node fault", facts.CUDACheck{Mode: facts.CUDAModeInit, Outcome: facts.CUDATimeout,
			Error: "the CUDA check gave no answer within PREFLIGHT_CUDA_TIMEOUT=2s; killed it and its process group"}, gpus, Error, true,
			[]string{"PREFLIGHT_CUDA_TIMEOUT=2s", "wedged", "Xid", "drain"}},
		{"no libcuda with GPUs expected is an error", facts.CUDACheck{Mode: facts.CUDAModeInit, Outcome: facts.CUDALibraryNotFound,
			Error: "libcuda.so.1: cannot open shared object file"}, gpus, Error, false, []string{"cannot open", "compute"}},
		{"no libcuda on a CPU-only host is info", facts.CUDACheck{Mode: facts.CUDAModeInit, Outcome: facts.CUDALibraryNotFound}, nil, Info, false,
			[]string{"PREFLIGHT_CUDA_CHECK=off"}},
		{"a libcuda without an entry point is an error", facts.CUDACheck{Mode: facts.CUDAModeInit, Outcome: facts.CUDALibraryIncomplete,
			Library: "/opt/old/libcuda.so.1", Error: "libcuda.so.1 has no symbol cuDeviceGetUuid_v2"}, gpus, Error, false,
			[]string{"/opt/old/libcuda.so.1", "cuDeviceGetUuid_v2", "LD_LIBRARY_PATH"}},
		{"no device without GPUs expected is info", cudaInitFails(100, "CUDA_ERROR_NO_DEVICE", "/x/libcuda.so.1"), nil, Info, false,
			[]string{"CUDA_ERROR_NO_DEVICE", "without GPUs"}},
		{"no device with GPUs visible is an error", cudaInitFails(100, "CUDA_ERROR_NO_DEVICE", "/x/libcuda.so.1"), gpus, Error, false,
			[]string{"CUDA_ERROR_NO_DEVICE", "CUDA_VISIBLE_DEVICES"}},
		{"802 asks for the fabric manager, a node fault", cudaInitFails(802, "CUDA_ERROR_SYSTEM_NOT_READY", "/x/libcuda.so.1"), gpus, Error, true,
			[]string{"CUDA_ERROR_SYSTEM_NOT_READY", "every GPU", "nvidia-fabricmanager"}},
		{"803 names the compat library loaded, a mismatch", cudaInitFails(803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", compat), gpus, Error, false,
			[]string{"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", compat, "take /usr/local/cuda/compat out of LD_LIBRARY_PATH"}},
		{"804 is forward compatibility on an unsupported GPU, a mismatch", cudaInitFails(804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", compat), gpus, Error, false,
			[]string{"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "data-center GPU"}},
		{"a name the library did not give comes from the table", cudaInitFails(802, "", "/x/libcuda.so.1"), gpus, Error, true,
			[]string{"CUDA_ERROR_SYSTEM_NOT_READY"}},
		{"an unknown code is named by its number", cudaInitFails(4242, "", "/x/libcuda.so.1"), gpus, Error, false,
			[]string{"CUresult 4242", "CUDA Driver API"}},
		{"46 at the context names the GPU and exclusive-process mode, a node fault",
			cudaRan(8, map[int]facts.CUDADevice{3: cudaDev(3, facts.CUDAStepContext, 46, "CUDA_ERROR_DEVICE_UNAVAILABLE")}), gpus, Error, true,
			[]string{"1 of 8 GPU(s)", "context: CUDA_ERROR_DEVICE_UNAVAILABLE", "GPU 3 (NVIDIA H100 80GB HBM3 GPU-5eed0001-0003", "exclusive-process"}},
		{"out of memory is a node fault", cudaRan(1, map[int]facts.CUDADevice{0: cudaDev(0, facts.CUDAStepMemory, 2, "CUDA_ERROR_OUT_OF_MEMORY")}), gpus, Error, true,
			[]string{"memory: CUDA_ERROR_OUT_OF_MEMORY", "GPU 0", "nvidia-smi"}},
		{"222 at the module is PTX too new for the driver, a mismatch",
			cudaRan(1, map[int]facts.CUDADevice{0: cudaDev(0, facts.CUDAStepModule, 222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION")}), gpus, Error, false,
			[]string{"module: CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "upgrade the host driver"}},
		{"218 at the module is a JIT failure, a mismatch",
			cudaRan(1, map[int]facts.CUDADevice{0: cudaDev(0, facts.CUDAStepModule, 218, "CUDA_ERROR_INVALID_PTX")}), gpus, Error, false,
			[]string{"module: CUDA_ERROR_INVALID_PTX", "libnvidia-ptxjitcompiler.so.1"}},
		{"209 at the fatbin is no kernel image for this GPU, a mismatch",
			cudaRan(2, map[int]facts.CUDADevice{0: cudaDev(0, facts.CUDAStepFatbin, 209, "CUDA_ERROR_NO_BINARY_FOR_GPU"),
				1: cudaDev(1, facts.CUDAStepFatbin, 209, "CUDA_ERROR_NO_BINARY_FOR_GPU")}), gpus, Error, false,
			[]string{"2 of 2 GPU(s)", "fatbin: CUDA_ERROR_NO_BINARY_FOR_GPU", "on GPU 0 (", ", GPU 1 (", "no kernel image for this GPU"}},
		{"a launch failure is a node fault", cudaRan(2, map[int]facts.CUDADevice{1: cudaDev(1, facts.CUDAStepLaunch, 719, "CUDA_ERROR_LAUNCH_FAILED")}), gpus, Error, true,
			[]string{"launch: CUDA_ERROR_LAUNCH_FAILED", "GPU 1", "dcgmi diag"}},
		{"a failed copy is a node fault", cudaRan(1, map[int]facts.CUDADevice{0: cudaDev(0, facts.CUDAStepCopy, 700, "CUDA_ERROR_ILLEGAL_ADDRESS")}), gpus, Error, true,
			[]string{"copy: CUDA_ERROR_ILLEGAL_ADDRESS"}},
		{"a wrong value copied back is a node fault", cudaRan(1, map[int]facts.CUDADevice{0: cudaDev(0, facts.CUDAStepCompare, 0, facts.CUDAWrongValue)}), gpus, Error, true,
			[]string{"compare: a wrong value", "0x60e1ffff was copied back", "dcgmi diag"}},
		{"a node fault and a mismatch together abort as a mismatch",
			cudaRan(2, map[int]facts.CUDADevice{0: cudaDev(0, facts.CUDAStepContext, 46, "CUDA_ERROR_DEVICE_UNAVAILABLE"),
				1: cudaDev(1, facts.CUDAStepFatbin, 209, "CUDA_ERROR_NO_BINARY_FOR_GPU")}), gpus, Error, false,
			[]string{"CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA_ERROR_NO_BINARY_FOR_GPU", "exclusive-process", "also: the framework library"}},
		{"contexts that cannot be released only warn", cudaRan(1, map[int]facts.CUDADevice{0: cudaDev(0, facts.CUDAStepRelease, 999, "CUDA_ERROR_UNKNOWN")}), gpus, Warn, true,
			[]string{"release: CUDA_ERROR_UNKNOWN", "could not be released"}},
		{"a fatbin that could not be read warns", func() facts.CUDACheck {
			c := cudaRan(1, nil)
			c.Fatbin = &facts.CUDAFatbin{Library: "/torch/lib/libtorch_cuda.so", Error: "fatbin: no container at .nv_fatbin offset 8"}
			return c
		}(), gpus, Warn, false, []string{"no container", "not proven"}},
		{"init mode passes without a kernel", func() facts.CUDACheck {
			c := cudaRan(1, nil)
			c.Mode, c.Fatbin = facts.CUDAModeInit, nil
			return c
		}(), gpus, Pass, false, []string{"1 GPU(s)", "primary context"}},
		{"a probe that could not start warns", facts.CUDACheck{Mode: facts.CUDAModeKernel, Outcome: facts.CUDAUnavailable, Error: "memfd: operation not permitted"}, gpus, Warn, false,
			[]string{"operation not permitted", "gpu-preflight-nvml cuda kernel"}},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			in := Input{Facts: facts.Facts{Host: facts.Host{CUDA: tt.cuda}}, Visible: tt.visible}
			f := CUDA.Run(in)
			if f.ID != "cuda" || f.Status != tt.status || f.NodeFault != tt.nodeFault {
				t.Fatalf("got %s %s nodeFault=%v (%s | %s), want %s nodeFault=%v", f.ID, f.Status, f.NodeFault, f.Message, f.Remedy, tt.status, tt.nodeFault)
			}
			checkFindingText(t, f, tt.says)
		})
	}
}
