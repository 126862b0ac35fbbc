//go:build dist

package dist

import (
	"debug/elf"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/version"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// The README's "at most GLIBC_X on amd64 and GLIBC_Y on arm64" is what the
// probes make dist embeds need: the highest GLIBC_ version among the
// symbols each imports.
func TestREADMEQuotesTheProbesGlibc(t *testing.T) {
	root := harness.Root(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`at\s+most\s+` + "`GLIBC_([0-9.]+)`" + `\s+on\s+amd64\s+and\s+` + "`GLIBC_([0-9.]+)`" + `\s+on\s+arm64`).FindStringSubmatch(string(readme))
	if m == nil {
		t.Fatal("README.md does not say \"at most `GLIBC_X` on amd64 and `GLIBC_Y` on arm64\" about the probe")
	}
	for arch, quoted := range map[string]string{"amd64": m[1], "arm64": m[2]} {
		probe := filepath.Join(root, "bin", "linux-"+arch, "gpu-preflight-nvml")
		if got := neededGlibc(t, probe); got != quoted {
			t.Errorf("README.md says the %s probe needs at most GLIBC_%s; %s needs GLIBC_%s", arch, quoted, probe, got)
		}
	}
}

// neededGlibc is the highest GLIBC_ symbol version the ELF file at path
// imports.
func neededGlibc(t *testing.T, path string) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%v (make dist builds it)", err)
	}
	defer f.Close()
	syms, err := f.ImportedSymbols()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	best := ""
	for _, s := range syms {
		v, ok := strings.CutPrefix(s.Version, "GLIBC_")
		if !ok {
			continue
		}
		if best == "" || version.Less(best, v) {
			best = v
		}
	}
	if best == "" {
		t.Fatalf("%s imports no GLIBC_ symbol: not the dynamically linked cgo probe", path)
	}
	return best
}
