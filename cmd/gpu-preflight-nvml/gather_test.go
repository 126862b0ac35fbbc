//go:build cgo

package main

import (
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// errorString stands in for the library's nvmlErrorString with the strings
// the real libnvidia-ml returns for the codes these tests use.
func errorString(r gonvml.Return) string {
	switch r {
	case gonvml.ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded"
	case gonvml.ERROR_NOT_SUPPORTED:
		return "Not Supported"
	case gonvml.ERROR_GPU_IS_LOST:
		return "GPU is lost"
	case gonvml.ERROR_LIBRARY_NOT_FOUND:
		return "NVML Shared Library Not Found"
	}
	return r.Error()
}

// dgx returns go-nvml's DGX A100 mock with the methods it leaves nil filled
// in: the _v2 CUDA version, persistence mode, ECC counters, retired pages.
func dgx(t *testing.T) *server.Server {
	t.Helper()
	s := dgxa100.New()
	s.ErrorStringFunc = errorString
	s.LookupSymbolFunc = withoutFabricV
	s.SystemGetCudaDriverVersion_v2Func = func() (int, gonvml.Return) { return s.CudaDriverVersion, gonvml.SUCCESS }
	for _, d := range s.Devices {
		d := d.(*server.Device)
		answerHealth(&d.Device, gonvml.SUCCESS, 12)
		d.GetPersistenceModeFunc = func() (gonvml.EnableState, gonvml.Return) { return gonvml.FEATURE_ENABLED, gonvml.SUCCESS }
		d.GetTotalEccErrorsFunc = func(gonvml.MemoryErrorType, gonvml.EccCounterType) (uint64, gonvml.Return) {
			return 0, gonvml.SUCCESS
		}
		d.GetRetiredPagesPendingStatusFunc = func() (gonvml.EnableState, gonvml.Return) { return gonvml.FEATURE_DISABLED, gonvml.SUCCESS }
		d.GetPciInfoFunc = func() (gonvml.PciInfo, gonvml.Return) {
			var p gonvml.PciInfo
			for i, c := range d.PciBusID {
				p.BusIdLegacy[i] = int8(c)
			}
			return p, gonvml.SUCCESS
		}
	}
	return s
}

func TestGatherMapsEveryDGXA100Device(t *testing.T) {
	s := dgx(t)
	doc := gather(s, "libnvidia-ml.so.1")
	if doc.Outcome != facts.ProbeOK || doc.DriverVersion != "550.54.15" || doc.NVMLVersion != "12.550.54.15" {
		t.Fatalf("system facts: %+v", doc)
	}
	if doc.CUDAVersion != "12.4" || doc.CUDAVersionRaw != 12040 || doc.CUDAVersionCall != "v2" {
		t.Errorf("CUDA version = %q raw %d via %q, want 12.4 12040 v2", doc.CUDAVersion, doc.CUDAVersionRaw, doc.CUDAVersionCall)
	}
	if len(doc.GPUs) != 8 {
		t.Fatalf("got %d GPUs, want 8", len(doc.GPUs))
	}
	for i, g := range doc.GPUs {
		d := s.Devices[i].(*server.Device)
		if g.Index != i || g.UUID != d.UUID || g.Name != "Mock NVIDIA A100-SXM4-40GB" {
			t.Errorf("GPU %d identity: %+v", i, g)
		}
		if g.Brand != "Nvidia" || g.ComputeCapability != "8.0" || g.Architecture != "Ampere" || g.MemoryBytes != 42949672960 {
			t.Errorf("GPU %d properties: brand %q cc %q arch %q mem %d", i, g.Brand, g.ComputeCapability, g.Architecture, g.MemoryBytes)
		}
		if g.PCIBusID != d.PciBusID {
			t.Errorf("GPU %d bus id %q, want the legacy form %q when busId is empty", i, g.PCIBusID, d.PciBusID)
		}
		if g.MIGMode != "disabled" || g.MIGDevices != nil || g.PersistenceMode != "enabled" {
			t.Errorf("GPU %d modes: mig %q devices %v persistence %q", i, g.MIGMode, g.MIGDevices, g.PersistenceMode)
		}
		if g.ECCUncorrectedVolatile == nil || *g.ECCUncorrectedVolatile != 0 || g.RetiredPagesPending == nil || *g.RetiredPagesPending {
			t.Errorf("GPU %d health: ecc %v retired %v", i, g.ECCUncorrectedVolatile, g.RetiredPagesPending)
		}
		if len(g.Errors) != 0 {
			t.Errorf("GPU %d errors: %v", i, g.Errors)
		}
	}
}

func TestGatherFallsBackToCUDAVersionV1(t *testing.T) {
	s := dgx(t)
	s.SystemGetCudaDriverVersion_v2Func = func() (int, gonvml.Return) { return 0, gonvml.ERROR_LIBRARY_NOT_FOUND }
	s.SystemGetCudaDriverVersionFunc = func() (int, gonvml.Return) { return 13010, gonvml.SUCCESS }
	doc := gather(s, "x")
	// 13010 is CUDA 13.1: NVML's macro (v%1000)/10, not v%100/10 which gives 13.0.
	if doc.CUDAVersion != "13.1" || doc.CUDAVersionCall != "v1" || doc.Errors["cudaVersion"] != "" {
		t.Errorf("got %q via %q, errors %v", doc.CUDAVersion, doc.CUDAVersionCall, doc.Errors)
	}

	s.SystemGetCudaDriverVersionFunc = func() (int, gonvml.Return) { return 0, gonvml.ERROR_NOT_SUPPORTED }
	doc = gather(s, "x")
	want := "v2: NVML Shared Library Not Found; v1: Not Supported"
	if doc.CUDAVersion != "" || doc.Errors["cudaVersion"] != want {
		t.Errorf("got %q, error %q, want %q", doc.CUDAVersion, doc.Errors["cudaVersion"], want)
	}
}

func TestGatherInitOutcomes(t *testing.T) {
	tests := []struct {
		ret     gonvml.Return
		outcome string
		err     string
	}{
		{gonvml.ERROR_LIBRARY_NOT_FOUND, facts.ProbeLibraryNotFound, "libnvidia-ml.so.1 could not be loaded (NVML Shared Library Not Found)"},
		{gonvml.ERROR_DRIVER_NOT_LOADED, facts.ProbeDriverNotLoaded, "Driver Not Loaded"},
		{gonvml.ERROR_GPU_IS_LOST, facts.ProbeInitFailed, "GPU is lost"},
	}
	for _, tt := range tests {
		t.Run(tt.outcome, func(t *testing.T) {
			// Only Init and ErrorString are set: any other call would panic.
			lib := &mock.Interface{
				InitFunc:        func() gonvml.Return { return tt.ret },
				ErrorStringFunc: errorString,
			}
			doc := gather(lib, "libnvidia-ml.so.1")
			if doc.Outcome != tt.outcome || doc.Error != tt.err || len(doc.GPUs) != 0 {
				t.Errorf("got %q %q %d GPUs, want %q %q", doc.Outcome, doc.Error, len(doc.GPUs), tt.outcome, tt.err)
			}
		})
	}
}

func TestGatherRecordsEveryFieldErrorWithoutCrashing(t *testing.T) {
	lost := gonvml.ERROR_GPU_IS_LOST
	d := &mock.Device{
		GetNameFunc:                      func() (string, gonvml.Return) { return "", lost },
		GetUUIDFunc:                      func() (string, gonvml.Return) { return "", lost },
		GetPciInfoFunc:                   func() (gonvml.PciInfo, gonvml.Return) { return gonvml.PciInfo{}, lost },
		GetBrandFunc:                     func() (gonvml.BrandType, gonvml.Return) { return 0, lost },
		GetCudaComputeCapabilityFunc:     func() (int, int, gonvml.Return) { return 0, 0, lost },
		GetArchitectureFunc:              func() (gonvml.DeviceArchitecture, gonvml.Return) { return 0, lost },
		GetMemoryInfoFunc:                func() (gonvml.Memory, gonvml.Return) { return gonvml.Memory{}, lost },
		GetMigModeFunc:                   func() (int, int, gonvml.Return) { return 0, 0, lost },
		GetPersistenceModeFunc:           func() (gonvml.EnableState, gonvml.Return) { return 0, lost },
		GetTotalEccErrorsFunc:            func(gonvml.MemoryErrorType, gonvml.EccCounterType) (uint64, gonvml.Return) { return 0, lost },
		GetRetiredPagesPendingStatusFunc: func() (gonvml.EnableState, gonvml.Return) { return 0, lost },
		GetMinorNumberFunc:               func() (int, gonvml.Return) { return 0, lost },
	}
	lib := &mock.Interface{
		InitFunc:                          func() gonvml.Return { return gonvml.SUCCESS },
		ShutdownFunc:                      func() gonvml.Return { return gonvml.SUCCESS },
		ErrorStringFunc:                   errorString,
		SystemGetNVMLVersionFunc:          func() (string, gonvml.Return) { return "", lost },
		SystemGetDriverVersionFunc:        func() (string, gonvml.Return) { return "", lost },
		SystemGetCudaDriverVersion_v2Func: func() (int, gonvml.Return) { return 0, lost },
		SystemGetCudaDriverVersionFunc:    func() (int, gonvml.Return) { return 0, lost },
		DeviceGetCountFunc:                func() (int, gonvml.Return) { return 2, gonvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (gonvml.Device, gonvml.Return) {
			if i == 1 {
				return nil, lost
			}
			return d, gonvml.SUCCESS
		},
	}
	answerHealth(d, lost, 0)
	lib.ExtensionsFunc = func() gonvml.ExtendedInterface { return &mock.ExtendedInterface{LookupSymbolFunc: withoutFabricV} }
	doc := gather(lib, "x")
	if doc.Outcome != facts.ProbeOK {
		t.Fatalf("outcome %q", doc.Outcome)
	}
	for _, f := range []string{"nvmlVersion", "driverVersion", "cudaVersion"} {
		if doc.Errors[f] == "" {
			t.Errorf("system field %s has no error: %v", f, doc.Errors)
		}
	}
	fields := []string{"name", "uuid", "pciBusId", "brand", "computeCapability", "architecture", "memoryBytes",
		"migMode", "persistenceMode", "eccUncorrectedVolatile", "retiredPagesPending"}
	g := doc.GPUs[0]
	for _, f := range fields {
		if g.Errors[f] != "GPU is lost" {
			t.Errorf("GPU 0 field %s error = %q, want NVML's string", f, g.Errors[f])
		}
	}
	if g.Brand != "" || g.ECCUncorrectedVolatile != nil || g.RetiredPagesPending != nil {
		t.Errorf("GPU 0 has values for failed fields: %+v", g)
	}
	if h := doc.GPUs[1]; h.Index != 1 || h.Errors["handle"] != "GPU is lost" {
		t.Errorf("GPU 1 = %+v, want only a handle error", h)
	}
}

func TestGatherTreatsMIGNotSupportedAsDisabled(t *testing.T) {
	for _, ret := range []gonvml.Return{gonvml.ERROR_NOT_SUPPORTED, gonvml.ERROR_FUNCTION_NOT_FOUND} {
		s := dgx(t)
		for _, d := range s.Devices {
			d.(*server.Device).GetMigModeFunc = func() (int, int, gonvml.Return) { return 0, 0, ret }
		}
		g := gather(s, "x").GPUs[0]
		if g.MIGMode != "" || g.Errors["migMode"] != "" {
			t.Errorf("%v: MIG mode %q, errors %v; want \"\" and no error", ret, g.MIGMode, g.Errors)
		}
	}
}

func TestGatherCountsVisibleMIGDevices(t *testing.T) {
	s := dgx(t)
	d := s.Devices[0].(*server.Device)
	d.SetMigMode(gonvml.DEVICE_MIG_ENABLE)
	d.GetMaxMigDeviceCountFunc = func() (int, gonvml.Return) { return 7, gonvml.SUCCESS }
	d.GetMigDeviceHandleByIndexFunc = func(i int) (gonvml.Device, gonvml.Return) {
		if i < 2 {
			return &mock.Device{}, gonvml.SUCCESS
		}
		return nil, gonvml.ERROR_NOT_FOUND
	}
	g := gather(s, "x").GPUs[0]
	if g.MIGMode != "enabled" || g.MIGDevices == nil || *g.MIGDevices != 2 {
		t.Errorf("MIG %q devices %v, want enabled with 2", g.MIGMode, g.MIGDevices)
	}

	d.GetMigDeviceHandleByIndexFunc = func(i int) (gonvml.Device, gonvml.Return) {
		if i == 0 {
			return nil, gonvml.ERROR_NO_PERMISSION
		}
		return nil, gonvml.ERROR_NOT_FOUND
	}
	g = gather(s, "x").GPUs[0]
	if g.MIGDevices == nil || *g.MIGDevices != 0 || g.Errors["migDevices"] != "" {
		t.Errorf("MIG devices %v (errors %v), want 0 when every slot is empty or not ours", g.MIGDevices, g.Errors)
	}

	d.GetMigDeviceHandleByIndexFunc = func(int) (gonvml.Device, gonvml.Return) { return nil, gonvml.ERROR_GPU_IS_LOST }
	g = gather(s, "x").GPUs[0]
	if g.MIGDevices != nil || g.Errors["migDevices"] != "GPU is lost" {
		t.Errorf("MIG devices %v (errors %v), want unknown with NVML's error", g.MIGDevices, g.Errors)
	}
}
