package check

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/check/scenarios"
	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// The shared scenario nodes are real ones: each driver reports the CUDA
// version its branch has, and the checks judge each with the requirement
// of a CUDA 11.8 image as the toolkit would.
func TestScenarioNodes(t *testing.T) {
	for _, n := range scenarios.Nodes {
		d := n.Host.Driver
		if c, ok := compat.DriverCUDA(d.Version); !ok || c != d.CUDAVersion {
			t.Errorf("%s: driver %s reports CUDA %s, the branch table says %s", n.Name, d.Version, d.CUDAVersion, c)
		}
		in := Input{Facts: facts.Facts{Host: n.Host, Container: reqs(require118Short)}, Visible: n.Host.GPUs}
		f := cudaRequirement(in)
		r470 := version.Major(d.Version) == 470
		want := Pass
		if version.Less(d.CUDAVersion, "11.8") && !(r470 && n.Host.GPUs[0].Brand == "Tesla") {
			want = Error // the 470 term is brand=tesla only
		}
		if f.Status != want {
			t.Errorf("%s: cuda-requirement %s, want %s: %s", n.Name, f.Status, want, f.Message)
		}
	}
}
