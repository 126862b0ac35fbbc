//go:build cgo

package main

import (
	"fmt"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpu-preflight/gpu-preflight/preflight/cuda"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/nvml"
)

// gather initialises NVML through lib, go-nvml's Interface (tests use its
// mocks), and maps what it answers into a document.
func gather(lib gonvml.Interface, library string) nvml.Document {
	doc := nvml.Document{Library: library, GPUs: []facts.GPU{}}
	ret := lib.Init()
	doc.DriverLibrary = driverLibrary(ret)
	switch ret {
	case gonvml.SUCCESS:
		doc.Outcome = facts.ProbeOK
	case gonvml.ERROR_LIBRARY_NOT_FOUND:
		// go-nvml's answer when dlopen fails: the string is go-nvml's.
		doc.Outcome = facts.ProbeLibraryNotFound
		doc.Error = fmt.Sprintf("%s could not be loaded (%s)", library, lib.ErrorString(ret))
		return doc
	case gonvml.ERROR_DRIVER_NOT_LOADED:
		doc.Outcome = facts.ProbeDriverNotLoaded
		doc.Error = lib.ErrorString(ret)
		return doc
	default:
		doc.Outcome = facts.ProbeInitFailed
		doc.Error = lib.ErrorString(ret)
		return doc
	}
	defer lib.Shutdown()

	errs := fieldErrors{lib: lib}
	if v, ret := lib.SystemGetNVMLVersion(); errs.ok("nvmlVersion", ret) {
		doc.NVMLVersion = v
	}
	if v, ret := lib.SystemGetDriverVersion(); errs.ok("driverVersion", ret) {
		doc.DriverVersion = v
	}
	// _v2 asks libcuda and fails where it is absent; v1 answers from the
	// driver (go-nvml's nvml.h; docs/sources.md, "NVML").
	if v, ret := lib.SystemGetCudaDriverVersion_v2(); ret == gonvml.SUCCESS {
		doc.CUDAVersionRaw, doc.CUDAVersionCall = v, "v2"
	} else if v1, ret1 := lib.SystemGetCudaDriverVersion(); ret1 == gonvml.SUCCESS {
		doc.CUDAVersionRaw, doc.CUDAVersionCall = v1, "v1"
	} else {
		errs.set("cudaVersion", fmt.Sprintf("v2: %s; v1: %s", lib.ErrorString(ret), lib.ErrorString(ret1)))
	}
	doc.CUDAVersion = cuda.Version(doc.CUDAVersionRaw)

	n, ret := lib.DeviceGetCount()
	if errs.ok("gpus", ret) {
		for i := 0; i < n; i++ {
			doc.GPUs = append(doc.GPUs, device(lib, i))
		}
	}
	doc.Errors = errs.m
	return doc
}

func device(lib gonvml.Interface, i int) (g facts.GPU) {
	g = facts.GPU{Index: i}
	errs := fieldErrors{lib: lib}
	defer func() { g.Errors = errs.m }()

	d, ret := lib.DeviceGetHandleByIndex(i)
	if !errs.ok("handle", ret) {
		return g
	}
	if v, ret := d.GetName(); errs.ok("name", ret) {
		g.Name = v
	}
	if v, ret := d.GetUUID(); errs.ok("uuid", ret) {
		g.UUID = v
	}
	if v, ret := d.GetPciInfo(); errs.ok("pciBusId", ret) {
		g.PCIBusID = cString(v.BusId[:])
		if g.PCIBusID == "" {
			g.PCIBusID = cString(v.BusIdLegacy[:])
		}
	}
	if v, ret := d.GetBrand(); errs.ok("brand", ret) {
		g.Brand = name(brandNames, v)
	}
	if major, minor, ret := d.GetCudaComputeCapability(); errs.ok("computeCapability", ret) {
		g.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
	}
	if v, ret := d.GetArchitecture(); errs.ok("architecture", ret) {
		g.Architecture = name(architectureNames, v)
	}
	if v, ret := d.GetMemoryInfo(); errs.ok("memoryBytes", ret) {
		g.MemoryBytes = v.Total
	}
	migMode(d, &g, &errs)
	if v, ret := d.GetPersistenceMode(); errs.ok("persistenceMode", ret) {
		g.PersistenceMode = enabled(v == gonvml.FEATURE_ENABLED)
	}
	if v, ret := d.GetTotalEccErrors(gonvml.MEMORY_ERROR_TYPE_UNCORRECTED, gonvml.VOLATILE_ECC); errs.ok("eccUncorrectedVolatile", ret) {
		g.ECCUncorrectedVolatile = &v
	}
	if v, ret := d.GetRetiredPagesPendingStatus(); errs.ok("retiredPagesPending", ret) {
		pending := v == gonvml.FEATURE_ENABLED
		g.RetiredPagesPending = &pending
	}
	g.Health = health(lib, d)
	return g
}

// migMode fills the MIG fields. NOT_SUPPORTED and FUNCTION_NOT_FOUND are
// "no MIG", as libnvidia-container reads them (docs/sources.md, "NVML").
// With MIG on, it counts the MIG devices NVML can see, for gpu-health.
func migMode(d gonvml.Device, g *facts.GPU, errs *fieldErrors) {
	current, _, ret := d.GetMigMode()
	switch ret {
	case gonvml.SUCCESS:
		g.MIGMode = enabled(current == gonvml.DEVICE_MIG_ENABLE)
	case gonvml.ERROR_NOT_SUPPORTED, gonvml.ERROR_FUNCTION_NOT_FOUND:
		return
	default:
		errs.ok("migMode", ret)
		return
	}
	if g.MIGMode != "enabled" {
		return
	}
	max, ret := d.GetMaxMigDeviceCount()
	if !errs.ok("migDevices", ret) {
		return
	}
	count := 0
	for i := 0; i < max; i++ {
		// An empty slot (NOT_FOUND) or one this container may not use
		// (NO_PERMISSION) is no visible device; other failures leave it unknown.
		switch _, ret := d.GetMigDeviceHandleByIndex(i); ret {
		case gonvml.SUCCESS:
			count++
		case gonvml.ERROR_NOT_FOUND, gonvml.ERROR_NO_PERMISSION:
		default:
			errs.ok("migDevices", ret)
			return
		}
	}
	g.MIGDevices = &count
}

func enabled(on bool) string {
	if on {
		return "enabled"
	}
	return "disabled"
}

func cString(b []int8) string {
	s := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		s = append(s, byte(c))
	}
	return string(s)
}

// fieldErrors collects NVML failures by field, with NVML's own strings.
type fieldErrors struct {
	lib gonvml.Interface
	m   map[string]string
}

// ok reports whether ret is SUCCESS, recording NVML's string for field if not.
func (e *fieldErrors) ok(field string, ret gonvml.Return) bool {
	if ret == gonvml.SUCCESS {
		return true
	}
	e.set(field, e.lib.ErrorString(ret))
	return false
}

func (e *fieldErrors) set(field, msg string) {
	if e.m == nil {
		e.m = map[string]string{}
	}
	e.m[field] = msg
}
