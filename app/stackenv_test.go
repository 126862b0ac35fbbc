package app

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// stackEnvChild holds a variable of 64 KiB, whole pages of the stack, in
// the child this test starts.
const stackEnvChild = "APP_STACKENV_CHILD"

func TestTheKernelsEnvironmentIsDroppedFromItsSizeAndTheRuntimesKept(t *testing.T) {
	if os.Getenv(stackEnvChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTheKernelsEnvironmentIsDroppedFromItsSizeAndTheRuntimesKept$", "-test.v")
		cmd.Env = append(os.Environ(), stackEnvChild+"="+strings.Repeat("x", 64<<10))
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("dropped")) {
			t.Fatalf("the child: %v\n%s", err, out)
		}
		return
	}
	before := os.Environ()
	releaseKernelEnviron(environDrop)
	if !kernelHolds(t, strings.Repeat("x", 64<<10)) {
		t.Error("an environment under environDrop was dropped")
	}
	releaseKernelEnviron(0)
	if !slices.Equal(os.Environ(), before) {
		t.Error("the runtime's environment changed")
	}
	if kernelHolds(t, strings.Repeat("x", 8<<10)) {
		t.Error("the kernel's copy of the environment is still on the stack")
	}
	t.Log("dropped")
}

func kernelHolds(t *testing.T, s string) bool {
	t.Helper()
	kernel, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(kernel, []byte(s))
}
