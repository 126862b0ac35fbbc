package check

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

func TestDriverLibrary(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		rule      string
		module    string
		lib       *facts.DriverLibrary
		status    Status
		nodeFault bool
		says      []string
	}{
		{"a library of the module's version passes", "535.183.01",
			&facts.DriverLibrary{Path: "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.183.01", Version: "535.183.01", Mounted: &yes}, Pass, false, nil},
		{"an injected library of another version is a node fault: reboot", "535.161.08",
			&facts.DriverLibrary{Path: "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15", Version: "550.54.15", Mounted: &yes, RMVersionMismatch: true}, Error, true,
			[]string{"kernel module is 535.161.08", "550.54.15", "Driver/library version mismatch", "injected", "reboot the node"}},
		{"a library of the image at another version is the image's: mismatch", "535.161.08",
			&facts.DriverLibrary{Path: "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15", Version: "550.54.15", Mounted: &no}, Error, false,
			[]string{"file of the image", "remove the NVIDIA driver's user-space libraries from the image"}},
		{"NVML's own word counts without a version in the name", "535.161.08",
			&facts.DriverLibrary{Path: "/opt/lib/libnvidia-ml.so.1", RMVersionMismatch: true, Mounted: &yes}, Error, true,
			[]string{"Driver/library version mismatch"}},
		{"a library whose name has no version, that NVML did not refuse, leaves nothing to compare", "535.161.08", &facts.DriverLibrary{Path: "/opt/lib/libnvidia-ml.so.1"}, Skip, false, nil},
		{"no kernel module version leaves nothing to compare", "", &facts.DriverLibrary{Path: "/lib/libnvidia-ml.so.535.247.01", Version: "535.247.01"}, Skip, false, nil},
		{"no library loaded skips", "535.161.08", nil, Skip, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			in := Input{Facts: facts.Facts{Host: facts.Host{Driver: facts.Driver{Version: tt.module, Source: "procfs"},
				NVML: facts.NVML{Outcome: facts.ProbeInitFailed, Library: tt.lib}}}}
			f := DriverLibrary.Run(in)
			if f.ID != "driver-library" || f.Status != tt.status || f.NodeFault != tt.nodeFault {
				t.Fatalf("%s %s nodeFault %v: %s", f.ID, f.Status, f.NodeFault, f.Message)
			}
			checkFindingText(t, f, tt.says)
		})
	}
}
