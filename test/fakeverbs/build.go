// Package fakeverbs builds a fake libibverbs.so.1 for the tests and writes
// the scenarios it plays. It is compiled against the probe's own
// declarations (cmd/gpu-preflight-nvml/verbs.h), so it defines exactly the
// entry points the RDMA active tier resolves, at the version the real
// library exports them.
package fakeverbs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/test/fakescenario"
)

// Soname is the library's name.
const Soname = "libibverbs.so.1"

// Variables the library reads: its scenario, and a file each load of it
// appends a line to.
const (
	EnvScenario = "FAKE_VERBS_SCENARIO"
	EnvLoaded   = "FAKE_VERBS_LOADED"
)

// Build compiles the fake library into dir/libibverbs.so.1 with gcc.
func Build(dir string) (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate test/fakeverbs's sources")
	}
	here := filepath.Dir(file)
	lib := filepath.Join(dir, Soname)
	cmd := exec.Command("gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror",
		"-I", filepath.Join(here, "..", "..", "cmd", "gpu-preflight-nvml"), "-I", filepath.Join(here, "..", "fakescenario"),
		"-Wl,-soname,"+Soname, "-Wl,--version-script,"+filepath.Join(here, "c", "version.map"),
		"-o", lib, filepath.Join(here, "c", "fake.c"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("compiling the fake %s (%s): %w\n%s", Soname, strings.Join(cmd.Args, " "), err, stderr.String())
	}
	return lib, nil
}

// Device is one HCA the fake lists: its name and what each call answers
// ("ok", an errno's name, "hang"); Port is "state layer" (enum values).
type Device struct {
	Name, Open, Port, PD, Reg string
}

// Scenario is what the fake answers: List is ibv_get_device_list's
// answer ("ok" or an errno's name).
type Scenario struct {
	Name    string
	List    string
	Devices []Device
	Ledger  string
}

// Write saves the scenario in dir and returns its path.
func (s Scenario) Write(dir string) (string, error) {
	driver := map[string]string{}
	if s.Ledger != "" {
		driver["ledger"] = s.Ledger
	}
	var devs []map[string]string
	for _, d := range s.Devices {
		m := map[string]string{"name": d.Name}
		for k, v := range map[string]string{"open": d.Open, "port": d.Port, "pd": d.PD, "reg": d.Reg} {
			if v != "" {
				m[k] = v
			}
		}
		devs = append(devs, m)
	}
	list := s.List
	if list == "" {
		list = "ok"
	}
	p := filepath.Join(dir, s.Name+".verbs-scenario")
	return p, os.WriteFile(p, []byte(fakescenario.Text(s.Name, list, driver, devs)), 0o644)
}

// HGX is the eight InfiniBand HCAs of rdmatest.HGX, each opening,
// active and registering.
func HGX() Scenario {
	s := Scenario{Name: "hgx"}
	for i := range 8 {
		s.Devices = append(s.Devices, Device{Name: fmt.Sprintf("mlx5_%d", i)})
	}
	return s
}
