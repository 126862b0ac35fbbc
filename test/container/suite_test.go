//go:build container

package container

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// suite holds what every scenario shares: the repository, the shim under
// test, the cached roots and the NVML libraries. It is built once per test
// process; the root caches are shared between processes through flock in the
// rootfs scripts.
type suite struct {
	repo string // repository root (holds go.mod)
	shim string // the gpu-preflight binary copied into every container
	// hook is this test binary, run by runc as the createContainer hook.
	hook string
	// Cached roots, stacked with overlayfs (first entry is the top layer).
	bullseye []string // PaddlePaddle layer over debootstrap bullseye
	busybox  []string // busybox-static only
	nvml     nvmlLibs
	tmp      string // this process's scratch directory, removed after the tests
}

// cleanupSuite removes what newSuite made for this process only.
func cleanupSuite() {
	if theSuite != nil && theSuite.tmp != "" {
		os.RemoveAll(theSuite.tmp)
	}
}

var (
	suiteOnce sync.Once
	theSuite  *suite
	suiteErr  error
)

// getSuite returns the shared suite, failing the test if a prerequisite is
// missing: a container test that cannot run has proved nothing, so it must
// not pass or skip.
func getSuite(t *testing.T) *suite {
	t.Helper()
	suiteOnce.Do(func() { theSuite, suiteErr = newSuite() })
	if suiteErr != nil {
		t.Fatalf("container suite setup: %v", suiteErr)
	}
	return theSuite
}

func newSuite() (*suite, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("the container suite needs root (runc, overlayfs and bind mounts, device nodes); run it as root, e.g. `sudo make test-container`")
	}
	for _, tool := range []string{"runc", "debootstrap", "flock"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s is not installed: run `make deps` as root", tool)
		}
	}
	repo, err := harness.RootDir()
	if err != nil {
		return nil, err
	}
	s := &suite{repo: repo}
	if s.hook, err = os.Executable(); err != nil {
		return nil, fmt.Errorf("finding the test binary to use as the OCI hook: %w", err)
	}
	if s.tmp, err = os.MkdirTemp("", "gpu-preflight-container-"); err != nil {
		return nil, err
	}
	shim, err := buildShim(repo)
	if err != nil {
		return nil, err
	}
	// A private copy: the checkout's bin/ may be rebuilt or cleaned while
	// the scenarios run.
	s.shim = filepath.Join(s.tmp, "gpu-preflight")
	if err := copyExecutable(shim, s.shim); err != nil {
		return nil, err
	}
	downloads, err := harness.CacheDir()
	if err != nil {
		return nil, err
	}
	cache := filepath.Join(downloads, "rootfs")
	base, err := runScript(repo, 15*time.Minute, "scripts/rootfs-bullseye.sh", cache)
	if err != nil {
		return nil, err
	}
	s.bullseye = []string{filepath.Join(cache, "paddle-2.6-cuda11.8"), base}
	bb, err := runScript(repo, 2*time.Minute, "scripts/rootfs-busybox.sh", cache)
	if err != nil {
		return nil, err
	}
	s.busybox = []string{bb}
	if s.nvml, err = buildNVMLLibs(repo, s.tmp); err != nil {
		return nil, err
	}
	return s, nil
}

// buildShim returns the gpu-preflight binary to test: $GPU_PREFLIGHT_BIN when
// set (make test-container sets it after `make build`), else the result of
// `make build`, so `go test -run` alone never tests a stale binary.
func buildShim(repo string) (string, error) {
	if bin := os.Getenv("GPU_PREFLIGHT_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("GPU_PREFLIGHT_BIN: %w", err)
		}
		return bin, nil
	}
	if _, err := run(repo, 10*time.Minute, "make", "-s", "build"); err != nil {
		return "", fmt.Errorf("building the shim: %w", err)
	}
	return filepath.Join(repo, "bin", "gpu-preflight"), nil
}

// runScript runs a repository script and returns the last line it printed.
func runScript(repo string, limit time.Duration, script string, args ...string) (string, error) {
	out, err := run(repo, limit, "bash", append([]string{filepath.Join(repo, script)}, args...)...)
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1], nil
}

// run runs a command in dir with a deadline and returns its stdout; the error
// carries stderr.
func run(dir string, limit time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("still running after %v", limit)
		}
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

func copyExecutable(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("reading the shim: %w", err)
	}
	return os.WriteFile(dst, data, 0o755)
}
