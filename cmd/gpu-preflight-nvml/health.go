//go:build cgo

package main

import (
	"encoding/hex"
	"math"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// health asks NVML what decides whether GPU d can start a job now, each
// call at most once per link (docs/node-health.md).
func health(lib gonvml.Interface, d gonvml.Device) *facts.GPUHealth {
	r := healthReader{lib: lib, d: d, h: &facts.GPUHealth{}}
	r.remappedRows()
	r.fabric()
	r.memory()
	r.processes()
	r.computeMode()
	r.nvlink()
	r.pcie()
	r.clocks()
	return r.h
}

type healthReader struct {
	lib gonvml.Interface
	d   gonvml.Device
	h   *facts.GPUHealth
}

// answered reports whether ret is SUCCESS, else files field under
// Unsupported or Errors.
func (r healthReader) answered(field string, ret gonvml.Return) bool {
	switch ret {
	case gonvml.SUCCESS:
		return true
	case gonvml.ERROR_NOT_SUPPORTED, gonvml.ERROR_FUNCTION_NOT_FOUND:
		r.h.Unsupported = append(r.h.Unsupported, field)
	default:
		if r.h.Errors == nil {
			r.h.Errors = map[string]string{}
		}
		r.h.Errors[field] = r.lib.ErrorString(ret)
	}
	return false
}

// has reports whether the library exports symbol: go-nvml links entry
// points unresolved, and calling a missing one ends the probe.
func (r healthReader) has(symbol string) bool {
	return r.lib.Extensions().LookupSymbol(symbol) == nil
}

func call[T any](r healthReader, symbol string, get func() (T, gonvml.Return)) (T, gonvml.Return) {
	if !r.has(symbol) {
		var zero T
		return zero, gonvml.ERROR_FUNCTION_NOT_FOUND
	}
	return get()
}

func (r healthReader) remappedRows() {
	if !r.has("nvmlDeviceGetRemappedRows") {
		r.answered("remappedRows", gonvml.ERROR_FUNCTION_NOT_FOUND)
		return
	}
	corr, unc, pending, failed, ret := r.d.GetRemappedRows()
	if r.answered("remappedRows", ret) {
		r.h.RemappedRows = &facts.RemappedRows{Correctable: corr, Uncorrectable: unc, Pending: pending, Failed: failed}
	}
}

// fabric falls back to the unversioned call, without the health mask.
func (r healthReader) fabric() {
	v2, ret := call(r, "nvmlDeviceGetGpuFabricInfoV", func() (gonvml.GpuFabricInfo_v2, gonvml.Return) {
		return r.d.GetGpuFabricInfoV().V2()
	})
	if ret == gonvml.SUCCESS {
		r.setFabric(v2.State, v2.Status, v2.CliqueId, v2.ClusterUuid, &v2.HealthMask)
		return
	}
	if ret == gonvml.ERROR_FUNCTION_NOT_FOUND || ret == gonvml.ERROR_ARGUMENT_VERSION_MISMATCH {
		var v1 gonvml.GpuFabricInfo
		v1, ret = call(r, "nvmlDeviceGetGpuFabricInfo", r.d.GetGpuFabricInfo)
		if ret == gonvml.SUCCESS {
			r.setFabric(v1.State, v1.Status, v1.CliqueId, v1.ClusterUuid, nil)
			return
		}
	}
	r.answered("fabric", ret)
}

func (r healthReader) setFabric(state uint8, status, clique uint32, cluster [16]uint8, mask *uint32) {
	f := &facts.Fabric{State: name(fabricStates, state), Status: int(status), CliqueID: clique, HealthMask: mask}
	if f.State == facts.FabricNotSupported {
		r.answered("fabric", gonvml.ERROR_NOT_SUPPORTED)
		return
	}
	if f.Status != 0 {
		f.StatusText = r.lib.ErrorString(gonvml.Return(status))
	}
	if cluster != ([16]uint8{}) {
		f.ClusterUUID = hex.EncodeToString(cluster[:])
	}
	if mask != nil {
		f.Degraded = fabricDegraded(*mask)
	}
	r.h.Fabric = f
}

// fabricDegraded reads the mask as NVML_GPU_FABRIC_HEALTH_GET does.
func fabricDegraded(mask uint32) []string {
	var out []string
	for _, f := range fabricHealthFields {
		if f.bad(mask >> f.shift & f.width) {
			out = append(out, f.name)
		}
	}
	return out
}

func (r healthReader) memory() {
	m, ret := call(r, "nvmlDeviceGetMemoryInfo_v2", r.d.GetMemoryInfo_v2)
	if r.answered("memory", ret) {
		r.h.Memory = &facts.MemoryUse{TotalBytes: m.Total, ReservedBytes: m.Reserved, UsedBytes: m.Used}
	}
}

func (r healthReader) processes() {
	ps, ret := r.d.GetComputeRunningProcesses()
	if !r.answered("processes", ret) {
		return
	}
	p := &facts.Processes{Count: len(ps)}
	for _, pi := range ps[:min(len(ps), facts.MaxProcesses)] {
		used := pi.UsedGpuMemory
		if used == math.MaxUint64 { // NVML_VALUE_NOT_AVAILABLE
			used = 0
		}
		p.First = append(p.First, facts.Process{PID: pi.Pid, UsedBytes: used})
	}
	r.h.Processes = p
}

func (r healthReader) computeMode() {
	m, ret := r.d.GetComputeMode()
	if r.answered("computeMode", ret) {
		r.h.ComputeMode = name(computeModes, m)
	}
}

func (r healthReader) nvlink() {
	l := &facts.NVLink{}
links:
	for i := 0; i < gonvml.NVLINK_MAX_LINKS; i++ {
		state, ret := r.d.GetNvLinkState(i)
		switch {
		case ret == gonvml.SUCCESS && state == gonvml.FEATURE_ENABLED:
			l.Active++
		case ret == gonvml.SUCCESS:
			l.Inactive = append(l.Inactive, i)
		case ret == gonvml.ERROR_INVALID_ARGUMENT:
			break links
		case ret == gonvml.ERROR_NOT_SUPPORTED && i > 0:
		default:
			r.answered("nvlink", ret)
			return
		}
	}
	if l.Active+len(l.Inactive) == 0 {
		r.answered("nvlink", gonvml.ERROR_NOT_SUPPORTED)
		return
	}
	r.h.NVLink = l
}

func (r healthReader) pcie() {
	p := &facts.PCIe{}
	for _, q := range []struct {
		field, symbol string
		get           func() (int, gonvml.Return)
		to            *int
	}{
		{"pcie.currentGeneration", "nvmlDeviceGetCurrPcieLinkGeneration", r.d.GetCurrPcieLinkGeneration, &p.CurrentGeneration},
		{"pcie.currentWidth", "nvmlDeviceGetCurrPcieLinkWidth", r.d.GetCurrPcieLinkWidth, &p.CurrentWidth},
		{"pcie.maxGeneration", "nvmlDeviceGetMaxPcieLinkGeneration", r.d.GetMaxPcieLinkGeneration, &p.MaxGeneration},
		{"pcie.maxWidth", "nvmlDeviceGetMaxPcieLinkWidth", r.d.GetMaxPcieLinkWidth, &p.MaxWidth},
		{"pcie.gpuMaxGeneration", "nvmlDeviceGetGpuMaxPcieLinkGeneration", r.d.GetGpuMaxPcieLinkGeneration, &p.GPUMaxGeneration},
	} {
		if v, ret := call(r, q.symbol, q.get); r.answered(q.field, ret) {
			*q.to = v
		}
	}
	if *p != (facts.PCIe{}) {
		r.h.PCIe = p
	}
}

// clocks falls back to the pre-R535 name of the same bits.
func (r healthReader) clocks() {
	get := r.d.GetCurrentClocksEventReasons
	symbol := "nvmlDeviceGetCurrentClocksEventReasons"
	if !r.has(symbol) {
		get, symbol = r.d.GetCurrentClocksThrottleReasons, "nvmlDeviceGetCurrentClocksThrottleReasons"
	}
	mask, ret := call(r, symbol, get)
	if !r.answered("clockEvents", ret) {
		return
	}
	r.h.ClockEventMask = &mask
	for _, c := range clockEvents {
		if mask&c.bit != 0 {
			r.h.ClockEvents = append(r.h.ClockEvents, c.name)
		}
	}
}
