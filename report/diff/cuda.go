package diff

import (
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/cuda"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// cuda compares what the CUDA smoke tests saw. What changes whether CUDA
// works matters: the mode and outcome, the driver API version and the
// library the dynamic linker chose (a forward-compatibility copy or not),
// each device's result and compute mode, the framework fatbin's targets.
// Free memory and timings differ between any two runs and are not
// compared; total memory and the device set are minor (host.gpus covers
// the GPUs).
func (d *differ) cuda(old, new facts.CUDACheck) {
	d.add("CUDA check", cudaSummary(old), cudaSummary(new), true)
	d.add("CUDA driver API", cuda.Version(old.DriverAPIVersion), cuda.Version(new.DriverAPIVersion), true)
	d.add("CUDA library", old.Library, new.Library, true)
	d.add("CUDA init", stepSummary(old.Init), stepSummary(new.Init), true)
	d.add("CUDA fatbin", fatbinSummary(old.Fatbin), fatbinSummary(new.Fatbin), true)

	key := func(c facts.CUDADevice) string {
		if c.UUID != "" {
			return c.UUID
		}
		return "#" + strconv.Itoa(c.Ordinal)
	}
	oldKeys, newKeys := keys(old.Devices, key), keys(new.Devices, key)
	oldBy, newBy := index(old.Devices, oldKeys), index(new.Devices, newKeys)
	for i, nd := range new.Devices {
		k := newKeys[i]
		od, ok := oldBy[k]
		if !ok {
			d.add("CUDA GPU "+k, "", nd.Result, true)
			continue
		}
		d.add("CUDA GPU "+k, od.Result, nd.Result, true)
		d.add("CUDA GPU "+k+" compute mode", od.ComputeMode, nd.ComputeMode, true)
		d.add("CUDA GPU "+k+" ordinal", strconv.Itoa(od.Ordinal), strconv.Itoa(nd.Ordinal), false)
		d.add("CUDA GPU "+k+" memory bytes", uintString(od.TotalBytes), uintString(nd.TotalBytes), false)
	}
	for i, od := range old.Devices {
		if _, ok := newBy[oldKeys[i]]; !ok {
			d.add("CUDA GPU "+oldKeys[i], od.Result, "", true)
		}
	}
	d.add("CUDA check error", old.Error, new.Error, false)
	d.add("CUDA probe via", old.Via, new.Via, false)
}

func cudaSummary(c facts.CUDACheck) string {
	if c.Mode == "" && c.Outcome == "" {
		return ""
	}
	return c.Mode + ": " + c.Outcome
}

func stepSummary(s *facts.CUDAStep) string {
	if s == nil {
		return ""
	}
	if s.Error == "" {
		return "ok"
	}
	return s.Step + ": " + s.Error
}

func fatbinSummary(f *facts.CUDAFatbin) string {
	if f == nil {
		return ""
	}
	if f.Error != "" {
		return f.Library + ": " + f.Error
	}
	return f.Library + " (" + strings.Join(f.Targets, " ") + ")"
}
