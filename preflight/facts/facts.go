// Package facts holds what gpu-preflight knows about the host and the
// container before it evaluates anything. Gatherers fill these types; checks
// read them. Nothing here does I/O.
//
// A zero value means "not known": an empty string, a nil pointer or a nil
// slice is a missing fact, never a default. Checks treat missing facts the
// way libnvidia-container does (a missing property satisfies its factor).
package facts

// MaxEnvString is the length, in bytes, from which an environment value
// cannot be real: execve(2) refuses any "NAME=value" string of
// MAX_ARG_STRLEN bytes or more (32 pages: 131072 bytes with 4 KiB pages,
// the terminating NUL included; linux include/uapi/linux/binfmts.h), so no
// process a container runtime starts, this one or the training command,
// can have been given it. Such a value reaches gpu-preflight only when it
// is called in process (tests) or the environment was forged. Gatherers
// refuse it rather than parse it.
const MaxEnvString = 128 << 10

// Facts is everything gathered for one run.
type Facts struct {
	Host      Host      `json:"host"`
	Container Container `json:"container"`
}

// Host is what the machine and its NVIDIA driver say.
type Host struct {
	Hostname string `json:"hostname"`
	Kernel   string `json:"kernel"`
	Driver   Driver `json:"driver"`
	// GPUs are the GPUs the driver reports, before visibility filtering.
	GPUs []GPU `json:"gpus"`
	// DeviceNodes are the /dev/nvidia* character devices present
	// (paths relative to the root, e.g. "/dev/nvidiactl").
	DeviceNodes []string `json:"deviceNodes"`
	// ShmBytes is the size of /dev/shm in bytes; 0 when unknown.
	ShmBytes uint64 `json:"shmBytes"`
	Cgroup   Cgroup `json:"cgroup"`
	NVML     NVML   `json:"nvml"`
	// CUDA is what the opt-in CUDA smoke test saw.
	CUDA CUDACheck `json:"cuda"`
}

// Driver describes the NVIDIA kernel driver.
type Driver struct {
	// Version is the driver version, e.g. "535.129.03"; empty when no driver.
	Version string `json:"version"`
	// CUDAVersion is the highest CUDA version the driver supports, "12.2".
	// From NVML when it answered, else from the driver-branch table.
	CUDAVersion string `json:"cudaVersion"`
	// CUDAVersionSource says where CUDAVersion came from: CUDAFromNVML,
	// CUDAFromBranchTable or CUDAAssumed.
	CUDAVersionSource string `json:"cudaVersionSource,omitempty"`
	// Source names what answered for the driver: "nvml-memfd",
	// "nvml-file", "procfs", or "none".
	Source string `json:"source"`
	// OpenKernelModule is true for the open GPU kernel module.
	OpenKernelModule bool `json:"openKernelModule,omitempty"`
}

// Sources of Driver.CUDAVersion.
const (
	// CUDAFromNVML: nvmlSystemGetCudaDriverVersion answered.
	CUDAFromNVML = "nvml"
	// CUDAFromBranchTable: the driver's branch is a row of gpu-preflight's
	// branch table (compat).
	CUDAFromBranchTable = "branch-table"
	// CUDAAssumed: the driver's branch is not in the table (600 between 595
	// and 610); it is taken to support what the branch below does. A guess:
	// findings built on it say so and never abort a job on their own.
	CUDAAssumed = "assumed"
)

// Present reports whether any evidence of a driver was found.
func (d Driver) Present() bool { return d.Version != "" }

// CUDAAssumed reports whether CUDAVersion is a guess (CUDAAssumed).
func (d Driver) CUDAAssumed() bool { return d.CUDAVersionSource == CUDAAssumed }

// GPU is one physical GPU. Fields NVML did not answer are empty; the reason
// is in Errors, keyed by the JSON field name.
type GPU struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	UUID  string `json:"uuid"`
	// PCIBusID is the full form "00000000:3B:00.0".
	PCIBusID string `json:"pciBusId"`
	// Brand uses libnvidia-container's strings: "Tesla", "Nvidia", "GeForceRTX"...
	Brand string `json:"brand"`
	// ComputeCapability is "major.minor", e.g. "9.0".
	ComputeCapability string `json:"computeCapability"`
	Architecture      string `json:"architecture,omitempty"`
	MemoryBytes       uint64 `json:"memoryBytes"`
	// MIGMode is "enabled", "disabled" or "" (unknown/unsupported).
	MIGMode string `json:"migMode"`
	// PersistenceMode is "enabled", "disabled" or "".
	PersistenceMode string `json:"persistenceMode"`
	// ECCUncorrectedVolatile is the volatile uncorrected ECC error count; nil when unsupported.
	ECCUncorrectedVolatile *uint64 `json:"eccUncorrectedVolatile,omitempty"`
	// RetiredPagesPending is true when retired pages await a reboot; nil when unsupported.
	RetiredPagesPending *bool `json:"retiredPagesPending,omitempty"`
	// MIGDevices counts MIG devices visible on this GPU; nil when unknown.
	MIGDevices *int `json:"migDevices,omitempty"`
	// Health is what decides whether the GPU can start a job now.
	Health *GPUHealth `json:"health,omitempty"`
	// Errors maps a field name to the NVML error that left it empty.
	Errors map[string]string `json:"errors,omitempty"`
}

// Cgroup holds the container's resource limits. Zero means unlimited or unknown.
type Cgroup struct {
	// Version is 1 or 2; 0 when unknown.
	Version     int    `json:"version"`
	MemoryBytes uint64 `json:"memoryLimitBytes,omitempty"`
	// CPUs is the CPU quota in cores (quota/period), 0 when unlimited.
	CPUs float64 `json:"cpuLimit,omitempty"`
}

// NVML records how the NVML probe went.
type NVML struct {
	// Outcome is one of the Probe* constants.
	Outcome string `json:"outcome"`
	// Error is NVML's or the runner's error string, if any.
	Error string `json:"error,omitempty"`
	// Via is how the probe was started: "memfd", "file:<path>", or "".
	Via string `json:"via,omitempty"`
	// Version is NVML's own version string.
	Version string `json:"version,omitempty"`
	// DurationMillis is how long the probe ran.
	DurationMillis float64 `json:"durationMillis,omitempty"`
	// Embedded is whether this gpu-preflight carries the probe (`make
	// build` embeds it, `go install` cannot), which decides the remedy
	// when no probe could be started.
	Embedded bool `json:"embedded,omitempty"`
	// Library is the library file the probe loaded.
	Library *DriverLibrary `json:"library,omitempty"`
}

// Outcomes of the NVML probe.
const (
	ProbeNotRun          = "not-run"           // no driver evidence, or disabled
	ProbeOK              = "ok"                // NVML initialised and answered
	ProbeLibraryNotFound = "library-not-found" // libnvidia-ml.so.1 could not be loaded
	ProbeDriverNotLoaded = "driver-not-loaded" // NVML loaded, no kernel driver
	ProbeInitFailed      = "init-failed"       // nvmlInit failed another way
	ProbeTimeout         = "timeout"           // killed at the deadline
	ProbeUnavailable     = "unavailable"       // no probe could be started (no memfd, no file, no loader)
	ProbeFailed          = "failed"            // the probe crashed or printed garbage
)

// Container is what the image says about itself.
type Container struct {
	// Env holds the raw values of the environment variables gpu-preflight
	// reads, the table envvars.Read (NVIDIA_VISIBLE_DEVICES,
	// NVIDIA_REQUIRE_*, CUDA_VERSION, ...), and no other. A key that is
	// present with an empty value was set to empty; an absent key was unset.
	Env map[string]string `json:"env"`
	// Requirements are the NVIDIA_REQUIRE_* variables, sorted by name, plus
	// the legacy rule derived from CUDA_VERSION where the toolkit adds it.
	Requirements []Requirement `json:"requirements"`
	// RequireDisabled is true when NVIDIA_DISABLE_REQUIRE is set to a true value.
	RequireDisabled bool `json:"requireDisabled,omitempty"`
	// RequireError is set when the requirements could not be collected
	// (an unparsable CUDA_VERSION in a legacy image).
	RequireError string `json:"requireError,omitempty"`
	// CUDA is the CUDA toolkit found in the image.
	CUDA CUDAToolkit `json:"cuda"`
	// Compat lists forward-compatibility libcuda libraries under
	// /usr/local/cuda/compat.
	Compat []CompatLib `json:"compat"`
	// Stack lists other CUDA libraries (cuDNN, NCCL, TensorRT).
	Stack Stack `json:"stack"`
	// Frameworks are the deep-learning frameworks installed.
	Frameworks []Framework `json:"frameworks"`
	// CUDALibraries are the CUDA libraries the frameworks load, with the
	// copy the dynamic loader takes and the other copies present.
	CUDALibraries []CUDALibrary `json:"cudaLibraries,omitempty"`
	// Python is the interpreter the command runs, which decided which
	// frameworks are judged; nil when no scan judged any.
	Python *Python `json:"python,omitempty"`
	// ScanSource says how Stack/Frameworks were obtained: "scan",
	// "manifest" (read from the baked image manifest), or "" when not scanned.
	ScanSource string   `json:"scanSource,omitempty"`
	Identity   Identity `json:"identity"`
	// Ranks are the launchers' counts of processes on this node.
	Ranks []Ranks `json:"ranks,omitempty"`
}

// Requirement is one NVIDIA_REQUIRE_* variable (or PREFLIGHT_REQUIRE, or the
// legacy rule derived from CUDA_VERSION).
type Requirement struct {
	Var   string `json:"var"`
	Value string `json:"value"`
}

// CUDAToolkit is the image's CUDA: the CUDA runtime the job will load,
// else the toolkit under /usr/local/cuda, else the distribution's
// libcudart, else CUDA_VERSION (the first of CUDASourceOrder found).
type CUDAToolkit struct {
	// Version is major.minor, "11.8"; Full is what the file said, "11.8.20220929".
	Version string `json:"version"`
	Full    string `json:"full,omitempty"`
	// Source is the file or variable it came from.
	Source string `json:"source,omitempty"`
	// Kind is which kind of source won (a CUDAFrom* constant); "" in
	// facts gathered before it was recorded.
	Kind string `json:"kind,omitempty"`
	// Others are the other sources found, in CUDASourceOrder, whatever
	// their version: cuda-stack reports those that disagree.
	Others []CUDASource `json:"others,omitempty"`
}

// CUDASource is one place that states the image's CUDA.
type CUDASource struct {
	Kind    string `json:"kind"`
	Version string `json:"version"`
	Full    string `json:"full,omitempty"`
	Source  string `json:"source"`
}

// Kinds of CUDASource, strongest evidence first (CUDASourceOrder).
const (
	// CUDAFromRuntime: the libcudart the judged framework loads (its pip
	// wheel, its conda package, the file the loader model resolves).
	CUDAFromRuntime = "framework-runtime"
	// CUDAFromToolkit: /usr/local/cuda's version.json, version.txt, link
	// or libcudart.
	CUDAFromToolkit = "toolkit"
	// CUDAFromDistribution: a distribution's libcudart package
	// (/usr/lib/<triplet>/libcudart.so.X.Y.Z).
	CUDAFromDistribution = "distribution"
	// CUDAFromEnv: the CUDA_VERSION the image's environment sets.
	CUDAFromEnv = "env"
)

// CUDASourceOrder is the order of evidence for the image's CUDA.
var CUDASourceOrder = []string{CUDAFromRuntime, CUDAFromToolkit, CUDAFromDistribution, CUDAFromEnv}

// CompatLib is one forward-compatibility libcuda in /usr/local/cuda/compat.
type CompatLib struct {
	Path string `json:"path"`
	// DriverVersion is the driver the library was built from, "535.129.03".
	DriverVersion string `json:"driverVersion"`
}

// Stack is the CUDA libraries found in the image. Empty means not found.
type Stack struct {
	CuDNN    Component `json:"cudnn"`
	NCCL     Component `json:"nccl"`
	TensorRT Component `json:"tensorrt"`
}

// Component is one library and where its version came from.
type Component struct {
	Version string `json:"version"`
	Source  string `json:"source,omitempty"`
}

// Framework is one installed deep-learning framework.
type Framework struct {
	// Name is "paddlepaddle", "torch", "tensorflow" or "jax".
	Name    string `json:"name"`
	Version string `json:"version"`
	// CUDAVersion is the CUDA it was built for, "11.8"; empty for CPU builds.
	CUDAVersion string `json:"cudaVersion"`
	// Build is what the framework was built for: BuildCUDA, BuildCPU,
	// BuildROCm, or "" when its files do not say.
	Build        string `json:"build,omitempty"`
	CuDNNVersion string `json:"cudnnVersion,omitempty"`
	// Archs are the compiled GPU targets, "sm_80", "compute_90", "sm_90a".
	Archs []string `json:"archs"`
	// Kernels lists the scanned kernel libraries and what each carries.
	Kernels []KernelLibrary `json:"kernels,omitempty"`
	// Location is the package directory.
	Location string `json:"location"`
	// Source names the file the version came from.
	Source string `json:"source,omitempty"`
	// Environment is the prefix of the Python environment it was found
	// in ("/opt/venv", "/root/miniconda3", "/usr"), EnvironmentKind that
	// environment's kind (preflight/pyenv: venv, conda, pyenv, system,
	// user). Location is where the framework's own files, its extension
	// modules and kernel libraries, start.
	Environment     string `json:"environment,omitempty"`
	EnvironmentKind string `json:"environmentKind,omitempty"`
	// PathEntry is the sys.path directory it is imported from, and
	// PathFrom how that directory got on sys.path: "site-packages", "user
	// site", "base site-packages", "PYTHONPATH", ".pth <file>", "editable
	// finder <file>".
	PathEntry string `json:"pathEntry,omitempty"`
	PathFrom  string `json:"pathFrom,omitempty"`
	// NotJudged says why the checks leave it out: another copy shadows it
	// on the sys.path of the interpreter the command runs, or that
	// interpreter's venv excludes the site it is in. Empty: judged.
	NotJudged string `json:"notJudged,omitempty"`
	// NotImportable says why no Python can import this copy (a dist-info
	// whose package is gone, a package without __init__); ABI are the
	// CPython ABIs its extension modules or wheel tags are built for
	// ("cp312", "cp313t", "abi3"), read from ABISource; empty: any.
	NotImportable string   `json:"notImportable,omitempty"`
	ABI           []string `json:"abi,omitempty"`
	ABISource     string   `json:"abiSource,omitempty"`
	// Candidate marks a copy judged as one of several environments that
	// may run the command (Container.Python.Candidates): findings name it
	// by its Environment.
	Candidate bool `json:"candidate,omitempty"`
	// CUDARuntime is the version of the CUDA runtime (libcudart) it will
	// load, "12.1.105", and CUDARuntimeSource where that was read (the
	// file the loader resolves, the nvidia-cuda-runtime wheel's
	// dist-info, a conda-meta record); empty when unknown. For jax it
	// stands beside CUDAVersion, the CUDA its plugin was built with.
	CUDARuntime       string `json:"cudaRuntime,omitempty"`
	CUDARuntimeSource string `json:"cudaRuntimeSource,omitempty"`
}

// Judged are the frameworks the checks judge: those the command's
// interpreter imports first (Framework.NotJudged empty).
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
	Path string `json:"path"`
	// Soname is the name the loader knew it by ("libnccl.so.2"); Version
	// its release from the real file's name or its wheel ("2.22.3").
	Soname  string `json:"soname,omitempty"`
	Version string `json:"version,omitempty"`
	// Why says how it is in the framework's load closure: "extension
	// module", "DT_NEEDED of <path>", "dlopen by <path>" (with the list it
	// comes from), found by Via (an ldso.Via* step).
	Why string `json:"why,omitempty"`
	Via string `json:"via,omitempty"`
	// Lazy is set when the framework loads it only on first use (dlopen),
	// rather than at import.
	Lazy bool `json:"lazy,omitempty"`
	// CUDA is set on one of NVIDIA's CUDA libraries (cuDNN, NCCL, cuBLAS,
	// ...), clear on the framework's own and other libraries.
	CUDA    bool          `json:"cuda,omitempty"`
	Size    int64         `json:"size"`
	ModTime int64         `json:"modTime"` // Unix nanoseconds
	Images  []KernelImage `json:"images"`
	// Fatbins groups the library's fatbins by the images they carry; empty
	// when the library was scanned by a gpu-preflight that did not record
	// them (the check then judges Images as one set).
	Fatbins []FatbinGroup `json:"fatbins,omitempty"`
	// Error is set when the library could not be scanned.
	Error string `json:"error,omitempty"`
}

// KernelImage is one distinct target in a library's fatbins.
type KernelImage struct {
	// Kind is "cubin" or "ptx".
	Kind string `json:"kind"`
	// Arch is "sm_90", "sm_90a", "compute_80" ...
	Arch string `json:"arch"`
	// PTXVersion is the PTX ISA version of a PTX entry, "8.4".
	PTXVersion string `json:"ptxVersion,omitempty"`
	// Count is how many entries carry this target.
	Count int `json:"count"`
}

// CUDALibrary is one CUDA library a framework loads (libcudart, libcudnn*,
// libnccl, libcublas*, libcusparse*, ...): the copy the dynamic loader
// takes first, the version the framework was built against, and the other
// copies of the same library in the places the loader or pip and conda put
// them.
type CUDALibrary struct {
	// Framework is the facts.Framework name that loads it, and
	// FrameworkLocation that framework's Location (two environments may
	// hold one framework each).
	Framework         string `json:"framework"`
	FrameworkLocation string `json:"frameworkLocation,omitempty"`
	// Name is the soname asked for, "libcudnn.so.9"; Library is it without
	// the version, "libcudnn".
	Name    string `json:"name"`
	Library string `json:"library"`
	// Wheel is the pip distribution that ships the library for the
	// framework's CUDA major, "nvidia-cudnn-cu12"; "" when unknown.
	Wheel string `json:"wheel,omitempty"`
	// Loaded is the copy that loads first; its Path is empty when the
	// loader finds none.
	Loaded LibraryCopy `json:"loaded"`
	// BuiltFor is the version the framework was built against or requires
	// at least, "9.1.0.70"; "" when unknown. BuiltForSource says where it
	// was read.
	BuiltFor       string `json:"builtFor,omitempty"`
	BuiltForSource string `json:"builtForSource,omitempty"`
	// Others are the other copies, of any version, found in the loader's
	// search path, the pip wheels' nvidia/*/lib, conda's lib and
	// /usr/local/cuda*.
	Others []LibraryCopy `json:"others,omitempty"`
}

// LibraryCopy is one file of a CUDA library.
type LibraryCopy struct {
	Path string `json:"path"`
	// Version is the library's version, "9.1.0"; from the real file's name,
	// the pip wheel's release or the header beside it (VersionSource).
	Version       string `json:"version"`
	VersionSource string `json:"versionSource,omitempty"`
	// Via is the loader's step that finds it first (ldso.Via*), with the
	// object whose DT_RPATH or DT_RUNPATH it was in ViaObject; "" for a
	// copy the loader does not reach.
	Via       string `json:"via,omitempty"`
	ViaObject string `json:"viaObject,omitempty"`
}

// Identity is what the container's environment says of the image and its
// build (preflight/identity): the reference and digest it was deployed by,
// and the revision, creation time and source repository it was built from.
type Identity struct {
	Ref       string `json:"ref"`
	Digest    string `json:"digest"`
	Revision  string `json:"revision"`
	Created   string `json:"created"`
	SourceURL string `json:"sourceUrl,omitempty"`
	// From is "env" when any of them was set, else "".
	From string `json:"from,omitempty"`
}

// FatbinGroup is the fatbins of a library (one per translation unit or
// device link) that carry the same set of kernel images. The CUDA runtime
// picks one image per fatbin, so a GPU runs the library's kernels only
// where every fatbin has an image for it.
type FatbinGroup struct {
	// Images are the targets each fatbin of the group carries; Count is
	// left zero.
	Images []KernelImage `json:"images"`
	// Count is how many of the library's fatbins carry exactly these.
	Count int `json:"count"`
}
