package image

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin"
)

// fifo makes p (inside the root) a FIFO: opening it for reading would wait
// for a writer forever.
func (tr *tree) fifo(p string) {
	tr.t.Helper()
	tr.dir(p[:strings.LastIndex(p, "/")])
	if err := syscall.Mkfifo(tr.host(p), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

// scanWithin runs a scan (with budget, 0 for none) and fails the test if it
// has not returned after d.
func scanWithin(t *testing.T, d time.Duration, tr *tree, env map[string]string, budget time.Duration) (Result, []string) {
	t.Helper()
	type out struct {
		res Result
		w   []string
	}
	done := make(chan out, 1)
	go func() {
		res, w := scan(tr.Root(), env, fatbin.ScanFile, budget)
		done <- out{res, w}
	}()
	select {
	case o := <-done:
		return o.res, o.w
	case <-time.After(d):
		t.Fatalf("the scan is still running after %v", d)
	}
	return Result{}, nil
}

// FIFOs where the scan expects a version file, a header, a kernel library
// or a site-packages directory are refused at once; the scan carries on
// and finds torch from its dist-info.
func TestScanDoesNotBlockOnFIFOs(t *testing.T) {
	tr := newTree(t)
	tr.dir(debianSP + "/torch-2.1.0+cu121.dist-info")
	tr.fifo(debianSP + "/torch/version.py")
	tr.fifo(debianSP + "/torch/lib/libtorch_cuda.so")
	tr.fifo(debianSP + "/tensorflow/python/platform/build_info.py")
	tr.dir(debianSP + "/tensorflow-2.15.0.dist-info")
	tr.fifo("/usr/include/cudnn_version.h")
	tr.fifo("/usr/lib/python3.11/dist-packages") // a FIFO where a site-packages directory belongs
	res, warnings := scanWithin(t, 5*time.Second, tr, nil, RuntimeScanBudget)
	joined := strings.Join(warnings, "\n")
	for _, p := range []string{debianSP + "/torch/version.py", debianSP + "/tensorflow/python/platform/build_info.py", "/usr/include/cudnn_version.h"} {
		if !strings.Contains(joined, p+": not a regular file (a FIFO)") {
			t.Errorf("warnings %q do not say %s is not a regular file", warnings, p)
		}
	}
	torch := findFramework(t, res, "torch")
	if torch.Version != "2.1.0+cu121" || torch.CUDAVersion != "12.1" {
		t.Errorf("torch = %+v, want 2.1.0+cu121 from its dist-info", torch)
	}
	if len(torch.Kernels) != 0 {
		t.Errorf("a FIFO was taken for a kernel library: %+v", torch.Kernels)
	}
	if tf := findFramework(t, res, "tensorflow"); tf.Version != "2.15.0" {
		t.Errorf("tensorflow = %+v", tf)
	}
	if len(res.SitePackages) != 1 || res.SitePackages[0] != debianSP {
		t.Errorf("site-packages %q, want only %s", res.SitePackages, debianSP)
	}
}

// A version file larger than maxSourceFile is refused, not read.
func TestScanRefusesAHugeVersionFile(t *testing.T) {
	tr := newTree(t)
	tr.dir(debianSP + "/torch-2.1.0+cu121.dist-info")
	tr.file(debianSP+"/torch/version.py", "__version__ = '9.9.9'\n"+strings.Repeat("#", maxSourceFile))
	res, warnings := scanWithin(t, 5*time.Second, tr, nil, RuntimeScanBudget)
	if !strings.Contains(strings.Join(warnings, "\n"), "file larger than the limit of 4194304 bytes") {
		t.Errorf("warnings %q do not refuse the 4 MiB version.py", warnings)
	}
	if torch := findFramework(t, res, "torch"); torch.Version != "2.1.0+cu121" {
		t.Errorf("torch = %+v, want the dist-info's version", torch)
	}
}

// Past its budget the scan stops listing and reading and says so; what it
// had not reached is missing, and nothing else goes wrong.
func TestScanStopsAtItsBudgetAndSaysSo(t *testing.T) {
	tr := newTree(t)
	tr.dir(debianSP + "/torch-2.1.0+cu121.dist-info")
	res, warnings := scanWithin(t, 5*time.Second, tr, nil, time.Nanosecond)
	joined := strings.Join(warnings, "\n")
	if strings.Count(joined, "the scan stopped after its 1ns budget") != 1 || !strings.Contains(joined, "gpu-preflight bake") {
		t.Errorf("warnings %q: want one saying the scan stopped, and what to do", warnings)
	}
	if len(res.Frameworks) != 0 {
		t.Errorf("frameworks %+v found after the budget was spent", res.Frameworks)
	}
	// Without a budget (bake) the same tree is scanned to the end.
	res, warnings = scanWithin(t, 5*time.Second, tr, nil, 0)
	if len(res.Frameworks) != 1 || strings.Contains(strings.Join(warnings, "\n"), "stopped") {
		t.Errorf("unbounded scan: %+v, %q", res.Frameworks, warnings)
	}
}

// PYTHONPATH and LD_LIBRARY_PATH are searched up to maxSearchPathEntries
// entries each; a warning names the variable and the count.
func TestScanSearchPathsAreCapped(t *testing.T) {
	tr := newTree(t)
	var dirs []string
	for i := range maxSearchPathEntries + 50 {
		dirs = append(dirs, fmt.Sprintf("/p%d", i))
	}
	// torch in the last PYTHONPATH entry is past the cap.
	last := dirs[len(dirs)-1]
	tr.dir(last + "/torch-2.1.0+cu121.dist-info")
	list := strings.Join(dirs, ":")
	res, warnings := scanWithin(t, 5*time.Second, tr, map[string]string{"PYTHONPATH": list, "LD_LIBRARY_PATH": list}, RuntimeScanBudget)
	joined := strings.Join(warnings, "\n")
	for _, v := range []string{"PYTHONPATH", "LD_LIBRARY_PATH"} {
		if want := fmt.Sprintf("%s has 306 directories; the scan looked only in the first 256", v); !strings.Contains(joined, want) {
			t.Errorf("warnings %q do not say %q", warnings, want)
		}
	}
	if len(res.Frameworks) != 0 {
		t.Errorf("found %+v past the cap", res.Frameworks)
	}
}
