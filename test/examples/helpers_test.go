package examples

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
	"github.com/gpu-preflight/gpu-preflight/test/procdriver"
)

// readRepoFile returns a repository file, and records that a test reads
// it (coverage_test.go).
func readRepoFile(t testing.TB, rel string) string {
	t.Helper()
	data, err := os.ReadFile(testedPath(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

var (
	shimOnce sync.Once
	shimBin  string
	shimErr  error
)

// shim returns the gpu-preflight binary the tests run: $GPU_PREFLIGHT_BIN
// (make test-examples sets it to bin/gpu-preflight after `make build`), or
// else one built here from the repository's sources the way the Makefile
// builds it, without the embedded probe (which needs a bullseye root).
func shim(t testing.TB) string {
	t.Helper()
	shimOnce.Do(func() {
		if bin := os.Getenv("GPU_PREFLIGHT_BIN"); bin != "" {
			if _, shimErr = os.Stat(bin); shimErr == nil {
				shimBin = bin
			}
			return
		}
		dir, err := os.MkdirTemp("", "gpu-preflight-examples-")
		if err != nil {
			shimErr = err
			return
		}
		shimBin = filepath.Join(dir, "gpu-preflight")
		cmd := exec.Command("go", "build", "-trimpath", "-o", shimBin, "./cmd/gpu-preflight")
		cmd.Dir = harness.Root(t)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			shimErr = errors.New("building gpu-preflight: " + err.Error() + "\n" + string(out))
		}
	})
	if shimErr != nil {
		t.Fatal(shimErr)
	}
	return shimBin
}

// shimPath is where every Dockerfile and manifest installs gpu-preflight.
const shimPath = "/usr/local/bin/gpu-preflight"

// require118 is NVIDIA_REQUIRE_CUDA of the nvidia/cuda 11.8.0 images that the
// PaddlePaddle 2.6 cuda11.8 images build on (docs/sources.md,
// "Forward compatibility and NVIDIA_REQUIRE_CUDA"; the later rebuild).
const require118 = "cuda>=11.8 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471 " +
	"brand=nvidia,driver>=470,driver<471 brand=nvidiartx,driver>=470,driver<471 brand=geforce,driver>=470,driver<471 " +
	"brand=geforcertx,driver>=470,driver<471 brand=quadro,driver>=470,driver<471 brand=quadrortx,driver>=470,driver<471 " +
	"brand=titan,driver>=470,driver<471 brand=titanrtx,driver>=470,driver<471"

type abortRun struct {
	harness.Result
	termination string
	lines       []string // stderr, one JSON object per line
}

var (
	abortOnce sync.Once
	abortRes  abortRun
)

// runAbort runs the README's failure scenario once: the CUDA 11.8 image's
// requirement on a host whose procfs reports driver 515.65.01 (the driver of
// CUDA 11.7), with the NVML probe pointed at a library that does not exist,
// so the result is the same on a machine with a GPU.
func runAbort(t testing.TB) abortRun {
	t.Helper()
	abortOnce.Do(func() {
		tmp, err := os.MkdirTemp("", "gpu-preflight-abort-")
		if err != nil {
			t.Fatal(err)
		}
		root := filepath.Join(tmp, "root")
		if err := (procdriver.Driver{Version: "515.65.01"}).Write(filepath.Join(root, "proc", "driver")); err != nil {
			t.Fatal(err)
		}
		term := filepath.Join(tmp, "termination-log")
		env := []string{
			"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"NVIDIA_REQUIRE_CUDA=" + require118, "CUDA_VERSION=11.8.0",
			"PREFLIGHT_ROOT=" + root, "PREFLIGHT_HOST_ROOT=" + root, "PREFLIGHT_PROVENANCE_DIR=off", "PREFLIGHT_LOG_FORMAT=json",
			"PREFLIGHT_TERMINATION_LOG=" + term,
			"PREFLIGHT_NVML_LIBRARY=" + filepath.Join(tmp, "no-such-libnvidia-ml.so.1"),
		}
		r := harness.Run(t, time.Minute, tmp, env, shim(t), "--", "python", "train.py")
		msg, err := os.ReadFile(term)
		if err != nil {
			t.Fatalf("no termination message: %v\nstderr:\n%s", err, r.Stderr)
		}
		abortRes = abortRun{Result: r, termination: string(msg)}
		for _, l := range strings.Split(strings.TrimSpace(r.Stderr), "\n") {
			if l != "" {
				abortRes.lines = append(abortRes.lines, l)
			}
		}
		os.RemoveAll(tmp)
	})
	if abortRes.termination == "" {
		t.Fatal("the abort scenario did not run (see the first failure)")
	}
	return abortRes
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

var (
	okOnce  sync.Once
	okLines []string
)

// runOK is a run that passes: a driver whose CUDA covers the image.
func runOK(t testing.TB) []string {
	t.Helper()
	okOnce.Do(func() {
		tmp := t.TempDir()
		if err := (procdriver.Driver{Version: "535.161.08"}).Write(filepath.Join(tmp, "proc", "driver")); err != nil {
			t.Fatal(err)
		}
		env := []string{"PATH=/usr/bin:/bin", "NVIDIA_REQUIRE_CUDA=" + require118, "CUDA_VERSION=11.8.0",
			"PREFLIGHT_ROOT=" + tmp, "PREFLIGHT_HOST_ROOT=" + tmp, "PREFLIGHT_PROVENANCE_DIR=off", "PREFLIGHT_LOG_FORMAT=json",
			"PREFLIGHT_NVML_LIBRARY=" + filepath.Join(tmp, "no-such-libnvidia-ml.so.1")}
		r := harness.Run(t, time.Minute, tmp, env, shim(t), "--", "true")
		if r.Code != 0 {
			t.Fatalf("a compatible run exits %d:\n%s", r.Code, r.Stderr)
		}
		okLines = strings.Split(strings.TrimSpace(r.Stderr), "\n")
	})
	if len(okLines) == 0 {
		t.Fatal("the passing run did not run (see the first failure)")
	}
	return okLines
}
