package check

import "fmt"

// GPUCount is the `gpu-count` check: enough GPUs are visible to this container.
var GPUCount = Check{ID: "gpu-count", rule: gpuCount}

func gpuCount(in Input) Finding {
	n, min := len(in.Visible), in.Options.MinGPUs
	f := Finding{}
	switch {
	case n < min:
		f.Status = Error
		f.Message = fmt.Sprintf("%d GPU(s) visible, the job needs at least %d (PREFLIGHT_MIN_GPUS)", n, min)
		f.Remedy = fmt.Sprintf("request %d GPUs for the container (--gpus %d, nvidia.com/gpu: %d) and check NVIDIA_VISIBLE_DEVICES/CUDA_VISIBLE_DEVICES", min, min, min)
	case n == 0:
		f.Status = Warn
		noDriver := !in.Facts.Host.Driver.Present() && len(in.Facts.Host.DeviceNodes) == 0
		if in.Options.RequireGPU {
			f.Status = Error
		} else if noDriver {
			// The driver check already warns; this only restates it.
			f.Status = Info
		}
		f.Message = "no GPU visible to this container" + visibilityNote(in)
		f.Remedy = "request GPUs for the container (--gpus all, nvidia.com/gpu) and check NVIDIA_VISIBLE_DEVICES/CUDA_VISIBLE_DEVICES"
		if noDriver {
			// Not a visibility problem: there is nothing to make visible.
			f.Message = "no GPU: no NVIDIA driver on this host (no /proc/driver/nvidia/version, no /dev/nvidia*)"
			f.Remedy = "run the job on a GPU node, with the NVIDIA Container Toolkit (docker run --gpus all, Kubernetes resource nvidia.com/gpu)"
		}
	default:
		f.Status = Pass
		f.Message = fmt.Sprintf("%d GPU(s) visible", n)
		if min > 0 {
			f.Message += fmt.Sprintf(", at least %d needed", min)
		}
	}
	return f
}

func visibilityNote(in Input) string {
	env := in.Facts.Container.Env
	note := ""
	if v, ok := env["NVIDIA_VISIBLE_DEVICES"]; ok {
		note += fmt.Sprintf(" NVIDIA_VISIBLE_DEVICES=%q", v)
	}
	if v, ok := env["CUDA_VISIBLE_DEVICES"]; ok {
		note += fmt.Sprintf(" CUDA_VISIBLE_DEVICES=%q", v)
	}
	if n := len(in.Facts.Host.GPUs); n > 0 {
		note += fmt.Sprintf(" (%d GPU(s) on the host side)", n)
	}
	if note != "" {
		note = ";" + note
	}
	return note
}
