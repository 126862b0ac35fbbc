package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/cuda"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// CUDA is the `cuda` check: the opt-in smoke test (PREFLIGHT_CUDA_CHECK)
// initialised CUDA through the library the job will load, and in kernel
// mode ran a kernel on every device. cuda.Meanings says which failures are
// node faults and which are mismatches.
var CUDA = Check{ID: "cuda", rule: cudaCheck}

func cudaCheck(in Input) Finding {
	c := in.Facts.Host.CUDA
	f := Finding{}
	expectGPU := len(in.Visible) > 0 || in.Options.RequireGPU || in.Options.MinGPUs > 0
	switch c.Outcome {
	case facts.CUDANotRun, "":
		f.Status = Skip
		f.Message = "CUDA smoke test off (PREFLIGHT_CUDA_CHECK=off): nothing was started"
	case facts.CUDATimeout:
		f.Status, f.NodeFault = Error, true
		f.Message = orUnknown(c.Error) + "; a CUDA initialisation that does not return means a wedged driver or GPU"
		f.Remedy = "check the node's GPUs (nvidia-smi on the host, dmesg for Xid errors) and drain it if CUDA hangs; " +
			"if the node is merely slow (cuInit on many GPUs without persistence mode takes seconds: nvidia-smi -pm 1), raise PREFLIGHT_CUDA_TIMEOUT"
	case facts.CUDAUnavailable, facts.CUDAProbeFailed:
		f.Status = Warn
		f.Message = "CUDA smoke test did not run: " + orUnknown(c.Error)
		f.Remedy = "allow exec from memfd (vm.memfd_noexec < 2, no seccomp rule against it) or install gpu-preflight-nvml beside gpu-preflight; " +
			"run `gpu-preflight-nvml cuda " + c.Mode + "` in the container to see its error"
	case facts.CUDALibraryNotFound:
		f.Status = Info
		if expectGPU {
			f.Status = Error
		}
		f.Message = fmt.Sprintf("%s could not be loaded (%s): no CUDA program can start in this container", cuda.Soname, orUnknown(c.Error))
		f.Remedy = "run the container with the NVIDIA Container Toolkit and NVIDIA_DRIVER_CAPABILITIES including compute (it mounts the driver's libcuda.so.1); on a CPU-only host, set PREFLIGHT_CUDA_CHECK=off"
	case facts.CUDALibraryIncomplete:
		f.Status = Error
		f.Message = fmt.Sprintf("the %s that was loaded (%s) is not a usable CUDA driver library: %s", cuda.Soname, orUnknown(c.Library), orUnknown(c.Error))
		f.Remedy = "remove the copy of libcuda.so.1 the image puts before the driver's on the library path (LD_LIBRARY_PATH, /etc/ld.so.conf.d); the NVIDIA Container Toolkit mounts the right one"
	default: // facts.CUDAOK, facts.CUDAFailed
		cudaResult(c, expectGPU, &f)
	}
	return f
}

func cudaResult(c facts.CUDACheck, expectGPU bool, f *Finding) {
	where := fmt.Sprintf("%s from %s, driver API %s", cuda.Soname, orUnknown(c.Library), orUnknown(cuda.Version(c.DriverAPIVersion)))
	if c.Init != nil && c.Init.Failed() {
		m := cuda.Lookup(c.Init.Code)
		name := cuda.Name(c.Init.Code, c.Init.Error)
		if c.Init.Code == cudaErrorNoDevice && !expectGPU {
			f.Status = Info
			f.Message = fmt.Sprintf("CUDA found no device (%s from cuInit, %s): expected on a host without GPUs", name, where)
			f.Remedy = "for a GPU job, run it with GPUs exposed to the container; otherwise set PREFLIGHT_CUDA_CHECK=off"
			return
		}
		f.Status, f.NodeFault = Error, m.Fault == cuda.NodeFault
		f.Message = fmt.Sprintf("CUDA failed to initialise on every GPU: %s: %s (%s; %s)",
			c.Init.Step, name, orUnknown(c.Init.Message), where)
		f.Remedy = m.Remedy
		return
	}

	type failure struct {
		step, name, text string
		meaning          cuda.Meaning
		gpus             []string
	}
	var failures []*failure
	byKey := map[string]*failure{}
	failed, releaseOnly := 0, true
	for _, d := range c.Devices {
		s := d.Failed()
		if s == nil {
			continue
		}
		failed++
		fl := failure{step: s.Step, name: cuda.Name(s.Code, s.Error), text: s.Message, meaning: cuda.Lookup(s.Code)}
		if s.Error == facts.CUDAWrongValue {
			fl.name, fl.meaning = "a wrong value", cuda.Meaning{Fault: cuda.NodeFault, Remedy: wrongValueRemedy}
		}
		if s.Step != facts.CUDAStepRelease {
			releaseOnly = false
		}
		key := fl.step + "\x00" + fl.name + "\x00" + fl.text
		if byKey[key] == nil {
			byKey[key] = &fl
			failures = append(failures, &fl)
		}
		byKey[key].gpus = append(byKey[key].gpus, cudaDeviceName(d))
	}
	if failed == 0 {
		cudaPass(c, where, f)
		return
	}

	f.Status, f.NodeFault = Error, true
	if releaseOnly {
		f.Status = Warn
	}
	var msg, remedies []string
	for _, fl := range failures {
		line := fmt.Sprintf("%s: %s", fl.step, fl.name)
		if fl.text != "" {
			line += " (" + fl.text + ")"
		}
		msg = append(msg, line+" on "+strings.Join(fl.gpus, ", "))
		if !slices.Contains(remedies, fl.meaning.Remedy) {
			remedies = append(remedies, fl.meaning.Remedy)
		}
		if fl.meaning.Fault != cuda.NodeFault {
			f.NodeFault = false
		}
	}
	f.Message = fmt.Sprintf("CUDA smoke test (%s) failed on %d of %d GPU(s) (%s): %s",
		c.Mode, failed, len(c.Devices), where, strings.Join(msg, "; "))
	f.Remedy = strings.Join(remedies, "; also: ")
	if releaseOnly {
		f.Remedy = "the GPUs work, but their contexts could not be released before the job starts: " + f.Remedy
	}
}

func cudaPass(c facts.CUDACheck, where string, f *Finding) {
	f.Status = Pass
	if len(c.Devices) == 0 {
		f.Status = Error
		f.Message = fmt.Sprintf("cuInit succeeded but CUDA enumerates no device (%s)", where)
		f.Remedy = cuda.Lookup(cudaErrorNoDevice).Remedy
		return
	}
	var free, total uint64
	for _, d := range c.Devices {
		free += d.FreeBytes
		total += d.TotalBytes
	}
	f.Message = fmt.Sprintf("CUDA initialised %d GPU(s) in %.0f ms (%s): a primary context on each, %s free of %s",
		len(c.Devices), c.DurationMillis, where, gib(free), gib(total))
	if c.Mode != facts.CUDAModeKernel {
		return
	}
	f.Message += "; a JIT-compiled PTX kernel ran and wrote the value it was given on each"
	switch fb := c.Fatbin; {
	case fb == nil:
		f.Message += "; no framework library with GPU code to load"
	case fb.Error != "":
		f.Status = Warn
		f.Message += "; the framework's fatbin could not be taken from " + fb.Library + ": " + fb.Error
		f.Remedy = "the GPUs run CUDA, but whether the framework has code for them is not proven; report this with the library"
	default:
		f.Message += fmt.Sprintf("; %s's kernels load on each (%d fatbin container(s) of %s, targets %s)",
			orUnknown(fb.Framework), fb.Containers, fb.Library, strings.Join(fb.Targets, " "))
	}
}

// cudaErrorNoDevice is CUDA_ERROR_NO_DEVICE, cuInit's answer on a host without GPUs.
const cudaErrorNoDevice = 100

const wrongValueRemedy = "the GPU ran a one-thread kernel and returned another value than it stored: drain the node and run DCGM diagnostics (dcgmi diag -r 3) before it takes jobs again"

func cudaDeviceName(d facts.CUDADevice) string {
	s := fmt.Sprintf("GPU %d", d.Ordinal)
	var parts []string
	for _, p := range []string{d.Name, d.UUID, d.PCIBusID} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, " ") + ")"
	}
	return s
}

func gib(b uint64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }
