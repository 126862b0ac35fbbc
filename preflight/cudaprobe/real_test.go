package cudaprobe

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/nvml"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

// Every fixture scripts/device-check.sh saved under testdata/real/ parses:
// the probe's NVML document, its CUDA documents in init and kernel mode,
// and the shim's record, which validates against the schema and holds the
// same CUDA result the probe printed.
func TestRealFixtures(t *testing.T) {
	dirs, _ := filepath.Glob("../../testdata/real/*")
	if len(dirs) == 0 {
		t.Fatal("no fixture under testdata/real/")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			read := func(name string) []byte {
				t.Helper()
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			if _, err := nvml.Decode(read("probe.json")); err != nil {
				t.Errorf("probe.json: %v", err)
			}
			var kernel *facts.CUDACheck
			for _, mode := range []string{facts.CUDAModeInit, facts.CUDAModeKernel} {
				d, err := Decode(read("cuda-" + mode + ".json"))
				if err != nil {
					t.Errorf("cuda-%s.json: %v", mode, err)
					continue
				}
				if d.Mode != mode || d.Library == "" || d.DriverAPIVersion < 10000 || d.Init == nil {
					t.Errorf("cuda-%s.json: mode %q, library %q, driver API %d, init %v", mode, d.Mode, d.Library, d.DriverAPIVersion, d.Init)
				}
				for _, dev := range d.Devices {
					if dev.Name == "" || dev.UUID == "" || dev.ComputeCapability == "" || dev.TotalBytes == 0 || len(dev.Steps) == 0 {
						t.Errorf("cuda-%s.json: device %+v", mode, dev)
					}
				}
				kernel = d
			}
			rec := read("check.json")
			schematest.Validate(t, rec)
			if kernel != nil {
				got := recordCUDA(t, rec)
				if got.Mode != facts.CUDAModeKernel || got.DriverAPIVersion != kernel.DriverAPIVersion || got.Outcome != kernel.Outcome ||
					(got.Init == nil) != (kernel.Init == nil) || (got.Init != nil && got.Init.Code != kernel.Init.Code) {
					t.Errorf("check.json host.cuda %+v does not match cuda-kernel.json %+v", got, kernel)
				}
			}
		})
	}
}
