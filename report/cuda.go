package report

import (
	"fmt"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/cuda"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// CUDA is what the opt-in CUDA smoke test saw (PREFLIGHT_CUDA_CHECK):
// facts.CUDACheck with every field present, where facts (also the CUDA
// probe's JSON) leave out what is empty, and the texts from the driver
// bounded.
type CUDA struct {
	// Mode is off, init or kernel; Outcome one of facts' CUDA outcomes.
	Mode    string `json:"mode"`
	Outcome string `json:"outcome"`
	Error   string `json:"error"`
	Via     string `json:"via"`
	// Library is the file the dynamic linker loaded for libcuda.so.1.
	Library string `json:"library"`
	// DriverAPIVersion is cuDriverGetVersion's answer, 12040 for 12.4.
	DriverAPIVersion int `json:"driverApiVersion"`
	// Init is cuInit's result; null when the test did not reach it.
	Init        *CUDAStep    `json:"init"`
	DeviceCount int          `json:"deviceCount"`
	Devices     []CUDADevice `json:"devices"`
	// Fatbin is the framework fatbin kernel mode loaded; null when none.
	Fatbin         *CUDAFatbin `json:"fatbin"`
	DurationMillis float64     `json:"durationMillis"`
}

// CUDADevice is one device as CUDA saw it: facts.CUDADevice with every
// field present and the device's Result stated.
type CUDADevice struct {
	Ordinal           int    `json:"ordinal"`
	Name              string `json:"name"`
	UUID              string `json:"uuid"`
	PCIBusID          string `json:"pciBusId"`
	ComputeCapability string `json:"computeCapability"`
	ComputeMode       string `json:"computeMode"`
	TotalBytes        uint64 `json:"totalBytes"`
	FreeBytes         uint64 `json:"freeBytes"`
	// Result is "ok", or the first failed step and CUDA's name for its
	// error: "launch: CUDA_ERROR_LAUNCH_FAILED".
	Result         string     `json:"result"`
	Steps          []CUDAStep `json:"steps"`
	DurationMillis float64    `json:"durationMillis"`
}

// CUDAStep is one call of the smoke test and its CUresult: facts.CUDAStep
// with every field present.
type CUDAStep struct {
	Step    string  `json:"step"`
	Code    int     `json:"code"`
	Error   string  `json:"error"`
	Message string  `json:"message"`
	Millis  float64 `json:"millis"`
}

// CUDAFatbin is the framework fatbin kernel mode loaded: facts.CUDAFatbin
// with every field present.
type CUDAFatbin struct {
	Library   string `json:"library"`
	Framework string `json:"framework"`
	// Containers is how many fatbin containers were loaded, one per
	// distinct set of targets; Bytes their size in all.
	Containers int      `json:"containers"`
	Bytes      int      `json:"bytes"`
	Targets    []string `json:"targets"`
	Error      string   `json:"error"`
}

// newCUDA copies the smoke test's facts into the record, bounding the
// texts that came from the driver.
func newCUDA(c facts.CUDACheck) CUDA {
	r := CUDA{
		Mode: c.Mode, Outcome: c.Outcome, Error: capValue(c.Error), Via: c.Via,
		Library: capValue(c.Library), DriverAPIVersion: c.DriverAPIVersion,
		DeviceCount: c.DeviceCount, Devices: make([]CUDADevice, 0, len(c.Devices)),
		DurationMillis: c.DurationMillis,
	}
	if c.Init != nil {
		s := newCUDAStep(*c.Init)
		r.Init = &s
	}
	for _, d := range c.Devices {
		rd := CUDADevice{
			Ordinal: d.Ordinal, Name: d.Name, UUID: d.UUID, PCIBusID: d.PCIBusID,
			ComputeCapability: d.ComputeCapability, ComputeMode: d.ComputeMode,
			TotalBytes: d.TotalBytes, FreeBytes: d.FreeBytes, Result: CUDAResult(d),
			Steps: make([]CUDAStep, 0, len(d.Steps)), DurationMillis: d.DurationMillis,
		}
		for _, s := range d.Steps {
			rd.Steps = append(rd.Steps, newCUDAStep(s))
		}
		r.Devices = append(r.Devices, rd)
	}
	if f := c.Fatbin; f != nil {
		r.Fatbin = &CUDAFatbin{Library: f.Library, Framework: f.Framework, Containers: f.Containers, Bytes: f.Bytes,
			Targets: nonNil(f.Targets), Error: capValue(f.Error)}
	}
	return r
}

func newCUDAStep(s facts.CUDAStep) CUDAStep {
	return CUDAStep{Step: s.Step, Code: s.Code, Error: s.Error, Message: capValue(s.Message), Millis: s.Millis}
}

// CUDAResult is a device's result as the record states it: "ok", or the
// first failed step with CUDA's name for its error.
func CUDAResult(d facts.CUDADevice) string {
	s := d.Failed()
	if s == nil {
		return "ok"
	}
	return strings.TrimSpace(s.Step + ": " + s.Error)
}

// cudaSummary is the CUDA check in one line for the human report:
// "kernel: ok, driver API 12.4, 8 device(s)", with the failed devices'
// results.
func cudaSummary(c CUDA) string {
	if c.Mode == "" {
		return "-"
	}
	s := c.Mode + ": " + or(c.Outcome, "-")
	if c.DriverAPIVersion > 0 {
		s += ", driver API " + cuda.Version(c.DriverAPIVersion)
	}
	if c.Init != nil && c.Init.Error != "" {
		s += ", " + c.Init.Step + ": " + c.Init.Error
	}
	if len(c.Devices) > 0 {
		s += fmt.Sprintf(", %d device(s)", len(c.Devices))
	}
	for _, d := range c.Devices {
		if d.Result != "ok" {
			s += fmt.Sprintf("; device %d %s", d.Ordinal, d.Result)
		}
	}
	if c.Error != "" {
		s += ": " + c.Error
	}
	return s
}
