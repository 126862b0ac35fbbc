package fakenvml

import (
	"debug/elf"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/test/fakescenario"
)

// What healthy, idle GPUs answer to the health calls, model by model, and
// the faults the node-health checks catch, each scripted on one of them.
// docs/node-health.md, "Scenarios", gives every value's source; a value no
// NVIDIA document states is left unscripted (NOT_SUPPORTED) or marked
// illustrative there.

// NVML values the health scenarios script (nvml.h).
const (
	fabricNotStarted      = 1 // NVML_GPU_FABRIC_STATE_NOT_STARTED
	fabricCompleted       = 3 // NVML_GPU_FABRIC_STATE_COMPLETED
	insufficientResources = 23
	clocksIdle            = 0x1  // nvmlClocksEventReasonGpuIdle
	clocksHWSlowdown      = 0x8  // nvmlClocksThrottleReasonHwSlowdown
	clocksHWThermal       = 0x40 // nvmlClocksThrottleReasonHwThermalSlowdown
	computeProhibited     = 2    // NVML_COMPUTEMODE_PROHIBITED
	errLibRMMismatch      = 18   // NVML_ERROR_LIB_RM_VERSION_MISMATCH
)

// fabricHealthy is a health mask with every field at its healthy value:
// each 2 ("false") up to bit 8, then 1 (correct, assigned, connected).
const fabricHealthy = 2 | 2<<2 | 2<<4 | 2<<6 | 1<<8 | 1<<12 | 1<<14

// idle is what every model answers alike: no row remapped, no process,
// default compute mode, nothing allocated, clocks idle.
func idle(gpu map[string]string) map[string]string {
	maps.Copy(gpu, map[string]string{
		"remap": "0 0 0 0", "procs": "", "computemode": "0", "used": "0", "reserved": "0", "clocks": strconv.Itoa(clocksIdle),
	})
	return gpu
}

// links is n active NVLinks.
func links(n int) string { return strings.TrimSpace(strings.Repeat("1 ", n)) }

// pcie scripts a link: its current generation (1: lowered at idle), the
// most the link and the GPU reach, and its width.
func pcie(gpu map[string]string, current, max, gpuMax, width int) {
	gpu["pciegen"], gpu["pciemaxgen"], gpu["pciewidth"], gpu["pciemaxwidth"] = strconv.Itoa(current), strconv.Itoa(max), strconv.Itoa(width), strconv.Itoa(width)
	if gpuMax > 0 {
		gpu["pciegpumaxgen"] = strconv.Itoa(gpuMax)
	}
}

func healthyA100(i int) map[string]string {
	g := idle(a100(i))
	g["nvlink"] = links(12)
	pcie(g, 1, 4, 4, 16)
	return g
}

// hgx is GPU g of an NVSwitch board (DGX H100, DGX B200): 18 NVLinks,
// registered in the fabric, a Gen5 x16 link.
func hgx(g map[string]string, gpuMaxGen int) map[string]string {
	g = idle(g)
	g["nvlink"] = links(18)
	g["fabric"] = fmt.Sprintf("%d 0 0 0", fabricCompleted)
	pcie(g, 1, 5, gpuMaxGen, 16)
	return g
}

func healthyH100(i int) map[string]string { return hgx(h100(i), 5) }
func healthyB200(i int) map[string]string { return hgx(b200(i), 0) }

// gb200 is GPU i of a GB200 NVL72 compute tray (four GPUs, each attached
// to a Grace CPU by NVLink-C2C: no PCIe link is scripted), registered in
// the rack's multi-node fabric.
func gb200(i int) map[string]string {
	return idle(map[string]string{
		"name": "NVIDIA GB200", "uuid": uuid(7, i), "busid": fmt.Sprintf("00000008:%02X:00.0", 0x01+i),
		"brand": "14", "cc": "10 0", "arch": "10", "memory": strconv.FormatUint(186<<30, 10),
		"mig": "0 0", "persistence": "1", "ecc": "0", "minor": strconv.Itoa(i),
		"nvlink": links(18), "fabric": fmt.Sprintf("%d 0 32766 %d", fabricCompleted, fabricHealthy),
		"fabricuuid": "5e5e0000000000000000000000000a72",
	})
}

// l40s is a PCIe card without NVLink or fabric: those calls are
// unscripted, so NVML answers NOT_SUPPORTED.
func l40s(i int) map[string]string {
	g := idle(map[string]string{
		"name": "NVIDIA L40S", "uuid": uuid(8, i), "busid": fmt.Sprintf("00000000:%02X:00.0", 0x81+i),
		"brand": "14", "cc": "8 9", "arch": "8", "memory": strconv.FormatUint(46068<<20, 10),
		"persistence": "1", "ecc": "0", "minor": strconv.Itoa(i),
	})
	pcie(g, 1, 4, 4, 16)
	return g
}

func healthy(name string, n int, model func(int) map[string]string) Scenario {
	return Scenario{Name: name, Init: "ok", System: system("570.133.20", 12080, n), GPUs: fakescenario.Devices(n, model)}
}

// Healthy nodes: a DGX A100, H100 and B200, a GB200 compute tray, and four
// L40S PCIe cards.
func HealthyA100x8() Scenario  { return healthy("healthy-a100x8", 8, healthyA100) }
func HealthyH100x8() Scenario  { return healthy("healthy-h100x8", 8, healthyH100) }
func HealthyB200x8() Scenario  { return healthy("healthy-b200x8", 8, healthyB200) }
func HealthyGB200x4() Scenario { return healthy("healthy-gb200x4", 4, gb200) }
func L40Sx4() Scenario         { return healthy("l40sx4", 4, l40s) }

// sick is healthy s with GPU i's facts changed; name names the fault.
func sick(s Scenario, name string, i int, facts map[string]string) Scenario {
	s.Name = name
	maps.Copy(s.GPUs[i], facts)
	return s
}

// everyGPU is s with every GPU's facts changed alike.
func everyGPU(s Scenario, name string, facts map[string]string) Scenario {
	s.Name = name
	for _, g := range s.GPUs {
		maps.Copy(g, facts)
	}
	return s
}

// RemapPending is a DGX H100 whose GPU 3 remapped a row for an
// uncorrectable error and waits for a reset to apply it (Xid 63).
func RemapPending() Scenario {
	return sick(HealthyH100x8(), "remap-pending", 3, map[string]string{"remap": "0 1 1 0"})
}

// RemapFailed is a DGX A100 whose GPU 5 has had a row remapping fail
// (Xid 64): an RMA condition.
func RemapFailed() Scenario {
	return sick(HealthyA100x8(), "remap-failed", 5, map[string]string{"remap": "0 512 0 1"})
}

// FabricNotStarted is a DGX H100 whose fabric manager is not running: no
// GPU has begun its registration.
func FabricNotStarted() Scenario {
	return everyGPU(HealthyH100x8(), "fabric-not-started", map[string]string{"fabric": fmt.Sprintf("%d 0 0 0", fabricNotStarted)})
}

// FabricFailed is a GB200 tray whose GPU 2 completed its registration
// with an error (Insufficient Resources).
func FabricFailed() Scenario {
	return sick(HealthyGB200x4(), "fabric-failed", 2, map[string]string{"fabric": fmt.Sprintf("%d %d 32766 %d", fabricCompleted, insufficientResources, fabricHealthy)})
}

// FabricDegraded is a GB200 tray whose GPU 1's fabric reports degraded
// bandwidth.
func FabricDegraded() Scenario {
	return sick(HealthyGB200x4(), "fabric-degraded", 1, map[string]string{"fabric": fmt.Sprintf("%d 0 32766 %d", fabricCompleted, fabricHealthy&^3|1)})
}

// GPUBusy is a DGX H100 whose GPU 2 runs another job's process, which
// holds 32 GiB.
func GPUBusy() Scenario {
	return sick(HealthyH100x8(), "gpu-busy", 2, map[string]string{"procs": "48213:34359738368", "used": "34359738368"})
}

// ComputeProhibited is a DGX A100 whose GPU 0 admits no CUDA context.
func ComputeProhibited() Scenario {
	return sick(HealthyA100x8(), "compute-prohibited", 0, map[string]string{"computemode": strconv.Itoa(computeProhibited)})
}

// NVLinkDown is a DGX H100 whose GPU 6 has four of its 18 links down.
func NVLinkDown() Scenario {
	return sick(HealthyH100x8(), "nvlink-down", 6, map[string]string{"nvlink": "1 1 1 0 1 1 1 0 1 1 1 0 1 1 1 0 1 1"})
}

// PCIeNarrow is a DGX A100 whose GPU 1's link trained at x8 of x16.
func PCIeNarrow() Scenario {
	return sick(HealthyA100x8(), "pcie-narrow", 1, map[string]string{"pciewidth": "8"})
}

// ClocksSlowdown is a DGX B200 whose GPU 4 is held down by hardware
// slowdown and thermal slowdown.
func ClocksSlowdown() Scenario {
	return sick(HealthyB200x8(), "clocks-slowdown", 4, map[string]string{"clocks": strconv.Itoa(clocksHWSlowdown | clocksHWThermal)})
}

// LibraryMismatch is a libnvidia-ml whose nvmlInit finds the kernel
// module at another version.
func LibraryMismatch() Scenario {
	return Scenario{Name: "library-mismatch", Init: strconv.Itoa(errLibRMMismatch)}
}

// Exported lists the functions a shared library exports, as the dynamic
// linker sees them: the fake's, or a real libnvidia-ml's.
func Exported(lib string) (map[string]bool, error) {
	f, err := elf.Open(lib)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			out[s.Name] = true
		}
	}
	return out, nil
}
