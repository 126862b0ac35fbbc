package fakecuda

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gpu-preflight/gpu-preflight/test/fakescenario"
)

// Scenario is what the fake library answers.
type Scenario struct {
	Name    string
	Init    string // "ok", "hang" (cuInit never returns) or a CUresult code
	Version int    // cuDriverGetVersion's answer, 12040 for CUDA 12.4
	// Devices hold each device's facts (name uuid busid cc mode total free) and
	// steps (device context memory module alloc launch copy fatbin release) with
	// the code its call returns (c/fake.c).
	Devices []map[string]string
	Ledger  string // the file the library keeps what it holds in, when set
}

// Text renders the scenario file fake.c reads.
func (s Scenario) Text() string {
	driver := map[string]string{"count": strconv.Itoa(len(s.Devices))}
	if s.Version != 0 {
		driver["version"] = strconv.Itoa(s.Version)
	}
	if s.Ledger != "" {
		driver["ledger"] = s.Ledger
	}
	return fakescenario.Text(s.Name, s.Init, driver, s.Devices)
}

// Write saves the scenario in dir and returns its path.
func (s Scenario) Write(dir string) (string, error) {
	p := filepath.Join(dir, s.Name+".cuda-scenario")
	return p, os.WriteFile(p, []byte(s.Text()), 0o644)
}

// Fail returns a copy of s in which step fails with code on device i (all when i < 0).
func (s Scenario) Fail(step string, code, i int) Scenario {
	out := s.clone()
	out.Name = fmt.Sprintf("%s-%s-%d", s.Name, step, code)
	for d := range out.Devices {
		if i < 0 || d == i {
			out.Devices[d][step] = strconv.Itoa(code)
		}
	}
	return out
}

// WrongValue returns a copy of s whose kernel writes a wrong value on device i.
func (s Scenario) WrongValue(i int) Scenario {
	out := s.clone()
	out.Name = s.Name + "-wrong-value"
	out.Devices[i]["value"] = "wrong"
	return out
}

func (s Scenario) clone() Scenario {
	out := s
	out.Devices = make([]map[string]string, len(s.Devices))
	for i, d := range s.Devices {
		out.Devices[i] = map[string]string{}
		for k, v := range d {
			out.Devices[i][k] = v
		}
	}
	return out
}

// H100 is device i of a DGX H100 as CUDA reports it (81559 MiB as
// nvidia-smi shows it, compute capability 9.0, the board's bus ids).
func H100(i int) map[string]string {
	bus := []string{"18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"}
	total := uint64(81559) << 20
	return map[string]string{
		"name": "NVIDIA H100 80GB HBM3", "uuid": fmt.Sprintf("5eed0001%04x%04x8001%012x", i, 0x4000+i, 0x1000+i),
		"busid": "0000:" + bus[i%len(bus)] + ":00.0", "cc": "9 0", "mode": "0",
		"total": strconv.FormatUint(total, 10), "free": strconv.FormatUint(total-(530<<20), 10),
	}
}

// V100 is a Tesla V100-SXM2-16GB: compute capability 7.0.
func V100(i int) map[string]string {
	total := uint64(16384) << 20
	return map[string]string{
		"name": "Tesla V100-SXM2-16GB", "uuid": fmt.Sprintf("5eed0002%04x%04x8002%012x", i, 0x4000+i, 0x1000+i),
		"busid": fmt.Sprintf("0000:%02X:00.0", 0x15+i), "cc": "7 0", "mode": "0",
		"total": strconv.FormatUint(total, 10), "free": strconv.FormatUint(total-(310<<20), 10),
	}
}

// OK is n devices of model on a CUDA 12.4 driver, every step succeeding.
func OK(n int, model func(int) map[string]string) Scenario {
	return Scenario{Name: fmt.Sprintf("ok-%d", n), Init: "ok", Version: 12040, Devices: fakescenario.Devices(n, model)}
}

// InitFails is a cuInit that returns code.
func InitFails(code int) Scenario {
	return Scenario{Name: "init-" + strconv.Itoa(code), Init: strconv.Itoa(code), Version: 12040}
}

// Hang is a cuInit that never returns, as with a wedged driver.
func Hang() Scenario { return Scenario{Name: "hang", Init: "hang", Version: 12040} }
