// Package facts holds what gatherers found of the host, the container and
// the job; a zero value is a missing fact, never a default.
package facts

//go:generate go run ../../internal/cmd/jsongen -type Host,Orchestrator,Framework,CUDALibrary,CUDASource,Requirement,CompatLib,Python -o record_json.go

// MaxEnvString is MAX_ARG_STRLEN (linux uapi/linux/binfmts.h): gatherers refuse longer, forged values.
const MaxEnvString = 128 << 10

// Facts is everything gathered for one run.
type Facts struct {
	Host         Host         `json:"host"`
	Container    Container    `json:"container"`
	Orchestrator Orchestrator `json:"orchestrator"`
}

// Host is what the machine and its NVIDIA driver say.
type Host struct {
	Hostname    string    `json:"hostname"`
	Kernel      string    `json:"kernel"`
	Driver      Driver    `json:"driver"`
	GPUs        []GPU     `json:"gpus"`        // before visibility filtering
	DeviceNodes []string  `json:"deviceNodes"` // /dev/nvidia* character devices
	NVML        NVML      `json:"nvml"`
	ShmBytes    uint64    `json:"shmBytes"` // the size of /dev/shm
	Cgroup      Cgroup    `json:"cgroup"`
	CUDA        CUDACheck `json:"cuda"`
	Transport   Transport `json:"transport"` // NCCL's network as this rank sees it
}

// Driver is the NVIDIA kernel driver; Version is empty without one.
type Driver struct {
	Version           string       `json:"version"`
	CUDAVersion       string       `json:"cudaVersion"`                 // the highest it supports, "12.2"
	Source            string       `json:"source"`                      // a DriverFrom* constant
	CUDAVersionSource string       `json:"cudaVersionSource,omitempty"` // a CUDAFrom* constant or CUDAAssumed
	OpenKernelModule  bool         `json:"openKernelModule,omitempty"`
	Branch            DriverBranch `json:"branch"`
}

// Sources of Driver.CUDAVersion.
const (
	CUDAFromNVML        = "nvml"
	CUDAFromBranchTable = "branch-table"
	CUDAAssumed         = "assumed" // as the branch below in the table: a guess that never aborts a job alone
)

// Present reports whether any evidence of a driver was found.
func (d Driver) Present() bool { return d.Version != "" }

// CUDAAssumed reports whether CUDAVersion is a guess.
func (d Driver) CUDAAssumed() bool { return d.CUDAVersionSource == CUDAAssumed }

// DriverBranch is the driver's data-center lifecycle on the day of the run.
type DriverBranch struct {
	Name        string `json:"name"`        // "R535"
	Known       bool   `json:"known"`       // the lifecycle table holds it
	Designation string `json:"designation"` // "Long Term Support Branch", "Production Branch", "New Feature Branch"
	EndOfLife   string `json:"endOfLife"`   // "June 2026", "by August 2025"
	Supported   bool   `json:"supported"`   // LTSB or PB, not past its end of life
}

// GPU is one physical GPU; Errors says why NVML left a field empty.
type GPU struct {
	Index             int    `json:"index"`
	Name              string `json:"name"`
	UUID              string `json:"uuid"`
	PCIBusID          string `json:"pciBusId"`          // "00000000:3B:00.0"
	Brand             string `json:"brand"`             // a Brand* constant
	ComputeCapability string `json:"computeCapability"` // "9.0"
	Architecture      string `json:"architecture,omitempty"`
	MemoryBytes       uint64 `json:"memoryBytes"`
	MIGMode           string `json:"migMode"`         // "enabled", "disabled" or ""
	PersistenceMode   string `json:"persistenceMode"` // "enabled", "disabled" or ""
	// The health counters are nil where NVML does not support them.
	ECCUncorrectedVolatile *uint64           `json:"eccUncorrectedVolatile,omitempty"`
	RetiredPagesPending    *bool             `json:"retiredPagesPending,omitempty"`
	MIGDevices             *int              `json:"migDevices,omitempty"`
	Health                 *GPUHealth        `json:"health,omitempty"` // whether it can start a job now
	Errors                 map[string]string `json:"errors,omitempty"`
}

// Cgroup holds the container's limits; 0 is unlimited or unknown.
type Cgroup struct {
	Version     int     `json:"version"`
	MemoryBytes uint64  `json:"memoryLimitBytes,omitempty"`
	CPUs        float64 `json:"cpuLimit,omitempty"`
}

// NVML is how the NVML probe went.
type NVML struct {
	Outcome        string         `json:"outcome"` // a Probe* constant
	Error          string         `json:"error,omitempty"`
	Via            string         `json:"via,omitempty"` // "memfd", "file:<path>", or ""
	Version        string         `json:"version,omitempty"`
	DurationMillis float64        `json:"durationMillis,omitempty"`
	Embedded       bool           `json:"embedded,omitempty" record:"-"` // of the build, not the run
	Library        *DriverLibrary `json:"library,omitempty"`             // the file the probe loaded
}

// Outcomes of the NVML probe.
const (
	ProbeNotRun          = "not-run"           // no driver evidence, or disabled
	ProbeOK              = "ok"                // NVML initialised and answered
	ProbeLibraryNotFound = "library-not-found" // libnvidia-ml.so.1 could not be loaded
	ProbeDriverNotLoaded = "driver-not-loaded" // NVML loaded, no kernel driver
	ProbeInitFailed      = "init-failed"       // nvmlInit failed another way
	ProbeTimeout         = "timeout"           // killed at the deadline
	ProbeUnavailable     = "unavailable"       // no probe could be started
	ProbeFailed          = "failed"            // the probe crashed or printed garbage
)

// Container is what the image says about itself.
type Container struct {
	Env             map[string]string `json:"env"`          // envvars.Read's variables, raw; "" was set empty
	Requirements    []Requirement     `json:"requirements"` // sorted by variable
	RequireDisabled bool              `json:"requireDisabled,omitempty"`
	RequireError    string            `json:"requireError,omitempty"` // why they could not be collected
	CUDA            CUDAToolkit       `json:"cuda"`
	Compat          []CompatLib       `json:"compat"` // in /usr/local/cuda/compat
	Stack           Stack             `json:"stack"`
	Frameworks      []Framework       `json:"frameworks"`
	CUDALibraries   []CUDALibrary     `json:"cudaLibraries,omitempty"`
	Python          *Python           `json:"python,omitempty"`     // the interpreter the command runs, which decided what is judged
	ScanSource      string            `json:"scanSource,omitempty"` // a ScanFrom* constant, or ""
	Identity        Identity          `json:"identity"`
	Ranks           []Ranks           `json:"ranks,omitempty"`       // the launchers' process counts on this node
	Nodes           string            `json:"nodes,omitempty"`       // the command's --nnodes ("2", "1:4")
	NodesSource     string            `json:"nodesSource,omitempty"` // that option as given
}

// Requirement is a NVIDIA_REQUIRE_* variable, PREFLIGHT_REQUIRE or CUDA_VERSION's rule.
type Requirement struct {
	Var   string `json:"var"`
	Value string `json:"value"`
}

// CUDAToolkit is the image's CUDA: the first of CUDASourceOrder found.
type CUDAToolkit struct {
	Version string       `json:"version"`        // "11.8"
	Full    string       `json:"full,omitempty"` // as the source said, "11.8.20220929"
	Source  string       `json:"source,omitempty"`
	Kind    string       `json:"kind,omitempty"`   // Source's CUDAFrom* kind
	Others  []CUDASource `json:"others,omitempty"` // the other sources, whatever their version
}

// CUDASource is one place that states the image's CUDA.
type CUDASource struct {
	Kind    string `json:"kind"`
	Version string `json:"version"`
	Full    string `json:"full,omitempty" record:",omitempty"`
	Source  string `json:"source"`
}

// Kinds of CUDASource, strongest evidence first.
const (
	CUDAFromRuntime      = "framework-runtime" // the libcudart the judged framework loads
	CUDAFromToolkit      = "toolkit"           // /usr/local/cuda
	CUDAFromDistribution = "distribution"      // a distribution's libcudart package
	CUDAFromEnv          = "env"               // the image's CUDA_VERSION
)

// CUDASourceOrder is the order of evidence for the image's CUDA.
var CUDASourceOrder = []string{CUDAFromRuntime, CUDAFromToolkit, CUDAFromDistribution, CUDAFromEnv}

// CompatLib is one forward-compatibility libcuda.
type CompatLib struct {
	Path          string `json:"path"`
	DriverVersion string `json:"driverVersion"` // built from, "535.129.03"
}

// Stack is the CUDA libraries found in the image; empty is not found.
type Stack struct {
	CuDNN    Component `json:"cudnn"`
	NCCL     Component `json:"nccl"`
	TensorRT Component `json:"tensorrt"`
}

// Component is one library's version and where it came from.
type Component struct {
	Version string `json:"version"`
	Source  string `json:"source,omitempty"`
}

// Framework is one installed deep-learning framework; the record leaves out the scan's working data.
type Framework struct {
	Name              string          `json:"name"` // "paddlepaddle", "torch", "tensorflow" or "jax"
	Version           string          `json:"version"`
	CUDAVersion       string          `json:"cudaVersion"` // built for; empty for CPU builds
	CuDNNVersion      string          `json:"cudnnVersion,omitempty"`
	Build             string          `json:"build,omitempty"` // a Build* constant, "" when its files do not say
	Archs             []string        `json:"archs"`           // "sm_80", "compute_90", "sm_90a"
	Kernels           []KernelLibrary `json:"kernels,omitempty" record:"-"`
	Location          string          `json:"location" record:"-"`                // the package directory
	Source            string          `json:"source,omitempty" record:"-"`        // the file the version came from
	Environment       string          `json:"environment,omitempty"`              // the Python environment's prefix
	EnvironmentKind   string          `json:"environmentKind,omitempty"`          // venv, conda, pyenv, system, user
	PathEntry         string          `json:"pathEntry,omitempty"`                // the sys.path directory it is imported from
	PathFrom          string          `json:"pathFrom,omitempty"`                 // "site-packages", "PYTHONPATH", ".pth <file>"...
	NotJudged         string          `json:"notJudged,omitempty"`                // why the checks leave it out (shadowed...)
	NotImportable     string          `json:"notImportable,omitempty" record:"-"` // why no Python imports it (an orphaned dist-info...)
	ABI               []string        `json:"abi,omitempty" record:"-"`           // the CPython ABIs that load it: "cp312", "cp313t", "abi3"; empty: any
	ABISource         string          `json:"abiSource,omitempty" record:"-"`     // the extension module or WHEEL file ABI was read from
	Candidate         bool            `json:"candidate,omitempty" record:"-"`     // judged as one of Python.Candidates: findings name its Environment
	CUDARuntime       string          `json:"cudaRuntime,omitempty"`              // the libcudart it loads (for jax, beside its plugin's CUDA)
	CUDARuntimeSource string          `json:"cudaRuntimeSource,omitempty"`
}

// Judged are the frameworks the command's interpreter imports first.
func (c Container) Judged() []Framework {
	var out []Framework
	for _, f := range c.Frameworks {
		if f.NotJudged == "" {
			out = append(out, f)
		}
	}
	return out
}

// Framework builds.
const (
	BuildCUDA = "cuda"
	BuildCPU  = "cpu"
	BuildROCm = "rocm"
)

// KernelLibrary is one shared object whose fatbins were scanned.
type KernelLibrary struct {
	Path    string        `json:"path"`
	Soname  string        `json:"soname,omitempty"`  // "libnccl.so.2"
	Version string        `json:"version,omitempty"` // "2.22.3"
	Why     string        `json:"why,omitempty"`     // in the load closure as "DT_NEEDED of <path>", "dlopen by <path>"
	Via     string        `json:"via,omitempty"`     // an ldso.Via* step
	Lazy    bool          `json:"lazy,omitempty"`    // loaded on first use, not at import
	CUDA    bool          `json:"cuda,omitempty"`    // one of NVIDIA's CUDA libraries
	Size    int64         `json:"size"`
	ModTime int64         `json:"modTime"` // Unix nanoseconds
	Images  []KernelImage `json:"images"`
	Fatbins []FatbinGroup `json:"fatbins,omitempty"` // none in older manifests: Images is then one set
	Error   string        `json:"error,omitempty"`
}

// KernelImage is one distinct target in a library's fatbins.
type KernelImage struct {
	Kind       string `json:"kind"`                 // "cubin" or "ptx"
	Arch       string `json:"arch"`                 // "sm_90", "sm_90a", "compute_80"
	PTXVersion string `json:"ptxVersion,omitempty"` // a PTX entry's ISA version, "8.4"
	Count      int    `json:"count"`
}

// FatbinGroup is a library's fatbins that carry the same images (the runtime picks one per fatbin).
type FatbinGroup struct {
	Images []KernelImage `json:"images"` // what each carries (Count left zero)
	Count  int           `json:"count"`
}

// CUDALibrary is a CUDA library a framework loads, and the copies found.
type CUDALibrary struct {
	Framework         string        `json:"framework"`
	FrameworkLocation string        `json:"frameworkLocation,omitempty" record:"-"` // two environments may hold one framework each
	Name              string        `json:"name"`                                   // the soname asked for, "libcudnn.so.9"
	Library           string        `json:"library"`                                // "libcudnn"
	Wheel             string        `json:"wheel,omitempty"`                        // "nvidia-cudnn-cu12"
	Loaded            LibraryCopy   `json:"loaded"`                                 // no Path when none loads
	BuiltFor          string        `json:"builtFor,omitempty"`                     // the version the framework requires at least
	BuiltForSource    string        `json:"builtForSource,omitempty"`
	Others            []LibraryCopy `json:"others,omitempty"` // in the loader's path, pip's, conda's, /usr/local/cuda*
}

// LibraryCopy is one file of a CUDA library.
type LibraryCopy struct {
	Path          string `json:"path"`
	Version       string `json:"version"` // "9.1.0"
	VersionSource string `json:"versionSource,omitempty"`
	Via           string `json:"via,omitempty"`       // the ldso.Via* step that finds it; "" when none does
	ViaObject     string `json:"viaObject,omitempty"` // whose DT_RPATH or DT_RUNPATH
}

// Identity is how the image was deployed and built, as the environment says.
type Identity struct {
	Ref       string `json:"ref"`
	Digest    string `json:"digest"`
	Revision  string `json:"revision"`
	Created   string `json:"created"`
	SourceURL string `json:"sourceUrl,omitempty"`
	From      string `json:"from,omitempty"`   // "env" when any of them was set
	Pinned    bool   `json:"pinned,omitempty"` // Digest is one (imageref.ValidDigest): the run names one image
}
