package facts

// GPU brands as libnvidia-container's src/driver.c names NVML's, for the
// `brand` of NVIDIA_REQUIRE_* (docs/sources.md, "Requirement facts of the host").
const (
	BrandUnknown     = "Unknown"
	BrandQuadro      = "Quadro"
	BrandTesla       = "Tesla"
	BrandNVS         = "NVS"
	BrandGRID        = "GRID"
	BrandGeForce     = "GeForce"
	BrandTITAN       = "TITAN"
	BrandVApps       = "VApps"
	BrandVPC         = "VPC"
	BrandVCS         = "VCS"
	BrandVWS         = "VWS"
	BrandCloudGaming = "CloudGaming"
	BrandQuadroRTX   = "QuadroRTX"
	BrandNvidiaRTX   = "NvidiaRTX"
	BrandNvidia      = "Nvidia" // A100, H100, H200, B200...
	BrandGeForceRTX  = "GeForceRTX"
	BrandTitanRTX    = "TitanRTX"
)
