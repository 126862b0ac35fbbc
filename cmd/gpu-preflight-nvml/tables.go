//go:build cgo

package main

import gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

// brandNames maps NVML's brands to the strings libnvidia-container's
// src/driver.c gives the `brand` property, which image requirements such as
// `brand=tesla` are compared against (case-insensitively); its brand switch
// was added in toolkit v1.9.0 (docs/sources.md, "Requirement facts of the
// host"). The keys are go-nvml's constants, so a name go-nvml does not
// define, or two names for one value, does not compile.
var brandNames = map[gonvml.BrandType]string{
	gonvml.BRAND_UNKNOWN:             "Unknown",
	gonvml.BRAND_QUADRO:              "Quadro",
	gonvml.BRAND_TESLA:               "Tesla",
	gonvml.BRAND_NVS:                 "NVS",
	gonvml.BRAND_GRID:                "GRID",
	gonvml.BRAND_GEFORCE:             "GeForce",
	gonvml.BRAND_TITAN:               "TITAN",
	gonvml.BRAND_NVIDIA_VAPPS:        "VApps",
	gonvml.BRAND_NVIDIA_VPC:          "VPC",
	gonvml.BRAND_NVIDIA_VCS:          "VCS",
	gonvml.BRAND_NVIDIA_VWS:          "VWS",
	gonvml.BRAND_NVIDIA_CLOUD_GAMING: "CloudGaming", // also BRAND_NVIDIA_VGAMING
	gonvml.BRAND_QUADRO_RTX:          "QuadroRTX",
	gonvml.BRAND_NVIDIA_RTX:          "NvidiaRTX",
	gonvml.BRAND_NVIDIA:              "Nvidia", // A100, H100, H200, B200...
	gonvml.BRAND_GEFORCE_RTX:         "GeForceRTX",
	gonvml.BRAND_TITAN_RTX:           "TitanRTX",
	// BRAND_NVIDIA_DLA, BRAND_NVIDIA_VGAMEDEV, BRAND_NVIDIA_NPU and anything
	// newer are not in the toolkit's switch: its default, "Unknown".
}

// architectureNames names NVML's device architectures as the comments of
// nvml.h (NVML_DEVICE_ARCH_*) do, keyed by go-nvml's constants.
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

// name looks v up in one of these tables. A value the table does not name
// (a brand the toolkit's switch leaves to its default, an architecture NVML
// added later, DEVICE_ARCH_UNKNOWN) is "Unknown", as both sources say.
func name[K comparable](table map[K]string, v K) string {
	if s, ok := table[v]; ok {
		return s
	}
	return "Unknown"
}
