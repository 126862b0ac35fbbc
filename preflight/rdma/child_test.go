package rdma

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// childEnv makes the test binary, started again by a test, do one thing
// and print its result as JSON: the tests that need another process (a
// network namespace, lowered limits, a container) run it so.
const childEnv = "RDMA_TEST_CHILD"

func TestMain(m *testing.M) {
	if action := os.Getenv(childEnv); action != "" {
		os.Exit(child(action))
	}
	dir, err := os.MkdirTemp("", "rdma-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builds = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// builds holds what the tests build once for all of them.
var builds string

// child runs one action: "open PATH DEV" opens a uverbs node, "process"
// reads this process's limits, "layout NAME" lays out a network
// namespace from ../nccl/testdata/oracle.cases and reads its interfaces.
func child(action string) int {
	g := &gatherer{host: fsroot.Root("/"), image: fsroot.Root("/")}
	var out any
	f := strings.Fields(action)
	switch f[0] {
	case "open":
		out = g.open(f[1], f[2])
	case "process":
		out = g.process()
	case "layout":
		if err := netnsLayout(f[1]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		links, addrs := g.interfaces()
		out = map[string]any{"links": links, "addresses": addrs}
	default:
		fmt.Fprintln(os.Stderr, "unknown child action", action)
		return 2
	}
	if len(g.warns) > 0 {
		fmt.Fprintln(os.Stderr, g.warns)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		return 1
	}
	return 0
}

// runChild starts the test binary as a child doing action, through the
// command prefix (prlimit, setpriv, ...), and decodes what it prints.
func runChild(t *testing.T, attr *syscall.SysProcAttr, prefix []string, action string, into any) {
	t.Helper()
	args := append(append([]string{}, prefix...), os.Args[0], "-test.run=^$")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), childEnv+"="+action)
	cmd.SysProcAttr = attr
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child %q: %v\n%s", action, err, stderr.String())
	}
	if err := json.Unmarshal(out, into); err != nil {
		t.Fatalf("child %q printed %q: %v", action, out, err)
	}
}
