package check

import (
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

func TestNVMLCheck(t *testing.T) {
	procfs := facts.Driver{Version: "550.54.15", CUDAVersion: "12.4", Source: "procfs"}
	tests := []struct {
		rule   string
		driver facts.Driver
		nodes  []string
		nvml   facts.NVML
		status Status
		says   []string
	}{
		{"an answer within the deadline passes", facts.Driver{Version: "550.54.15", CUDAVersion: "12.4", Source: "nvml-memfd"}, nil,
			facts.NVML{Outcome: facts.ProbeOK, Via: "memfd", Version: "12.550.54.15", DurationMillis: 41}, Pass,
			[]string{"12.550.54.15", "41 ms", "memfd", "550.54.15"}},
		{"a probe not run for lack of driver evidence is skipped", facts.Driver{}, nil,
			facts.NVML{Outcome: facts.ProbeNotRun}, Skip, []string{"not run"}},
		{"no library is info", procfs, nil,
			facts.NVML{Outcome: facts.ProbeLibraryNotFound, Error: "libnvidia-ml.so.1 could not be loaded"}, Info,
			[]string{"not found", "NVIDIA_DRIVER_CAPABILITIES", "utility"}},
		{"driver not loaded on a CPU-only host is info", facts.Driver{}, nil,
			facts.NVML{Outcome: facts.ProbeDriverNotLoaded, Error: "Driver Not Loaded"}, Info,
			[]string{"Driver Not Loaded", "CPU-only"}},
		{"driver not loaded despite procfs evidence warns", procfs, nil,
			facts.NVML{Outcome: facts.ProbeDriverNotLoaded, Error: "Driver Not Loaded"}, Warn,
			[]string{"Driver Not Loaded", "driver 550.54.15 from procfs", "reboot"}},
		{"driver not loaded despite device nodes warns", facts.Driver{}, []string{"/dev/nvidiactl", "/dev/nvidia0"},
			facts.NVML{Outcome: facts.ProbeDriverNotLoaded, Error: "Driver Not Loaded"}, Warn,
			[]string{"2 /dev/nvidia* node(s)"}},
		{"a timeout is an error", procfs, nil,
			facts.NVML{Outcome: facts.ProbeTimeout, Error: "the NVML probe gave no answer within PREFLIGHT_NVML_TIMEOUT=2s; killed it and its process group"}, Error,
			[]string{"within PREFLIGHT_NVML_TIMEOUT=2s", "hung", "PREFLIGHT_NVML_TIMEOUT", "PREFLIGHT_IGNORE=nvml"}},
		{"an init failure warns", procfs, nil,
			facts.NVML{Outcome: facts.ProbeInitFailed, Error: "Driver/library version mismatch"}, Warn,
			[]string{"Driver/library version mismatch", "reboot"}},
		{"a crashed probe warns", procfs, nil,
			facts.NVML{Outcome: facts.ProbeFailed, Error: "signal: segmentation fault"}, Warn,
			[]string{"segmentation fault", "gpu-preflight-nvml"}},
		{"no startable probe is info", procfs, nil,
			facts.NVML{Outcome: facts.ProbeUnavailable, Error: "memfd: operation not permitted", Embedded: true}, Info,
			[]string{"operation not permitted", "memfd"}},
		{"a shim built without the probe says so, not memfd", procfs, nil,
			facts.NVML{Outcome: facts.ProbeUnavailable, Error: "memfd: this binary was built without the embedded probe"}, Info,
			[]string{"built without the NVML probe", "go install", "make build", "beside gpu-preflight"}},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			in := Input{Facts: facts.Facts{Host: facts.Host{Driver: tt.driver, DeviceNodes: tt.nodes, NVML: tt.nvml}}}
			f := NVML.Run(in)
			if f.ID != "nvml" || f.Status != tt.status {
				t.Fatalf("got %s %s (%s), want %s", f.ID, f.Status, f.Message, tt.status)
			}
			checkFindingText(t, f, tt.says)
		})
	}
}

// checkFindingText fails unless f names every string in says and has a
// remedy whenever it did not pass or skip (check.Finding's contract).
func checkFindingText(t *testing.T, f Finding, says []string) {
	t.Helper()
	text := f.Message + " | " + f.Remedy
	for _, s := range says {
		if !strings.Contains(text, s) {
			t.Errorf("%q does not say %q", text, s)
		}
	}
	if (f.Status == Pass || f.Status == Skip) != (f.Remedy == "") {
		t.Errorf("status %s with remedy %q", f.Status, f.Remedy)
	}
}
