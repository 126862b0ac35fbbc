package fakenvml

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gpu-preflight/gpu-preflight/test/fakescenario"
)

// EnvScenario names the scenario file the fake library reads at nvmlInit.
const EnvScenario = "FAKE_NVML_SCENARIO"

// NVML return codes scenarios script (nvml.h nvmlReturn_t).
const (
	ErrorNotSupported    = 3
	ErrorNoPermission    = 4
	ErrorDriverNotLoaded = 9
	ErrorLibraryNotFound = 12
	ErrorGPUIsLost       = 15
	ErrorUnknown         = 999
)

// Scenario is what the fake library answers. Facts not set make their NVML
// call return NOT_SUPPORTED; a value "!N" makes it return code N.
type Scenario struct {
	Name   string
	Init   string              // "ok", "hang" (nvmlInit never returns) or a return code
	System map[string]string   // driver, nvml, cuda (v1), cuda_v2 and count
	GPUs   []map[string]string // name uuid busid brand cc arch memory mig persistence ecc retired minor migmax migdevices handle
}

// Fail is the value that makes a call return NVML return code code.
func Fail(code int) string { return "!" + strconv.Itoa(code) }

// Text renders the scenario file fake.c reads.
func (s Scenario) Text() string { return fakescenario.Text(s.Name, s.Init, s.System, s.GPUs) }

// Write saves the scenario in dir and returns the path for FAKE_NVML_SCENARIO.
func (s Scenario) Write(dir string) (string, error) {
	p := filepath.Join(dir, s.Name+".scenario")
	return p, os.WriteFile(p, []byte(s.Text()), 0o644)
}

// system is a healthy driver answering both CUDA version calls.
func system(driver string, cuda, count int) map[string]string {
	// The NVML version is "<CUDA major>.<driver>", as NVML prints it.
	return map[string]string{
		"driver": driver, "nvml": fmt.Sprintf("%d.%s", cuda/1000, driver),
		"cuda": strconv.Itoa(cuda), "cuda_v2": strconv.Itoa(cuda), "count": strconv.Itoa(count),
	}
}

func uuid(model, i int) string {
	return fmt.Sprintf("GPU-%08x-%04x-%04x-%04x-%012x", 0x5eed0000+model, i, 0x4000+i, 0x8000+model, 0x1000+i)
}

// Models as NVML reports them (docs/sources.md, "Requirement facts of the
// host"; memory as nvidia-smi shows it: H100 SXM 81559 MiB, V100 SXM2 16 GB
// 16384 MiB, RTX 4090 24564 MiB). Hopper, Ampere data-centre and GeForce
// parts answer NOT_SUPPORTED for retired pages, GeForce for ECC and MIG too.

// h100 is GPU i of a DGX H100 (bus ids as on that board).
func h100(i int) map[string]string {
	bus := []string{"18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"}
	return map[string]string{
		"name": "NVIDIA H100 80GB HBM3", "uuid": uuid(1, i), "busid": "00000000:" + bus[i%len(bus)] + ":00.0",
		"brand": "14", "cc": "9 0", "arch": "9", "memory": strconv.FormatUint(81559<<20, 10),
		"mig": "0 0", "persistence": "1", "ecc": "0", "minor": strconv.Itoa(i),
	}
}

func v100(i int) map[string]string {
	return map[string]string{
		"name": "Tesla V100-SXM2-16GB", "uuid": uuid(2, i), "busid": fmt.Sprintf("00000000:%02X:00.0", 0x15+i),
		"brand": "2", "cc": "7 0", "arch": "5", "memory": strconv.FormatUint(16384<<20, 10),
		"persistence": "1", "ecc": "0", "retired": "0", "minor": strconv.Itoa(i),
	}
}

func rtx4090(i int) map[string]string {
	return map[string]string{
		"name": "NVIDIA GeForce RTX 4090", "uuid": uuid(3, i), "busid": fmt.Sprintf("00000000:%02X:00.0", 0x01+i),
		"brand": "15", "cc": "8 9", "arch": "8", "memory": strconv.FormatUint(24564<<20, 10),
		"persistence": "0", "minor": strconv.Itoa(i),
	}
}

func a100(i int) map[string]string {
	return map[string]string{
		"name": "NVIDIA A100-SXM4-80GB", "uuid": uuid(4, i), "busid": fmt.Sprintf("00000000:%02X:00.0", 0x07+i),
		"brand": "14", "cc": "8 0", "arch": "7", "memory": strconv.FormatUint(81920<<20, 10),
		"mig": "0 0", "persistence": "1", "ecc": "0", "minor": strconv.Itoa(i),
	}
}

// b200 is GPU i of a DGX B200 (NVML_DEVICE_ARCH_BLACKWELL is 10 in
// nvml.h; compute capability 10.0, developer.nvidia.com/cuda-gpus; memory
// as nvidia-smi shows it on a B200, 183359 MiB).
func b200(i int) map[string]string {
	return map[string]string{
		"name": "NVIDIA B200", "uuid": uuid(5, i), "busid": fmt.Sprintf("00000000:%02X:00.0", 0x1b+i),
		"brand": "14", "cc": "10 0", "arch": "10", "memory": strconv.FormatUint(183359<<20, 10),
		"mig": "0 0", "persistence": "1", "ecc": "0", "minor": strconv.Itoa(i),
	}
}

// rtxPro6000 is an RTX PRO 6000 Blackwell Server Edition: compute
// capability 12.0 (developer.nvidia.com/cuda-gpus), brand NVIDIA RTX (13).
func rtxPro6000(i int) map[string]string {
	return map[string]string{
		"name": "NVIDIA RTX PRO 6000 Blackwell Server Edition", "uuid": uuid(6, i), "busid": fmt.Sprintf("00000000:%02X:00.0", 0x41+i),
		"brand": "13", "cc": "12 0", "arch": "10", "memory": strconv.FormatUint(97887<<20, 10),
		"mig": "0 0", "persistence": "1", "ecc": "0", "minor": strconv.Itoa(i),
	}
}

// A100x8 is a DGX A100 on the given driver and CUDA version.
func A100x8(driver string, cuda int) Scenario {
	return Scenario{Name: "a100x8-" + driver, Init: "ok", System: system(driver, cuda, 8), GPUs: fakescenario.Devices(8, a100)}
}

// B200x8 is a DGX B200 on the given driver and CUDA version.
func B200x8(driver string, cuda int) Scenario {
	return Scenario{Name: "b200x8-" + driver, Init: "ok", System: system(driver, cuda, 8), GPUs: fakescenario.Devices(8, b200)}
}

// RTXPro6000x4 is four RTX PRO 6000 Blackwell Server Editions.
func RTXPro6000x4(driver string, cuda int) Scenario {
	return Scenario{Name: "rtxpro6000x4-" + driver, Init: "ok", System: system(driver, cuda, 4), GPUs: fakescenario.Devices(4, rtxPro6000)}
}

// H100x8 is a DGX H100 on the given driver and CUDA version (12040 = 12.4).
func H100x8(driver string, cuda int) Scenario {
	return Scenario{Name: "h100x8-" + driver, Init: "ok", System: system(driver, cuda, 8), GPUs: fakescenario.Devices(8, h100)}
}

// V100x4 is four Tesla V100s on R470.
func V100x4() Scenario {
	return Scenario{Name: "v100x4-470.57.02", Init: "ok", System: system("470.57.02", 11040, 4), GPUs: fakescenario.Devices(4, v100)}
}

// RTX4090x2 is two GeForce RTX 4090s on R535 with persistence mode off,
// as on a workstation.
func RTX4090x2() Scenario {
	return Scenario{Name: "rtx4090x2-535.129.03", Init: "ok", System: system("535.129.03", 12020, 2), GPUs: fakescenario.Devices(2, rtx4090)}
}

// Hang is an nvmlInit that never returns, as with a wedged driver.
func Hang() Scenario {
	return Scenario{Name: "hang", Init: "hang"}
}

// DriverNotLoaded is libnvidia-ml without a kernel driver, as Debian's
// libnvidia-ml1 answers on a machine without a GPU.
func DriverNotLoaded() Scenario {
	return Scenario{Name: "driver-not-loaded", Init: strconv.Itoa(ErrorDriverNotLoaded)}
}

// FieldErrors is two H100s where single calls fail (the _v2 CUDA version,
// GPU 0's UUID, GPU 1's persistence mode and name), and a third GPU without a handle.
func FieldErrors() Scenario {
	s := Scenario{Name: "field-errors", Init: "ok", System: system("550.54.15", 12040, 3), GPUs: fakescenario.Devices(3, h100)}
	s.System["cuda_v2"] = Fail(ErrorLibraryNotFound)
	s.GPUs[0]["uuid"] = Fail(ErrorNoPermission)
	s.GPUs[1]["persistence"] = Fail(ErrorGPUIsLost)
	s.GPUs[1]["name"] = Fail(ErrorUnknown)
	s.GPUs[2] = map[string]string{"handle": Fail(ErrorNoPermission)}
	return s
}

// Unhealthy is four A100s with what gpu-health warns about: MIG without a
// device, uncorrected ECC errors, retired pages pending, persistence off.
func Unhealthy() Scenario {
	s := Scenario{Name: "unhealthy", Init: "ok", System: system("550.54.15", 12040, 4), GPUs: fakescenario.Devices(4, a100)}
	s.GPUs[0]["mig"], s.GPUs[0]["migmax"], s.GPUs[0]["migdevices"] = "1 1", "7", "0"
	s.GPUs[1]["ecc"] = "3"
	s.GPUs[2]["retired"] = "1"
	s.GPUs[3]["persistence"] = "0"
	return s
}
