// Package compat holds NVIDIA's compatibility tables as data: the driver a
// CUDA toolkit needs, the CUDA a driver branch supports, the minor-version
// compatibility floors, the PTX ISA of each CUDA release and the targets of
// each toolkit. Every row carries its source (docs/compat-tables.md); rows
// marked "derived" were not read from a table.
package compat

import (
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// toolkitDriver is the minimum Linux x86_64 driver for a CUDA toolkit's GA
// release. Source: CUDA Toolkit Release Notes, Table 3 "CUDA Toolkit and
// Corresponding Driver Versions" (13.2 Update 2 notes). Update releases need
// newer drivers, which minor-version compatibility covers.
var toolkitDriver = []toolkitDriverRow{
	{"10.0", "410.48"},
	{"10.1", "418.39"},
	{"10.2", "440.33"},
	{"11.0", "450.51.05"}, // 11.0.2 GA; 11.0.1 RC needed 450.36.06
	{"11.1", "455.23"},
	{"11.2", "460.27.03"},
	{"11.3", "465.19.01"},
	{"11.4", "470.42.01"},
	{"11.5", "495.29.05"},
	{"11.6", "510.39.01"},
	{"11.7", "515.43.04"},
	{"11.8", "520.61.05"},
	{"12.0", "525.60.13"},
	{"12.1", "530.30.02"},
	{"12.2", "535.54.03"},
	{"12.3", "545.23.06"},
	{"12.4", "550.54.14"},
	{"12.5", "555.42.02"},
	{"12.6", "560.28.03"},
	// No CUDA 12.7 toolkit exists; R565 drivers report 12.7.
	{"12.8", "570.26"},
	{"12.9", "575.51.03"},
	{"13.0", "580.65.06"},
	{"13.1", "590.44.01"},
	{"13.2", "595.45.04"},
	{"13.3", "610.43.02"}, // derived: cuda_compat version in redistrib_13.3.0.json, the 13.3 runfile's driver
	// From 13.4 the driver is no longer bundled and no GA row was published:
	// the floor is the branch (docs/compat-tables.md).
	{"13.4", "615"},
	{"13.5", "620"}, // likewise: the R620 branch, the 13.5 driver branch (redistrib_620.70.06.json cuda_variant "13.5")
}

type toolkitDriverRow struct{ CUDA, Driver string }

// branchCUDA maps a driver branch to the highest CUDA it supports, as
// nvidia-smi and nvmlSystemGetCudaDriverVersion report it. Source: Table 3's
// branch pairing and nvidia-smi samples (docs/compat-tables.md). A branch
// between rows is assumed to support the row below (LookupDriverCUDA).
var branchCUDA = []struct {
	Branch int
	CUDA   string
}{
	{410, "10.0"},
	{418, "10.1"},
	{440, "10.2"},
	{450, "11.0"},
	{455, "11.1"},
	{460, "11.2"},
	{465, "11.3"},
	{470, "11.4"},
	{495, "11.5"},
	{510, "11.6"},
	{515, "11.7"},
	{520, "11.8"},
	{525, "12.0"},
	{530, "12.1"},
	{535, "12.2"},
	{545, "12.3"},
	{550, "12.4"},
	{555, "12.5"},
	{560, "12.6"},
	{565, "12.7"},
	{570, "12.8"},
	{575, "12.9"},
	{580, "13.0"},
	{590, "13.1"},
	{595, "13.2"},
	{610, "13.3"},
	{615, "13.4"},
	{620, "13.5"},
}

// mvcFloor is the lowest driver for minor-version compatibility within a
// CUDA major, and the first branch past its range. Source:
// docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html
// (Table 1 and its footnote). 10.x has none.
var mvcFloor = []struct {
	Major  int
	Driver string
}{
	{11, "450.80.02"},
	{12, "525.60.13"},
	{13, "580.65.06"},
}

// ptxISA maps a PTX ISA version to the first CUDA release that emits it (and
// whose driver JIT accepts it). Source: NVIDIA PTX ISA release history, as
// cuda-python's cuda/bindings/utils/_ptx_utils.py transcribes it through
// 9.1; 9.2-9.5 from the PTX ISA documents of CUDA 13.2-13.5.
var ptxISA = []ptxISARow{
	{"6.3", "10.0"}, {"6.4", "10.1"}, {"6.5", "10.2"},
	{"7.0", "11.0"}, {"7.1", "11.1"}, {"7.2", "11.2"}, {"7.3", "11.3"}, {"7.4", "11.4"},
	{"7.5", "11.5"}, {"7.6", "11.6"}, {"7.7", "11.7"}, {"7.8", "11.8"},
	{"8.0", "12.0"}, {"8.1", "12.1"}, {"8.2", "12.2"}, {"8.3", "12.3"}, {"8.4", "12.4"},
	{"8.5", "12.5"}, // 12.6 also emits 8.5
	{"8.6", "12.7"}, {"8.7", "12.8"}, {"8.8", "12.9"},
	{"9.0", "13.0"}, {"9.1", "13.1"}, {"9.2", "13.2"}, {"9.3", "13.3"}, {"9.4", "13.4"},
	{"9.5", "13.5"},
}

type ptxISARow struct{ ISA, CUDA string }

// toolkitTargets is the set (not a range: 12.8 has no 11.x) of real
// architectures a CUDA toolkit compiles for, from its first minor until
// the next row. Source: nvcc --list-gpu-arch of each release, the CUDA
// 12.8-13.4 release notes, Kitware CMake Modules/CUDA/architectures.cmake.
var toolkitTargets = []struct {
	From string // first CUDA version with this set
	SMs  []int
}{
	{"10.0", []int{30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75}},
	{"11.0", []int{35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80}},                        // sm_80; sm_30/32 removed
	{"11.1", []int{35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86}},                    // sm_86
	{"11.4", []int{35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87}},                // sm_87 (Orin)
	{"11.8", []int{35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90}},        // sm_89, sm_90
	{"12.0", []int{50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90}},                // Kepler removed
	{"12.8", []int{50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 120}}, // Blackwell
	{"12.9", []int{50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 120, 121}},
	// Maxwell, Pascal and Volta removed; sm_101 renamed sm_110; sm_88 added.
	{"13.0", []int{75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121}},
	{"13.4", []int{75, 80, 86, 87, 88, 89, 90, 100, 103, 107, 110, 120, 121}}, // sm_107 (Rubin)
}

// forwardCompatBrands are the NVML brands of the GPUs CUDA forward
// compatibility supports: data-center GPUs ("Nvidia" from A100 on, "Tesla"
// before). Select RTX SKUs are too, but the brand cannot tell them, so
// professional brands are "maybe". Source:
// docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html.
var forwardCompatBrands = []struct {
	brand   string
	support Support
}{
	{facts.BrandTesla, Supported},
	{facts.BrandNvidia, Supported},
	{facts.BrandQuadro, Maybe},
	{facts.BrandQuadroRTX, Maybe},
	{facts.BrandNvidiaRTX, Maybe},
	{facts.BrandGeForce, Unsupported},
	{facts.BrandGeForceRTX, Unsupported},
	{facts.BrandTITAN, Unsupported},
	{facts.BrandTitanRTX, Unsupported},
}
