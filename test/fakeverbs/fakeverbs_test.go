package fakeverbs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The fake exports exactly the entry points the probe resolves (verbs.c's
// VSYM table), each at IBVERBS_1.1 as Debian's libibverbs does: a call
// the probe makes without resolving it cannot pass here and fail on the
// real library.
func TestFakeExportsExactlyWhatTheProbeResolves(t *testing.T) {
	lib, err := Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("objdump", "-T", lib).Output()
	if err != nil {
		t.Fatal(err)
	}
	var exports []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 7 && f[3] == ".text" && f[5] == "IBVERBS_1.1" {
			exports = append(exports, f[6])
		}
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "cmd", "gpu-preflight-nvml", "verbs.c"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range regexp.MustCompile(`(?m)^\tVSYM\((\w+)\),$`).FindAllSubmatch(src, -1) {
		want = append(want, "ibv_"+string(m[1]))
	}
	slices.Sort(exports)
	slices.Sort(want)
	if len(want) < 10 || !slices.Equal(exports, want) {
		t.Errorf("the fake exports %v at IBVERBS_1.1\nthe probe resolves %v", exports, want)
	}
}
