package facts

// CUDACheck is what the opt-in CUDA smoke test (PREFLIGHT_CUDA_CHECK) saw:
// libcuda.so.1 loaded the way the training process will load it, cuInit,
// and per device a primary context, its memory and, in kernel mode, a PTX
// kernel and one of the framework's fatbins.
type CUDACheck struct {
	// Mode is CUDAModeOff, CUDAModeInit or CUDAModeKernel.
	Mode string `json:"mode"`
	// Outcome is one of the CUDA* outcome constants.
	Outcome string `json:"outcome"`
	// Error is the runner's or the loader's error text (a timeout, dlopen's
	// message); CUDA's own errors are in Init and the devices' steps.
	Error string `json:"error,omitempty"`
	// Via is how the probe was started: "memfd", "file:<path>", or "".
	Via string `json:"via,omitempty"`
	// Library is the file the dynamic linker loaded for libcuda.so.1
	// (so a forward-compatibility library that came first on the library
	// path shows here).
	Library string `json:"library,omitempty"`
	// DriverAPIVersion is cuDriverGetVersion's answer, 12020 for CUDA 12.2;
	// 0 when it did not answer.
	DriverAPIVersion int `json:"driverApiVersion,omitempty"`
	// Init is cuInit's result.
	Init *CUDAStep `json:"init,omitempty"`
	// DeviceCount is cuDeviceGetCount's answer.
	DeviceCount int `json:"deviceCount,omitempty"`
	// Devices are the devices CUDA enumerates, in ordinal order.
	Devices []CUDADevice `json:"devices,omitempty"`
	// Fatbin is the framework fatbin kernel mode loaded on every device;
	// nil when none was chosen.
	Fatbin *CUDAFatbin `json:"fatbin,omitempty"`
	// DurationMillis is how long the probe ran.
	DurationMillis float64 `json:"durationMillis,omitempty"`
}

// Modes of the CUDA smoke test (PREFLIGHT_CUDA_CHECK).
const (
	CUDAModeOff    = "off"
	CUDAModeInit   = "init"
	CUDAModeKernel = "kernel"
)

// Outcomes of the CUDA smoke test.
const (
	CUDANotRun            = "not-run"            // mode off
	CUDAOK                = "ok"                 // every step on every device succeeded
	CUDAFailed            = "failed"             // a CUDA call failed or a value was wrong: see Init and the steps
	CUDALibraryNotFound   = "library-not-found"  // libcuda.so.1 could not be loaded
	CUDALibraryIncomplete = "library-incomplete" // it loaded but lacks an entry point the test calls
	CUDATimeout           = "timeout"            // killed at PREFLIGHT_CUDA_TIMEOUT
	CUDAUnavailable       = "unavailable"        // the probe could not be started
	CUDAProbeFailed       = "probe-failed"       // the probe crashed or printed garbage
)

// CUDADevice is one device as CUDA sees it (after CUDA_VISIBLE_DEVICES).
type CUDADevice struct {
	// Ordinal is the CUDA device ordinal.
	Ordinal int    `json:"ordinal"`
	Name    string `json:"name,omitempty"`
	// UUID is cuDeviceGetUuid's answer in NVML's form, "GPU-xxxxxxxx-...".
	UUID     string `json:"uuid,omitempty"`
	PCIBusID string `json:"pciBusId,omitempty"`
	// ComputeCapability is "major.minor".
	ComputeCapability string `json:"computeCapability,omitempty"`
	// ComputeMode is "default", "prohibited", "exclusive-process" or "".
	ComputeMode string `json:"computeMode,omitempty"`
	// TotalBytes and FreeBytes are cuMemGetInfo's answer in the primary
	// context; 0 when it did not answer.
	TotalBytes uint64 `json:"totalBytes,omitempty"`
	FreeBytes  uint64 `json:"freeBytes,omitempty"`
	// Steps are the calls made on this device, in order, up to and
	// including the first failure of each chain.
	Steps []CUDAStep `json:"steps"`
	// DurationMillis is how long this device's steps took.
	DurationMillis float64 `json:"durationMillis,omitempty"`
}

// Failed returns the first failed step, or nil.
func (d CUDADevice) Failed() *CUDAStep {
	for i := range d.Steps {
		if d.Steps[i].Failed() {
			return &d.Steps[i]
		}
	}
	return nil
}

// CUDAStep is one step of the smoke test and its CUresult.
type CUDAStep struct {
	// Step is one of the CUDAStep* constants.
	Step string `json:"step"`
	// Code is the CUresult; 0 is CUDA_SUCCESS.
	Code int `json:"code"`
	// Error is CUDA's name for a non-zero Code (cuGetErrorName),
	// "CUDA_ERROR_NO_DEVICE"; for the compare step, CUDAWrongValue.
	Error string `json:"error,omitempty"`
	// Message is cuGetErrorString's text, or what else explains the
	// failure (the JIT log, the value read back).
	Message string `json:"message,omitempty"`
	// Millis is how long the step took.
	Millis float64 `json:"millis,omitempty"`
}

// Failed reports whether the step failed.
func (s CUDAStep) Failed() bool { return s.Code != 0 || s.Error != "" }

// Steps of the smoke test. init and count concern the driver; the others
// one device.
const (
	CUDAStepInit    = "init"    // cuInit
	CUDAStepCount   = "count"   // cuDeviceGetCount
	CUDAStepDevice  = "device"  // cuDeviceGet and its attributes
	CUDAStepContext = "context" // cuDevicePrimaryCtxRetain, cuCtxSetCurrent
	CUDAStepMemory  = "memory"  // cuMemGetInfo_v2
	CUDAStepModule  = "module"  // cuModuleLoadDataEx of the embedded PTX (JIT)
	CUDAStepAlloc   = "alloc"   // cuMemAlloc_v2
	CUDAStepLaunch  = "launch"  // cuLaunchKernel, cuCtxSynchronize
	CUDAStepCopy    = "copy"    // cuMemcpyDtoH_v2
	CUDAStepCompare = "compare" // the value copied back
	CUDAStepFatbin  = "fatbin"  // cuModuleLoadData of the framework's fatbin
	CUDAStepRelease = "release" // cuModuleUnload, cuMemFree_v2, cuDevicePrimaryCtxRelease_v2
)

// CUDAWrongValue is the compare step's Error when the kernel ran but the
// value copied back is not the one it was given.
const CUDAWrongValue = "WRONG_VALUE"

// CUDAFatbin is what kernel mode loaded of a framework library's fatbins.
type CUDAFatbin struct {
	// Library is the framework library it came from (inside the root).
	Library string `json:"library"`
	// Framework is the framework that library belongs to, "torch".
	Framework string `json:"framework,omitempty"`
	// Containers is how many fatbin containers were loaded, one per
	// distinct set of targets; Bytes their size in all.
	Containers int `json:"containers,omitempty"`
	Bytes      int `json:"bytes,omitempty"`
	// Targets are their targets, "sm_80", "compute_90".
	Targets []string `json:"targets,omitempty"`
	// Error says why no container could be taken from the library.
	Error string `json:"error,omitempty"`
}
