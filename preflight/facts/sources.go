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

// CUDAFromEnvSource is the image CUDA's Source when CUDA_VERSION states it.
const CUDAFromEnvSource = "env CUDA_VERSION"

// ComponentFromEnv prefixes a Component's Source from a variable: "env:NCCL_VERSION".
const ComponentFromEnv = "env:"

// VersionFromFileName is a LibraryCopy's VersionSource from a file's name: "file name libcudnn.so.9.1.0".
const VersionFromFileName = "file name"
