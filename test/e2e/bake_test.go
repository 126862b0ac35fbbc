//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

const torchVersion = `from typing import Optional
__version__ = '2.5.1+cu124'
debug = False
cuda: Optional[str] = '12.4'
hip: Optional[str] = None
`

// bakedTree is an image root with torch (its kernel library one that nvcc
// built) and a multiarch library directory, baked by the shim. The
// library directory's time is set to the past first, so that anything
// created in it afterwards moves it, whatever the clock's granularity.
func bakedTree(t *testing.T) (tree, libDir string, env []string) {
	t.Helper()
	tree = t.TempDir()
	sp := filepath.Join(tree, "usr/local/lib/python3.10/dist-packages")
	libDir = filepath.Join(tree, "usr/lib/x86_64-linux-gnu")
	so, err := os.ReadFile(filepath.Join(harness.Root(t), "preflight/fatbin/testdata/nvcc/mix.so"))
	if err != nil {
		t.Fatal(err)
	}
	for p, data := range map[string][]byte{
		filepath.Join(sp, "torch/version.py"):           []byte(torchVersion),
		filepath.Join(sp, "torch/lib/libtorch_cuda.so"): so,
		filepath.Join(libDir, "libc.so.6"):              nil,
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(libDir, past, past); err != nil {
		t.Fatal(err)
	}
	env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "PREFLIGHT_PROVENANCE_DIR=off", "PREFLIGHT_LOG_FORMAT=json",
		"PREFLIGHT_ROOT=" + tree, "PREFLIGHT_HOST_ROOT=" + tree,
		"PREFLIGHT_TERMINATION_LOG=" + filepath.Join(t.TempDir(), "termination-log")}
	if r := run(t, 30*time.Second, env, shimBin(t), "bake"); r.code != 0 {
		t.Fatalf("bake exit %d: %s", r.code, r.stderr)
	}
	return tree, libDir, env
}

// onGPUNode runs `check --json` the way the NVIDIA Container Toolkit
// starts a container: in a private mount namespace, the host's
// libnvidia-ml.so.1 (Debian's real one) bind-mounted onto a file created
// in the image's library directory. It returns the record's scanSource and
// the shim's log.
func onGPUNode(t *testing.T, env []string, libDir string) (scanSource, log string) {
	t.Helper()
	script := `touch "$1" && mount --bind "$2" "$1" && exec "$3" check --json`
	r := run(t, 30*time.Second, env, "unshare", "--mount", "--propagation", "private",
		"sh", "-c", script, "sh", filepath.Join(libDir, "libnvidia-ml.so.1"), realLibrary(t), shimBin(t))
	var rec struct {
		Image struct{ ScanSource string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
		t.Fatalf("check --json on the GPU node (exit %d) printed no record: %v\nstderr: %s", r.code, err, r.stderr)
	}
	return rec.Image.ScanSource, r.stderr
}

// A baked image stays baked on a GPU node, and still goes stale when a
// layer after bake changed what it recorded.
func TestBakedImageOnAGPUNode(t *testing.T) {
	if os.Getuid() != 0 {
		t.Fatalf("this test needs root to bind-mount in a private mount namespace (uid %d); run 'make test-e2e' as root, as the CI does", os.Getuid())
	}
	_, libDir, env := bakedTree(t)
	source, log := onGPUNode(t, env, libDir)
	if source != "manifest" || strings.Contains(log, "out of date") {
		t.Errorf("with the driver library bind-mounted: scanSource %q, want manifest; log:\n%s", source, log)
	}
	// The mount point the "toolkit" made is gone with its namespace; the
	// file it created stays, as it does in a container's upper layer.

	// A real change after bake: a cuDNN installed into the same directory.
	if err := os.WriteFile(filepath.Join(libDir, "libcudnn.so.9.1.0"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	source, log = onGPUNode(t, env, libDir)
	if source != "scan" || !strings.Contains(log, "out of date") || !strings.Contains(log, "usr/lib/x86_64-linux-gnu") {
		t.Errorf("after installing libcudnn.so.9.1.0: scanSource %q, want scan with an out-of-date warning naming the directory; log:\n%s", source, log)
	}
}
