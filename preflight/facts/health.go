package facts

// GPUHealth is what NVML says of a GPU's fitness to start a job now
// (docs/node-health.md). A nil field was not read: its key is in
// Unsupported (NOT_SUPPORTED) or in Errors, with NVML's string;
// ClockEvents are the Clock* reasons set in ClockEventMask.
type GPUHealth struct {
	RemappedRows   *RemappedRows `json:"remappedRows,omitempty"`
	Fabric         *Fabric       `json:"fabric,omitempty"`
	Memory         *MemoryUse    `json:"memory,omitempty"`
	Processes      *Processes    `json:"processes,omitempty"`
	ComputeMode    string        `json:"computeMode,omitempty"`
	NVLink         *NVLink       `json:"nvlink,omitempty"`
	PCIe           *PCIe         `json:"pcie,omitempty"`
	ClockEvents    []string      `json:"clockEvents,omitempty"`
	ClockEventMask *uint64       `json:"clockEventMask,omitempty"`

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

// Fabric is the GPU's registration in the NVLink fabric. Status is the
// nvmlReturn_t it ended with; HealthMask is nil from the unversioned call,
// and Degraded names the FabricHealth* faults it reports.
type Fabric struct {
	State       string   `json:"state"`
	Status      int      `json:"status"`
	StatusText  string   `json:"statusText,omitempty"`
	CliqueID    uint32   `json:"cliqueId"`
	ClusterUUID string   `json:"clusterUuid,omitempty"`
	HealthMask  *uint32  `json:"healthMask,omitempty"`
	Degraded    []string `json:"degraded,omitempty"`
}

// Fabric states, NVML_GPU_FABRIC_STATE_*.
const (
	FabricNotSupported = "not-supported"
	FabricNotStarted   = "not-started"
	FabricInProgress   = "in-progress"
	FabricCompleted    = "completed"
)

// Fabric health faults, NVML_GPU_FABRIC_HEALTH_MASK_*.
const (
	FabricHealthDegradedBandwidth      = "bandwidth degraded"
	FabricHealthRouteRecovery          = "route recovery in progress"
	FabricHealthRouteUnhealthy         = "route unhealthy"
	FabricHealthAccessTimeoutRecovery  = "access timeout recovery in progress"
	FabricHealthIncorrectConfiguration = "incorrect configuration"
)

// MemoryUse is nvmlDeviceGetMemoryInfo_v2: Used excludes Reserved.
type MemoryUse struct {
	TotalBytes    uint64 `json:"totalBytes"`
	ReservedBytes uint64 `json:"reservedBytes"`
	UsedBytes     uint64 `json:"usedBytes"`
}

// Processes are the GPU's compute processes, of any PID namespace; First
// keeps at most MaxProcesses.
type Processes struct {
	Count int       `json:"count"`
	First []Process `json:"first,omitempty"`
}

const MaxProcesses = 8

// Process is one; UsedBytes is 0 when NVML cannot say.
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

// NVLink counts the active links and numbers the inactive ones.
type NVLink struct {
	Active   int   `json:"active"`
	Inactive []int `json:"inactive,omitempty"`
}

// PCIe is the GPU's link, 0 where NVML did not answer. The Max* values are
// what the link can reach in this slot, GPUMaxGeneration the GPU's own.
type PCIe struct {
	CurrentGeneration int `json:"currentGeneration,omitempty"`
	CurrentWidth      int `json:"currentWidth,omitempty"`
	MaxGeneration     int `json:"maxGeneration,omitempty"`
	MaxWidth          int `json:"maxWidth,omitempty"`
	GPUMaxGeneration  int `json:"gpuMaxGeneration,omitempty"`
}

// Clock event reasons that are the node's fault.
const (
	ClockHWSlowdown   = "hw-slowdown"
	ClockSWThermal    = "sw-thermal-slowdown"
	ClockHWThermal    = "hw-thermal-slowdown"
	ClockHWPowerBrake = "hw-power-brake-slowdown"
)

// DriverLibrary is the libnvidia-ml file the probe mapped, the version its
// name carries, whether it is a mount point (nil: unknown) and whether
// nvmlInit answered NVML_ERROR_LIB_RM_VERSION_MISMATCH.
type DriverLibrary struct {
	Path              string `json:"path"`
	Version           string `json:"version,omitempty"`
	Mounted           *bool  `json:"mounted,omitempty"`
	RMVersionMismatch bool   `json:"rmVersionMismatch,omitempty"`
}

// Ranks is a launcher's count of processes on this node, the option that
// states it, the devices it names and what it assumes.
type Ranks struct {
	Launcher string `json:"launcher"`
	Source   string `json:"source"`
	PerNode  int    `json:"perNode"`
	Devices  []int  `json:"devices,omitempty"`
	Assumed  string `json:"assumed,omitempty"`
}

// Launchers whose rank counts are read.
const (
	LauncherTorchrun   = "torchrun"
	LauncherPaddle     = "paddle"
	LauncherDeepSpeed  = "deepspeed"
	LauncherAccelerate = "accelerate"
	LauncherSlurm      = "slurm"
	// LauncherTorchWorker is LOCAL_WORLD_SIZE, set in each torchrun worker.
	LauncherTorchWorker = "torch-worker"
)

// PerRank reports whether every rank's own process carries r, so that
// ranks side by side share this node's GPUs.
func (r Ranks) PerRank() bool {
	return r.Launcher == LauncherSlurm || r.Launcher == LauncherTorchWorker
}
