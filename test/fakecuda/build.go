// Package fakecuda builds a fake libcuda.so.1 for the tests and writes the
// scenarios it plays. It is compiled against the probe's own declarations
// (cmd/gpu-preflight-nvml/cudadrv.h), so it defines exactly the entry
// points the probe resolves, under the real library's names.
package fakecuda

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// Soname is what the probe dlopens.
const Soname = "libcuda.so.1"

// Scenario variables: the one the library reads, and the one a copy built
// with BuildAs("compat", ...) reads.
const (
	EnvScenario       = "FAKE_CUDA_SCENARIO"
	EnvCompatScenario = "FAKE_CUDA_COMPAT_SCENARIO"
	// EnvLoaded names a file every load of the library appends a line to.
	EnvLoaded = "FAKE_CUDA_LOADED"
)

// sources returns the directory of c/fake.c and that of cudadrv.h.
func sources() (fake, header string, err error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", "", fmt.Errorf("cannot locate test/fakecuda's sources")
	}
	dir := filepath.Dir(file)
	return filepath.Join(dir, "c"), filepath.Join(dir, "..", "..", "cmd", "gpu-preflight-nvml"), nil
}

// Build compiles the fake library into dir/libcuda.so.1 with gcc.
func Build(dir string) (string, error) { return build(dir, EnvScenario) }

// BuildCompat compiles a second copy into dir that reads
// FAKE_CUDA_COMPAT_SCENARIO: the scenario played tells which copy ld.so chose.
func BuildCompat(dir string) (string, error) { return build(dir, EnvCompatScenario) }

func build(dir, env string) (string, error) {
	fake, header, err := sources()
	if err != nil {
		return "", err
	}
	lib := filepath.Join(dir, Soname)
	cmd := exec.Command("gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror",
		"-DSCENARIO_ENV=\""+env+"\"", "-I", header, "-I", filepath.Join(fake, "..", "..", "fakescenario"),
		"-Wl,-soname,"+Soname, "-o", lib, filepath.Join(fake, "fake.c"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("compiling the fake %s (%s): %w\n%s", Soname, strings.Join(cmd.Args, " "), err, stderr.String())
	}
	return lib, nil
}

// Exports lists the functions a built library defines (nm -D --defined-only).
func Exports(lib string) ([]string, error) {
	out, err := exec.Command("nm", "-D", "--defined-only", lib).Output()
	if err != nil {
		return nil, fmt.Errorf("nm -D %s: %w", lib, err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[1] == "T" {
			names = append(names, f[2])
		}
	}
	return names, nil
}

// ProbeSymbols lists the entry points the probe resolves, cudadrv.c's SYM
// table, which the fake must define exactly and the real library export.
func ProbeSymbols() ([]string, error) {
	_, header, err := sources()
	if err != nil {
		return nil, err
	}
	src, err := os.ReadFile(filepath.Join(header, "cudadrv.c"))
	if err != nil {
		return nil, err
	}
	var syms []string
	for _, m := range regexp.MustCompile(`(?m)^\tSYM\((\w+)\),$`).FindAllSubmatch(src, -1) {
		syms = append(syms, string(m[1]))
	}
	if len(syms) < 20 {
		return nil, fmt.Errorf("found only %d SYM entries in cudadrv.c", len(syms))
	}
	return syms, nil
}
