package facts

// GPU brands, GPU.Brand, as libnvidia-container's src/driver.c names NVML's
// brands: the values the `brand` property of NVIDIA_REQUIRE_* is compared
// with, case-insensitively (docs/sources.md, "Requirement facts of the
// host"). The probe maps go-nvml's BRAND_* to them
// (cmd/gpu-preflight-nvml/tables.go); a brand the toolkit does not name is
// BrandUnknown.
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
