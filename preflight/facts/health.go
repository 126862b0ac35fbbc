package facts

// GPUHealth is what NVML says of a GPU's fitness to start a job now
// (docs/node-health.md gives each call and value with its source). A nil
// field was not read: its key is in Unsupported when NVML does not support
// the call on this GPU or driver, in Errors (with NVML's string) when the
// call failed. Neither is ever read as healthy or as sick.
type GPUHealth struct {
	RemappedRows *RemappedRows `json:"remappedRows,omitempty"`
	Fabric       *Fabric       `json:"fabric,omitempty"`
	Memory       *MemoryUse    `json:"memory,omitempty"`
	Processes    *Processes    `json:"processes,omitempty"`
	// ComputeMode is one of the ComputeMode* constants.
	ComputeMode string  `json:"computeMode,omitempty"`
	NVLink      *NVLink `json:"nvlink,omitempty"`
	PCIe        *PCIe   `json:"pcie,omitempty"`
	// ClockEvents are the active clock event reasons gpu-preflight judges
	// (ClockHW* and ClockSWThermal), from ClockEventMask.
	ClockEvents    []string `json:"clockEvents,omitempty"`
	ClockEventMask *uint64  `json:"clockEventMask,omitempty"`

	Unsupported []string          `json:"unsupported,omitempty"`
	Errors      map[string]string `json:"errors,omitempty"`
}

// RemappedRows is nvmlDeviceGetRemappedRows.
type RemappedRows struct {
	Correctable   int  `json:"correctable"`
	Uncorrectable int  `json:"uncorrectable"`
	Pending       bool `json:"pending"`
	Failed        bool `json:"failed"`
}

// Fabric is the GPU's registration in the NVLink fabric
// (nvmlDeviceGetGpuFabricInfoV, or the unversioned call without the mask).
type Fabric struct {
	// State is one of the Fabric* constants.
	State string `json:"state"`
	// Status is the nvmlReturn_t the registration ended with, meaningful
	// once State is FabricCompleted; StatusText is NVML's string for it.
	Status     int    `json:"status"`
	StatusText string `json:"statusText,omitempty"`
	CliqueID   uint32 `json:"cliqueId"`
	// ClusterUUID is empty when NVML gave zeros (no multi-node fabric).
	ClusterUUID string `json:"clusterUuid,omitempty"`
	// HealthMask is NVML's mask, nil when the call has none; Degraded
	// names what it says is wrong (the FabricHealth* constants).
	HealthMask *uint32  `json:"healthMask,omitempty"`
	Degraded   []string `json:"degraded,omitempty"`
}

// Fabric registration states, NVML_GPU_FABRIC_STATE_*.
const (
	FabricNotSupported = "not-supported"
	FabricNotStarted   = "not-started"
	FabricInProgress   = "in-progress"
	FabricCompleted    = "completed"
)

// What a fabric health mask may say is wrong, NVML_GPU_FABRIC_HEALTH_MASK_*.
const (
	FabricHealthDegradedBandwidth      = "bandwidth degraded"
	FabricHealthRouteRecovery          = "route recovery in progress"
	FabricHealthRouteUnhealthy         = "route unhealthy"
	FabricHealthAccessTimeoutRecovery  = "access timeout recovery in progress"
	FabricHealthIncorrectConfiguration = "incorrect configuration"
)

// MemoryUse is nvmlDeviceGetMemoryInfo_v2, which counts the memory the
// driver and firmware reserve apart from what processes allocated.
type MemoryUse struct {
	TotalBytes    uint64 `json:"totalBytes"`
	ReservedBytes uint64 `json:"reservedBytes"`
	UsedBytes     uint64 `json:"usedBytes"`
}

// Processes are the compute processes NVML lists on the GPU, in any PID
// namespace: their PIDs are the host's.
type Processes struct {
	Count int `json:"count"`
	// First holds at most MaxProcesses of them.
	First []Process `json:"first,omitempty"`
}

// MaxProcesses bounds Processes.First.
const MaxProcesses = 8

// Process is one compute process; UsedBytes is 0 when NVML cannot say.
type Process struct {
	PID       uint32 `json:"pid"`
	UsedBytes uint64 `json:"usedBytes,omitempty"`
}

// Compute modes, NVML_COMPUTEMODE_*.
const (
	ComputeModeDefault          = "default"
	ComputeModeExclusiveThread  = "exclusive-thread"
	ComputeModeProhibited       = "prohibited"
	ComputeModeExclusiveProcess = "exclusive-process"
)

// NVLink counts the GPU's active links and lists by number those that
// exist but are not active.
type NVLink struct {
	Active   int   `json:"active"`
	Inactive []int `json:"inactive,omitempty"`
}

// PCIe is the GPU's link; 0 is a value NVML did not give. MaxGeneration
// and MaxWidth are the most the link can reach with this GPU and this
// slot, GPUMaxGeneration the most the GPU itself supports.
type PCIe struct {
	CurrentGeneration int `json:"currentGeneration,omitempty"`
	CurrentWidth      int `json:"currentWidth,omitempty"`
	MaxGeneration     int `json:"maxGeneration,omitempty"`
	MaxWidth          int `json:"maxWidth,omitempty"`
	GPUMaxGeneration  int `json:"gpuMaxGeneration,omitempty"`
}

// Clock event reasons that hold a GPU's clocks down for a fault of the
// node (nvmlClocksEventReason* and nvmlClocksThrottleReason*).
const (
	ClockHWSlowdown   = "hw-slowdown"
	ClockSWThermal    = "sw-thermal-slowdown"
	ClockHWThermal    = "hw-thermal-slowdown"
	ClockHWPowerBrake = "hw-power-brake-slowdown"
)

// DriverLibrary is the NVML library file the probe loaded, to tell a
// kernel module from user-space driver libraries it does not match.
type DriverLibrary struct {
	// Path is the file mapped into the probe, symlinks resolved; Version
	// the driver version its name carries ("535.183.01"), "" when none.
	Path    string `json:"path"`
	Version string `json:"version,omitempty"`
	// Mounted says whether the file is a mount point, as the NVIDIA
	// Container Toolkit bind-mounts each host library; nil when unknown.
	Mounted *bool `json:"mounted,omitempty"`
	// RMVersionMismatch is set when nvmlInit answered
	// NVML_ERROR_LIB_RM_VERSION_MISMATCH.
	RMVersionMismatch bool `json:"rmVersionMismatch,omitempty"`
}

// Ranks is one launcher's statement of how many processes it starts on
// this node, read from the command line or the environment.
type Ranks struct {
	// Launcher is a Launcher* constant; Source the option or variable as
	// given ("--nproc-per-node=8", "PET_NPROC_PER_NODE=8").
	Launcher string `json:"launcher"`
	Source   string `json:"source"`
	PerNode  int    `json:"perNode"`
	// Devices are the device ordinals the launcher names, when it names
	// them (Paddle's --devices 0,1,2,3).
	Devices []int `json:"devices,omitempty"`
	// Assumed says what the count rests on that the command does not
	// state; "" when it states it all.
	Assumed string `json:"assumed,omitempty"`
}

// Launchers whose rank counts are read.
const (
	LauncherTorchrun   = "torchrun"
	LauncherPaddle     = "paddle"
	LauncherDeepSpeed  = "deepspeed"
	LauncherAccelerate = "accelerate"
	LauncherSlurm      = "slurm"
	// LauncherTorchWorker: LOCAL_WORLD_SIZE, which torchrun sets for each
	// process it starts.
	LauncherTorchWorker = "torch-worker"
)

// PerRank reports whether r comes from a variable each rank's own
// process carries, so that the ranks beside it share this node's GPUs.
func (r Ranks) PerRank() bool {
	return r.Launcher == LauncherSlurm || r.Launcher == LauncherTorchWorker
}
