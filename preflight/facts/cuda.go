package facts

// CUDACheck is what the CUDA smoke test (PREFLIGHT_CUDA_CHECK) saw of libcuda.so.1.
type CUDACheck struct {
	Mode             string       `json:"mode"`                       // a CUDAMode* constant
	Outcome          string       `json:"outcome"`                    // a CUDA* outcome
	Error            string       `json:"error,omitempty"`            // the runner's or the loader's; CUDA's are in the steps
	Via              string       `json:"via,omitempty"`              // how the probe was started
	Library          string       `json:"library,omitempty"`          // the file loaded for libcuda.so.1
	DriverAPIVersion int          `json:"driverApiVersion,omitempty"` // 12020 for 12.2
	Init             *CUDAStep    `json:"init,omitempty"`
	DeviceCount      int          `json:"deviceCount,omitempty"`
	Devices          []CUDADevice `json:"devices,omitempty"`
	Fatbin           *CUDAFatbin  `json:"fatbin,omitempty"` // nil when kernel mode loaded none
	DurationMillis   float64      `json:"durationMillis,omitempty"`
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
	Ordinal           int        `json:"ordinal"`
	Name              string     `json:"name,omitempty"`
	UUID              string     `json:"uuid,omitempty"` // in NVML's form, "GPU-xxxxxxxx-..."
	PCIBusID          string     `json:"pciBusId,omitempty"`
	ComputeCapability string     `json:"computeCapability,omitempty"`
	ComputeMode       string     `json:"computeMode,omitempty"` // "default", "prohibited", "exclusive-process" or ""
	TotalBytes        uint64     `json:"totalBytes,omitempty"`  // cuMemGetInfo's answer
	FreeBytes         uint64     `json:"freeBytes,omitempty"`
	Result            string     `json:"result,omitempty"` // "ok", or "launch: CUDA_ERROR_LAUNCH_FAILED"
	Steps             []CUDAStep `json:"steps"`            // up to the first failure of each chain
	DurationMillis    float64    `json:"durationMillis,omitempty"`
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
	Step    string  `json:"step"`              // a CUDAStep* constant
	Code    int     `json:"code"`              // the CUresult, 0 for success
	Error   string  `json:"error,omitempty"`   // cuGetErrorName's "CUDA_ERROR_NO_DEVICE", or CUDAWrongValue
	Message string  `json:"message,omitempty"` // cuGetErrorString's text, the JIT log or the value read back
	Millis  float64 `json:"millis,omitempty"`
}

// Failed reports whether the step failed.
func (s CUDAStep) Failed() bool { return s.Code != 0 || s.Error != "" }

// Steps of the smoke test: init and count of the driver, the others per device.
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

// CUDAWrongValue is the compare step's Error: the kernel wrote another value.
const CUDAWrongValue = "WRONG_VALUE"

// CUDAFatbin is what kernel mode loaded of a framework library's fatbins.
type CUDAFatbin struct {
	Library    string   `json:"library"` // inside the root
	Framework  string   `json:"framework,omitempty"`
	Containers int      `json:"containers,omitempty"` // one per distinct set of Targets
	Bytes      int      `json:"bytes,omitempty"`
	Targets    []string `json:"targets,omitempty"`
	Error      string   `json:"error,omitempty"` // why no container could be taken
}
