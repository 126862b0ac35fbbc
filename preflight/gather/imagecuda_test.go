package gather

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// Debian trixie's python3-torch-cuda image: no /usr/local/cuda, no
// CUDA_VERSION, the CUDA runtime is libcudart12's
// /usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127. The image's CUDA is
// 12.4 from the distribution, and cuda-driver judges it rather than
// skipping.
func TestDistributionCUDAIsTheImagesCUDAAndCUDADriverJudgesIt(t *testing.T) {
	root := t.TempDir()
	write := func(p, content string) {
		t.Helper()
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile("../host/testdata/version-535-proprietary.txt")
	if err != nil {
		t.Fatal(err)
	}
	write("proc/driver/nvidia/version", string(b))
	write("usr/bin/python3.13", "")
	write("usr/lib/python3/dist-packages/torch/version.py", "__version__ = '2.6.0'\ndebug = False\ncuda: Optional[str] = '12.4'\ngit_version = 'Unknown'\nhip: Optional[str] = None\n")
	write("usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127", "ELF")
	write("var/lib/dpkg/info/libcudart12:amd64.list", "/usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127\n")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, _ := Gather(ctx, Options{Root: fsroot.Root(root), Environ: envvars.Parse([]string{"PATH=/usr/bin:/bin"}), NVMLTimeout: time.Second, Command: []string{"python3", "train.py"}})
	c := res.Facts.Container.CUDA
	if c.Version != "12.4" || c.Kind != facts.CUDAFromDistribution || !strings.Contains(c.Source, "dpkg package libcudart12") {
		t.Fatalf("image CUDA %+v, want 12.4 from the distribution's libcudart12", c)
	}
	var f check.Finding
	for _, x := range check.Run(check.Input{Facts: res.Facts, Visible: res.Visible, Now: time.Unix(0, 0)}) {
		if x.ID == "cuda-driver" {
			f = x
		}
	}
	// Driver 535 supports CUDA 12.2: 12.4 runs through minor-version
	// compatibility, a warning that names where 12.4 came from.
	if f.Status != check.Warn || !strings.Contains(f.Message, "libcudart.so.12.4.127") {
		t.Errorf("cuda-driver %s: %q", f.Status, f.Message)
	}
}
