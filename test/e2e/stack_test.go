//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/ldso/ldsotest"
	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
)

// Issue 19's findings through the shim, on image roots laid out as pip and
// conda lay them out, with libraries gcc builds under their real sonames.

const (
	e2eSP     = "usr/local/lib/python3.11/dist-packages"
	e2eDigest = "sha256:4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c"
)

// torchImage writes a torch 2.4.0+cu121 wheel with its nvidia-cudnn-cu12
// 9.1.0.70 wheel into root, the wheel's DT_RUNPATH pointing at it.
func torchImage(t *testing.T, root string) {
	t.Helper()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ldsotest.Build(t, root, ldsotest.Lib{Path: e2eSP + "/nvidia/cudnn/lib/libcudnn.so.9", Soname: "libcudnn.so.9"})
	write(e2eSP+"/nvidia_cudnn_cu12-9.1.0.70.dist-info/RECORD", "")
	write(e2eSP+"/torch/version.py", "__version__ = '2.4.0+cu121'\ncuda = '12.1'\nhip = None\n")
	write(e2eSP+"/torch-2.4.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 2.4.0\n"+
		"Requires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\"\n")
	ldsotest.Build(t, root, ldsotest.Lib{
		Path: e2eSP + "/torch/lib/libtorch_cuda.so", Soname: "libtorch_cuda.so",
		Needs: []string{e2eSP + "/nvidia/cudnn/lib/libcudnn.so.9"}, RunPath: "$ORIGIN/../../nvidia/cudnn/lib",
	})
}

type stackRecord struct {
	Host struct {
		Driver struct {
			Branch struct {
				Name, Designation, EndOfLife string
				Known, Supported             bool
			}
		}
	}
	Image struct {
		Pinned        bool
		Frameworks    []struct{ Name, Build string }
		CUDALibraries []struct {
			Name, BuiltFor string
			Loaded         struct{ Path, Version, Via string }
			Others         []struct{ Path, Version string }
		}
	}
}

func stackJSON(t *testing.T, env []string) (record, stackRecord) {
	t.Helper()
	rec, r := checkJSON(t, env)
	var s stackRecord
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatal(err)
	}
	return rec, s
}

// A clean image: one CUDA stack, a GPU build, a pinned digest, a supported
// driver: none of the new checks says anything but pass.
func TestShimCleanImageGetsNoNewFinding(t *testing.T) {
	env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("580.95.05", 13000)),
		"PREFLIGHT_IMAGE=registry.example/train:2.4@"+e2eDigest)
	torchImage(t, envValue(env, "PREFLIGHT_ROOT"))
	rec, s := stackJSON(t, env)
	for _, id := range []string{"cuda-stack", "cpu-build", "driver-lifecycle", "image-pinned"} {
		if status, msg := finding(t, rec, id); status != "pass" {
			t.Errorf("%s: %s (%s)", id, status, msg)
		}
	}
	if !s.Image.Pinned {
		t.Error("image.pinned is false for a digest reference")
	}
	b := s.Host.Driver.Branch
	if b.Name != "R580" || !b.Known || !b.Supported || b.Designation != "Long Term Support Branch" || b.EndOfLife != "June 2028" {
		t.Errorf("host.driver.branch = %+v", b)
	}
	if len(s.Image.CUDALibraries) != 1 {
		t.Fatalf("image.cudaLibraries = %+v", s.Image.CUDALibraries)
	}
	l := s.Image.CUDALibraries[0]
	if l.Name != "libcudnn.so.9" || l.Loaded.Version != "9.1.0.70" || l.Loaded.Via != "DT_RUNPATH" || l.BuiltFor != "9.1.0.70" || len(l.Others) != 0 {
		t.Errorf("image.cudaLibraries[0] = %+v", l)
	}
	r := run(t, 30*time.Second, env, shimBin(t), "--", "sh", "-c", "echo ran")
	if r.code != 0 || r.stdout != "ran\n" {
		t.Errorf("exit %d stdout %q\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// The same image with a conda cuDNN 9.0.0 first on LD_LIBRARY_PATH, tagged
// latest, on an R535 node past its end of life: cuda-stack stops the job
// naming both copies and the fix; image-pinned and driver-lifecycle inform.
func TestShimMixedStackUnpinnedEOLDriver(t *testing.T) {
	env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("535.261.03", 12020)),
		"PREFLIGHT_IMAGE=registry.example/train:latest", "LD_LIBRARY_PATH=/opt/conda/lib")
	root := envValue(env, "PREFLIGHT_ROOT")
	torchImage(t, root)
	ldsotest.Build(t, root, ldsotest.Lib{Path: "opt/conda/lib/libcudnn.so.9.0.0", Soname: "libcudnn.so.9"})
	if err := os.Symlink("libcudnn.so.9.0.0", filepath.Join(root, "opt/conda/lib/libcudnn.so.9")); err != nil {
		t.Fatal(err)
	}
	rec, s := stackJSON(t, env)
	status, msg := finding(t, rec, "cuda-stack")
	for _, want := range []string{"/opt/conda/lib/libcudnn.so.9", "9.0.0", "9.1.0.70", e2eSP + "/nvidia/cudnn/lib/libcudnn.so.9", "take /opt/conda/lib out of LD_LIBRARY_PATH"} {
		if !strings.Contains(msg, want) {
			t.Errorf("cuda-stack does not name %q: %s", want, msg)
		}
	}
	if status != "error" {
		t.Errorf("cuda-stack %s, want error", status)
	}
	if status, msg := finding(t, rec, "image-pinned"); status != "info" || !strings.Contains(msg, "@sha256:") {
		t.Errorf("image-pinned %s: %s", status, msg)
	}
	if status, msg := finding(t, rec, "driver-lifecycle"); status != "info" || !strings.Contains(msg, "June 2026") || !strings.Contains(msg, "R580") {
		t.Errorf("driver-lifecycle %s: %s", status, msg)
	}
	if s.Image.Pinned || s.Host.Driver.Branch.Supported {
		t.Errorf("record: pinned %v, branch %+v", s.Image.Pinned, s.Host.Driver.Branch)
	}
	r := run(t, 30*time.Second, env, shimBin(t), "--", "true")
	if r.code != abortCode {
		t.Errorf("exit %d, want %d: the mixed stack stops the job\nstderr: %s", r.code, abortCode, r.stderr)
	}
}

// A +cpu torch on a node with eight GPUs: a warning naming the GPU wheel,
// an error under PREFLIGHT_REQUIRE_GPU; the record says the build is cpu.
func TestShimCPUBuildOnGPUNode(t *testing.T) {
	env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("580.95.05", 13000)))
	root := envValue(env, "PREFLIGHT_ROOT")
	p := filepath.Join(root, e2eSP, "torch/version.py")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("__version__ = '2.4.0+cpu'\ncuda = None\nhip = None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec, s := stackJSON(t, env)
	if status, msg := finding(t, rec, "cpu-build"); status != "warn" || !strings.Contains(msg, "download.pytorch.org/whl/cu") {
		t.Errorf("cpu-build %s: %s", status, msg)
	}
	if len(s.Image.Frameworks) != 1 || s.Image.Frameworks[0].Build != "cpu" {
		t.Errorf("image.frameworks = %+v", s.Image.Frameworks)
	}
	rec, _ = stackJSON(t, append(env, "PREFLIGHT_REQUIRE_GPU=1"))
	if status, _ := finding(t, rec, "cpu-build"); status != "error" {
		t.Errorf("cpu-build under PREFLIGHT_REQUIRE_GPU: %s", status)
	}
}
