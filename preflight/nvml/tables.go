package nvml

import "fmt"

// brandNames maps NVML's nvmlBrandType_t values to the strings
// libnvidia-container's driver.c gives the `brand` property, which image
// requirements such as `brand=tesla` are compared against (case-insensitively).
// Values from go-nvml pkg/nvml/const.go (BRAND_*); strings from
// libnvidia-container src/driver.c (fork ElasticProvisioner/libnvidia-container
// @2bee8f0, the brand switch added in toolkit v1.9.0). Research notes 1d.
// Values the switch does not name (DLA 17, VGAMEDEV 18, NPU 19, anything
// newer) fall to its default, "Unknown".
var brandNames = map[int]string{
	0:  "Unknown",     // NVML_BRAND_UNKNOWN
	1:  "Quadro",      // NVML_BRAND_QUADRO
	2:  "Tesla",       // NVML_BRAND_TESLA
	3:  "NVS",         // NVML_BRAND_NVS
	4:  "GRID",        // NVML_BRAND_GRID
	5:  "GeForce",     // NVML_BRAND_GEFORCE
	6:  "TITAN",       // NVML_BRAND_TITAN
	7:  "VApps",       // NVML_BRAND_NVIDIA_VAPPS
	8:  "VPC",         // NVML_BRAND_NVIDIA_VPC
	9:  "VCS",         // NVML_BRAND_NVIDIA_VCS
	10: "VWS",         // NVML_BRAND_NVIDIA_VWS
	11: "CloudGaming", // NVML_BRAND_NVIDIA_CLOUD_GAMING (= VGAMING)
	12: "QuadroRTX",   // NVML_BRAND_QUADRO_RTX
	13: "NvidiaRTX",   // NVML_BRAND_NVIDIA_RTX
	14: "Nvidia",      // NVML_BRAND_NVIDIA (A100, H100, H200, B200...)
	15: "GeForceRTX",  // NVML_BRAND_GEFORCE_RTX
	16: "TitanRTX",    // NVML_BRAND_TITAN_RTX
}

// BrandName returns libnvidia-container's string for an nvmlBrandType_t.
func BrandName(brand int) string {
	if s, ok := brandNames[brand]; ok {
		return s
	}
	return "Unknown"
}

// architectureNames maps nvmlDeviceArchitecture_t values to names.
// Source: NVML_DEVICE_ARCH_* in go-nvml v0.13.4-1 pkg/nvml/nvml.h (research
// notes 5); names as in the header's comments.
var architectureNames = map[uint32]string{
	2:  "Kepler",
	3:  "Maxwell",
	4:  "Pascal",
	5:  "Volta",
	6:  "Turing",
	7:  "Ampere",
	8:  "Ada",
	9:  "Hopper",
	10: "Blackwell",
	11: "DLA",
	12: "DLA2",
	13: "Rubin",
	15: "NPU3",
}

// ArchitectureName names an nvmlDeviceArchitecture_t value; a value NVML
// added after this table (or NVML_DEVICE_ARCH_UNKNOWN) is "Unknown".
func ArchitectureName(arch uint32) string {
	if s, ok := architectureNames[arch]; ok {
		return s
	}
	return "Unknown"
}

// CUDAVersion formats nvmlSystemGetCudaDriverVersion's integer (12040) as
// "major.minor" (12.4) with NVML's own macros: NVML_CUDA_DRIVER_VERSION_MAJOR
// is v/1000 and _MINOR is (v%1000)/10 (nvml.h; docs/sources.md, "NVML"). This is not
// libnvidia-container's v%100/10, which would render 13100 as "13.0"
// (docs/sources.md, "Requirement facts of the host"). It returns "" for a version that is not positive.
func CUDAVersion(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}
