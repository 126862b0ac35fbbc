package facts

// What answered for the driver (Driver.Source).
const (
	DriverFromNVMLMemfd = "nvml-memfd" // the NVML probe, run from a memfd
	DriverFromNVMLFile  = "nvml-file"  // the NVML probe, run from a file
	DriverFromProcfs    = "procfs"     // /proc/driver/nvidia/version
	DriverFromNone      = "none"       // no driver found
	DriverFromNodeClass = "nodeclass"  // a node class's driver, not a machine's
	DriverFromAdvise    = "advise"     // a node advise considers
)

// How the image's facts were obtained (Container.ScanSource).
const (
	ScanFromManifest = "manifest" // the manifest bake wrote
	ScanFromImage    = "scan"     // the image, scanned at run time
)

// CUDAFromEnvSource is the Source of the image's CUDA when CUDA_VERSION
// states it (CUDAFromEnv).
const CUDAFromEnvSource = "env CUDA_VERSION"

// ComponentFromEnv prefixes a Component's Source when a variable states
// its version: "env:NCCL_VERSION".
const ComponentFromEnv = "env:"

// VersionFromFileName is a LibraryCopy's VersionSource when the file's name
// states its version; a link's target adds its name: "file name libcudnn.so.9.1.0".
const VersionFromFileName = "file name"
