// Package fakenvml builds a fake libnvidia-ml.so.1 for the tests and writes
// the scenarios it plays. The library is compiled from fake.c and generated
// stubs against go-nvml's own nvml.h, found in the module cache, so the
// probe under test loads it through go-nvml's real dlopen path.
package fakenvml

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Soname is what the NVIDIA Container Toolkit injects and go-nvml dlopens.
const Soname = "libnvidia-ml.so.1"

// Header returns the path of go-nvml's nvml.h in the module cache.
func Header() (string, error) {
	// Asked in this package's module, so another module's test finds the same header.
	src, err := sourceDir()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/NVIDIA/go-nvml")
	cmd.Dir = src
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("finding go-nvml in the module cache (go list -m): %w", err)
	}
	h := filepath.Join(strings.TrimSpace(string(out)), "pkg", "nvml", "nvml.h")
	if _, err := os.Stat(h); err != nil {
		return "", fmt.Errorf("go-nvml's nvml.h: %w (run 'go mod download')", err)
	}
	return h, nil
}

// sourceDir is this package's directory, the parent of c/fake.c.
func sourceDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate test/fakenvml's sources")
	}
	return filepath.Dir(file), nil
}

// Build compiles the fake library into dir (dir/libnvidia-ml.so.1) with gcc.
func Build(dir string) (string, error) { return BuildWith(dir, "gcc") }

// BuildWith is Build with another C compiler (aarch64-linux-gnu-gcc for arm64).
func BuildWith(dir, cc string) (string, error) {
	header, err := Header()
	if err != nil {
		return "", err
	}
	src, err := sourceDir()
	if err != nil {
		return "", err
	}
	fake, err := os.ReadFile(filepath.Join(src, "c", "fake.c"))
	if err != nil {
		return "", err
	}
	h, err := os.ReadFile(header)
	if err != nil {
		return "", err
	}
	stubs, err := Stubs(h, fake)
	if err != nil {
		return "", err
	}
	stubsPath := filepath.Join(dir, "stubs.c")
	if err := os.WriteFile(stubsPath, stubs, 0o644); err != nil {
		return "", err
	}
	lib := filepath.Join(dir, Soname)
	cmd := exec.Command(cc, "-shared", "-fPIC", "-O1", "-Wall", "-Wno-deprecated-declarations",
		"-DNVML_NO_UNVERSIONED_FUNC_DEFS=1", "-I", filepath.Dir(header), "-I", filepath.Join(src, "..", "fakescenario"),
		"-Wl,-soname,"+Soname, "-o", lib, filepath.Join(src, "c", "fake.c"), stubsPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("compiling the fake %s (%s): %w\n%s", Soname, strings.Join(cmd.Args, " "), err, stderr.String())
	}
	return lib, nil
}
