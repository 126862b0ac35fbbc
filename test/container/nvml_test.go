//go:build container

package container

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
	"github.com/gpu-preflight/gpu-preflight/test/procdriver"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

// nvmlLibs are the libnvidia-ml.so.1 files the "toolkit" injects.
type nvmlLibs struct {
	// fake is test/fakenvml's library, answering from the scenario file
	// named by FAKE_NVML_SCENARIO.
	fake string
	// debian is Debian's non-free libnvidia-ml1, fetched by
	// scripts/nvidia-libs.sh into .cache/nvidia.
	debian string
}

// buildNVMLLibs compiles the fake library into dir and fetches Debian's.
func buildNVMLLibs(repo, dir string) (nvmlLibs, error) {
	var libs nvmlLibs
	fake, err := fakenvml.Build(dir)
	if err != nil {
		return libs, fmt.Errorf("building the fake libnvidia-ml.so.1: %w", err)
	}
	libs.fake = fake
	debian, err := runScript(repo, 10*time.Minute, "scripts/nvidia-libs.sh", filepath.Join(repo, ".cache", "nvidia"))
	if err != nil {
		return libs, fmt.Errorf("fetching Debian's libnvidia-ml1: %w", err)
	}
	// The package ships libnvidia-ml.so.1 as a link to the versioned file;
	// the toolkit mounts the file itself.
	if libs.debian, err = filepath.EvalSymlinks(debian); err != nil {
		return libs, fmt.Errorf("resolving %s: %w", debian, err)
	}
	return libs, nil
}

// scenarioPath is where a fake NVML scenario file is mounted in the container.
const scenarioPath = "/etc/fake-nvml/scenario"

// useFakeNVML injects the fake library playing scene: the library bind-mounted
// where the toolkit puts libnvidia-ml.so.1, the scenario file beside it and
// FAKE_NVML_SCENARIO in the environment (the probe inherits the shim's).
func (s *suite) useFakeNVML(t *testing.T, sc *scenario, scene fakenvml.Scenario) {
	t.Helper()
	dir := t.TempDir()
	path, err := scene.Write(dir)
	must(t, err)
	sc.nvml = s.nvml.fake
	sc.mounts = append(sc.mounts, bindMount(path, scenarioPath, true))
	sc.env = append(sc.env, fakenvml.EnvScenario+"="+scenarioPath)
}

// procFor is the /proc/driver/nvidia tree of the host a fake NVML scenario
// describes, so procfs and NVML tell the same story, as on a real host.
func procFor(scene fakenvml.Scenario) *procdriver.Driver {
	d := &procdriver.Driver{Version: scene.System["driver"]}
	for i, g := range scene.GPUs {
		// NVML's bus id is "00000000:18:00.0"; the procfs directory is
		// the 4-digit-domain, lower-case form "0000:18:00.0".
		bus := strings.ToLower(g["busid"])
		if len(bus) == len("00000000:18:00.0") {
			bus = bus[4:]
		}
		minor := i
		fmt.Sscan(g["minor"], &minor)
		d.GPUs = append(d.GPUs, procdriver.GPU{Model: g["name"], UUID: g["uuid"], Bus: bus, Minor: minor})
	}
	return d
}

// validateRecord checks a record against docs/schema/provenance.v1.schema.json
// with the report package's validator.
func validateRecord(t *testing.T, from string, raw []byte) {
	t.Helper()
	if err := schematest.Check(raw); err != nil {
		t.Errorf("record from %s: %v", from, err)
	}
}
