//go:build cgo

package main

import (
	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// brandNames is libnvidia-container's switch from NVML's brands to the
// `brand` property's strings (src/driver.c, since toolkit v1.9.0), keyed by
// go-nvml's constants so the compiler checks them.
var brandNames = map[gonvml.BrandType]string{
	gonvml.BRAND_UNKNOWN:             facts.BrandUnknown,
	gonvml.BRAND_QUADRO:              facts.BrandQuadro,
	gonvml.BRAND_TESLA:               facts.BrandTesla,
	gonvml.BRAND_NVS:                 facts.BrandNVS,
	gonvml.BRAND_GRID:                facts.BrandGRID,
	gonvml.BRAND_GEFORCE:             facts.BrandGeForce,
	gonvml.BRAND_TITAN:               facts.BrandTITAN,
	gonvml.BRAND_NVIDIA_VAPPS:        facts.BrandVApps,
	gonvml.BRAND_NVIDIA_VPC:          facts.BrandVPC,
	gonvml.BRAND_NVIDIA_VCS:          facts.BrandVCS,
	gonvml.BRAND_NVIDIA_VWS:          facts.BrandVWS,
	gonvml.BRAND_NVIDIA_CLOUD_GAMING: facts.BrandCloudGaming, // also BRAND_NVIDIA_VGAMING
	gonvml.BRAND_QUADRO_RTX:          facts.BrandQuadroRTX,
	gonvml.BRAND_NVIDIA_RTX:          facts.BrandNvidiaRTX,
	gonvml.BRAND_NVIDIA:              facts.BrandNvidia, // A100, H100, H200, B200...
	gonvml.BRAND_GEFORCE_RTX:         facts.BrandGeForceRTX,
	gonvml.BRAND_TITAN_RTX:           facts.BrandTitanRTX,
	// Newer brands are not in the toolkit's switch: its default, BrandUnknown.
}

// architectureNames names NVML's architectures as nvml.h's NVML_DEVICE_ARCH_* comments do.
var architectureNames = map[gonvml.DeviceArchitecture]string{
	gonvml.DEVICE_ARCH_KEPLER:    "Kepler",
	gonvml.DEVICE_ARCH_MAXWELL:   "Maxwell",
	gonvml.DEVICE_ARCH_PASCAL:    "Pascal",
	gonvml.DEVICE_ARCH_VOLTA:     "Volta",
	gonvml.DEVICE_ARCH_TURING:    "Turing",
	gonvml.DEVICE_ARCH_AMPERE:    "Ampere",
	gonvml.DEVICE_ARCH_ADA:       "Ada",
	gonvml.DEVICE_ARCH_HOPPER:    "Hopper",
	gonvml.DEVICE_ARCH_BLACKWELL: "Blackwell",
	gonvml.DEVICE_ARCH_DLA:       "DLA",
	gonvml.DEVICE_ARCH_DLA2:      "DLA2",
	gonvml.DEVICE_ARCH_RUBIN:     "Rubin",
	gonvml.DEVICE_ARCH_NPU3:      "NPU3",
}

// name looks v up in a table; a value it does not name is "Unknown", as both sources say.
func name[K comparable](table map[K]string, v K) string {
	if s, ok := table[v]; ok {
		return s
	}
	return "Unknown" // facts.BrandUnknown, and nvml.h's name for DEVICE_ARCH_UNKNOWN
}
