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

func TestTheKernelsEnvironmentIsDroppedAndTheRuntimesKept(t *testing.T) {
	if os.Getenv(stackEnvChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTheKernelsEnvironmentIsDroppedAndTheRuntimesKept$", "-test.v")
		cmd.Env = append(os.Environ(), stackEnvChild+"="+strings.Repeat("x", 64<<10))
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("dropped")) {
			t.Fatalf("the child: %v\n%s", err, out)
		}
		return
	}
	before := os.Environ()
	releaseKernelEnviron()
	if !slices.Equal(os.Environ(), before) {
		t.Error("the runtime's environment changed")
	}
	kernel, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(kernel, []byte(strings.Repeat("x", 8<<10))) {
		t.Error("the kernel's copy of the environment is still on the stack")
	}
	t.Log("dropped")
}
