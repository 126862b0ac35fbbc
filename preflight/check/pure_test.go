package check

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// pureDeps are the packages of this module a check may depend on: facts and
// the data packages, which read no file, start no process and look at no
// clock of their own (docs/CONTRIBUTING.md, "How the packages fit").
var pureDeps = []string{
	"internal/jsonenc",
	"internal/truncate",
	"preflight/check",
	"preflight/compat",
	"preflight/cuda",
	"preflight/facts",
	"preflight/gpuarch",
	"preflight/imageref",
	"preflight/nccl",
	"preflight/releases",
	"preflight/require",
	"preflight/transport",
	"preflight/version",
}

// Checks are pure: nothing they link gathers. A rule that needs a type or
// function of a gatherer's package gets it moved into a data package.
func TestChecksArePure(t *testing.T) {
	// go test puts its own go first on PATH.
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const module = "github.com/gpu-preflight/gpu-preflight/"
	seen := 0
	for _, p := range strings.Fields(string(out)) {
		if p == "os/exec" || p == "net" {
			t.Errorf("preflight/check depends on %s", p)
		}
		if rel, ok := strings.CutPrefix(p, module); ok {
			seen++
			if !slices.Contains(pureDeps, rel) {
				t.Errorf("preflight/check depends on %s, which is not a data package", rel)
			}
		}
	}
	if seen == 0 {
		t.Fatalf("go list named no package of this module:\n%s", out)
	}
}
