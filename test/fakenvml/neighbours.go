package fakenvml

import (
	"fmt"
	"strconv"
	"strings"
)

// The answer beside each fault scenario's; docs/node-health.md,
// "Scenarios", gives each one's source.

const (
	computeExclusive   = 3 // NVML_COMPUTEMODE_EXCLUSIVE_PROCESS
	fabricNotSupported = 0 // NVML_GPU_FABRIC_STATE_NOT_SUPPORTED
	fabricInProgress   = 2 // NVML_GPU_FABRIC_STATE_IN_PROGRESS
	clocksSoftware     = 0x1 | 0x2 | 0x4 | 0x10 | 0x100
)

// HeldByAnotherContainer: H100 GPU 5 holds 40 GiB for no listed process.
func HeldByAnotherContainer() Scenario {
	return sick(HealthyH100x8(), "held-by-another-container", 5, map[string]string{"procs": "", "used": strconv.FormatUint(40<<30, 10)})
}

func ExclusiveIdle() Scenario {
	return everyGPU(HealthyH100x8(), "exclusive-idle", map[string]string{"computemode": strconv.Itoa(computeExclusive)})
}

func ExclusiveBusy() Scenario {
	return sick(ExclusiveIdle(), "exclusive-busy", 1, map[string]string{"procs": "7741:8589934592", "used": "8589934592"})
}

// h100PCIe is one of four H100 PCIe cards bridged in pairs.
func h100PCIe(i int) map[string]string {
	g := idle(map[string]string{
		"name": "NVIDIA H100 PCIe", "uuid": uuid(9, i), "busid": fmt.Sprintf("00000000:%02X:00.0", 0x17+i),
		"brand": "14", "cc": "9 0", "arch": "9", "memory": strconv.FormatUint(81559<<20, 10),
		"mig": "0 0", "persistence": "1", "ecc": "0", "minor": strconv.Itoa(i),
		"nvlink": links(12), "fabric": fmt.Sprintf("%d 0 0 0", fabricNotSupported),
	})
	pcie(g, 1, 5, 5, 16)
	return g
}

// a100PCIe is one of four A100 PCIe cards without bridges.
func a100PCIe(i int) map[string]string {
	g := idle(map[string]string{
		"name": "NVIDIA A100 80GB PCIe", "uuid": uuid(10, i), "busid": fmt.Sprintf("00000000:%02X:00.0", 0x31+i),
		"brand": "14", "cc": "8 0", "arch": "7", "memory": strconv.FormatUint(81920<<20, 10),
		"mig": "0 0", "persistence": "1", "ecc": "0", "minor": strconv.Itoa(i),
		"nvlink": strings.TrimSpace(strings.Repeat("0 ", 12)),
	})
	pcie(g, 1, 4, 4, 16)
	return g
}

func H100PCIeBridged() Scenario { return healthy("h100pcie-bridged", 4, h100PCIe) }
func A100PCIe() Scenario        { return healthy("a100pcie", 4, a100PCIe) }

func H100Gen4Slots() Scenario {
	return everyGPU(HealthyH100x8(), "h100-gen4-slots", map[string]string{"pciemaxgen": "4"})
}
func H100OneGen4Link() Scenario {
	return sick(HealthyH100x8(), "h100-one-gen4-link", 7, map[string]string{"pciemaxgen": "4"})
}
func B200OneGen4Link() Scenario {
	return sick(HealthyB200x8(), "b200-one-gen4-link", 3, map[string]string{"pciemaxgen": "4"})
}

func ClocksSoftware() Scenario {
	return everyGPU(HealthyB200x8(), "clocks-software", map[string]string{"clocks": strconv.Itoa(clocksSoftware)})
}
func ClocksPowerBrake() Scenario {
	return sick(HealthyB200x8(), "clocks-power-brake", 0, map[string]string{"clocks": strconv.Itoa(0x4 | 0x80)})
}
func ClocksSWThermal() Scenario {
	return sick(HealthyB200x8(), "clocks-sw-thermal", 0, map[string]string{"clocks": strconv.Itoa(0x20)})
}

func FabricInProgress() Scenario {
	return sick(HealthyH100x8(), "fabric-in-progress", 0, map[string]string{"fabric": fmt.Sprintf("%d 0 0 0", fabricInProgress)})
}
func FabricRouteUnhealthy() Scenario {
	return sick(HealthyGB200x4(), "fabric-route-unhealthy", 3, map[string]string{"fabric": fmt.Sprintf("%d 0 32766 %d", fabricCompleted, fabricHealthy&^(3<<4)|1<<4)})
}
func FabricInsufficientNVLinks() Scenario {
	return sick(HealthyGB200x4(), "fabric-insufficient-nvlinks", 3, map[string]string{"fabric": fmt.Sprintf("%d 0 32766 %d", fabricCompleted, fabricHealthy&^(0xf<<8)|5<<8)})
}

func RemapCorrectable() Scenario {
	return sick(HealthyA100x8(), "remap-correctable", 2, map[string]string{"remap": "6 0 0 0"})
}
func RemapPendingAndFailed() Scenario {
	return sick(HealthyH100x8(), "remap-pending-and-failed", 4, map[string]string{"remap": "0 3 1 1"})
}

// RemapMIG: the call answers NOT_SUPPORTED on a GPU in MIG mode.
func RemapMIG() Scenario {
	s := sick(HealthyA100x8(), "remap-mig", 0, map[string]string{"mig": "1 1"})
	delete(s.GPUs[0], "remap")
	return s
}

func GPULost() Scenario {
	return sick(HealthyH100x8(), "gpu-lost", 6, map[string]string{"remap": Fail(ErrorGPUIsLost)})
}
func HealthUnknown() Scenario {
	return sick(HealthyH100x8(), "health-unknown", 6, map[string]string{"fabric": Fail(ErrorUnknown)})
}
