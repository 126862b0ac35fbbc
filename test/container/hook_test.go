//go:build container

package container

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/ocihook"
)

// hookEnv, set in a hook's environment, turns the test binary into the
// createContainer hook that fills /proc/driver/nvidia. Re-running the test
// binary saves building a second program and keeps the hook beside the code
// that prepares its input.
const hookEnv = "GPU_PREFLIGHT_TEST_HOOK"

// procDriverDir is the bundle-relative directory the suite prepares and the
// hook copies into the container's /proc/driver.
const procDriverDir = "proc-driver"

// hookStampFile, in the bundle, holds when the hook ran (Unix nanoseconds).
const hookStampFile = "hook-ran-at"

func TestMain(m *testing.M) {
	if os.Getenv(hookEnv) == "proc-driver" {
		if err := procDriverHook(os.Stdin); err != nil {
			fmt.Fprintf(os.Stderr, "gpu-preflight test hook: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	cleanupSuite()
	os.Exit(code)
}

// procDriverHook does what the NVIDIA Container Toolkit does for
// /proc/driver/nvidia, which runc will not take as an OCI mount (it refuses
// destinations under /proc). runc runs createContainer hooks in the
// container's mount namespace after its mounts and before pivot_root, so the
// container's procfs is under its root.path (ocihook.ReadState). It mounts
// a tmpfs over proc/driver, copies the prepared tree in, and makes it
// read-only, as the toolkit's own tmpfs is.
func procDriverHook(stdin io.Reader) error {
	state, err := ocihook.ReadState(stdin)
	if err != nil {
		return err
	}
	// When the container is about to start: the shim is exec'd right
	// after the hooks, pivot_root and runc start. Timing bounds are
	// measured from here, not from runc's own setup.
	stamp := []byte(strconv.FormatInt(time.Now().UnixNano(), 10))
	if err := os.WriteFile(filepath.Join(state.Bundle, hookStampFile), stamp, 0o644); err != nil {
		return fmt.Errorf("writing the hook's time stamp: %w", err)
	}
	return ocihook.FillProcDriver(state.RootFS, filepath.Join(state.Bundle, procDriverDir))
}
