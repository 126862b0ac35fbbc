package gather

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/cudaprobe"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/image"
)

// FIFOs planted where every gatherer expects a file (the driver version,
// the cgroup file, version.json, a framework's version file, the image
// manifest) cost no waiting: Gather returns at once with a warning for
// each, and with the facts the other files give.
func TestGatherCarriesOnPastFIFOs(t *testing.T) {
	root := t.TempDir()
	sp := "usr/local/lib/python3.10/dist-packages"
	for _, d := range []string{"proc/driver/nvidia", "proc/self", "usr/local/cuda", sp + "/torch", sp + "/torch-2.1.0+cu121.dist-info", "etc/gpu-preflight"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "usr/local/cuda/version.txt"), []byte("CUDA Version 12.1.105\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifos := []string{"proc/driver/nvidia/version", "proc/self/cgroup", "usr/local/cuda/version.json", sp + "/torch/version.py", "etc/gpu-preflight/image.json"}
	for _, p := range fifos {
		if err := syscall.Mkfifo(filepath.Join(root, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	start := time.Now()
	var warnings []string
	var cuda, torch string
	go func() {
		defer close(done)
		res, w := Gather(context.Background(), Options{Root: fsroot.Root(root), NVMLTimeout: time.Second, Manifest: "/etc/gpu-preflight/image.json"})
		warnings, cuda = w, res.Facts.Container.CUDA.Version
		for _, fw := range res.Facts.Container.Frameworks {
			if fw.Name == "torch" {
				torch = fw.Version
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Gather is still blocked after 5s")
	}
	t.Logf("Gather with %d FIFOs: %v", len(fifos), time.Since(start))
	joined := strings.Join(warnings, "\n")
	for _, p := range fifos {
		if !strings.Contains(joined, "/"+p+": not a regular file (a FIFO)") {
			t.Errorf("no warning says /%s is not a regular file:\n%s", p, joined)
		}
	}
	if cuda != "12.1" || torch != "2.1.0+cu121" {
		t.Errorf("CUDA %q, torch %q: want 12.1 from version.txt and torch from its dist-info", cuda, torch)
	}
}

func TestScanBudgetLeavesRoomBeforeTheDeadline(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name     string
		deadline time.Duration // from now; 0: none
		want     time.Duration
	}{
		{"no deadline", 0, image.RuntimeScanBudget},
		{"default PREFLIGHT_TIMEOUT after a 10 s probe", 20 * time.Second, image.RuntimeScanBudget},
		{"a short PREFLIGHT_TIMEOUT", 2 * time.Second, 2*time.Second - scanMargin},
		{"the deadline is past", -time.Second, -time.Second - scanMargin},
	} {
		ctx := context.Background()
		if tc.deadline != 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, now.Add(tc.deadline))
			defer cancel()
		}
		if got := scanBudget(ctx, now); got != tc.want {
			t.Errorf("%s: budget %v, want %v", tc.name, got, tc.want)
		}
	}
}

// With the preflight's deadline already spent, the scan stops at once and
// says so, and Gather still returns the facts it has.
func TestGatherCutsTheScanAtTheDeadline(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "usr/local/lib/python3.10/dist-packages/torch-2.1.0+cu121.dist-info"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	res, warnings := Gather(ctx, Options{Root: fsroot.Root(root), Environ: envvars.Parse([]string{"CUDA_VERSION=12.1.0"}), NVMLTimeout: time.Second})
	f := res.Facts
	if !strings.Contains(strings.Join(warnings, "\n"), "the scan stopped after its 1ns budget") {
		t.Errorf("warnings %q do not say the scan was cut", warnings)
	}
	if len(f.Container.Frameworks) != 0 || f.Container.CUDA.Version != "12.1" {
		t.Errorf("frameworks %+v, CUDA %q: want none scanned, CUDA from the environment", f.Container.Frameworks, f.Container.CUDA.Version)
	}
}

func TestCUDABudgetEndsBeforeThePreflight(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name       string
		configured time.Duration
		deadline   time.Duration // from now; 0: none
		want       time.Duration
	}{
		{"PREFLIGHT_CUDA_TIMEOUT within the preflight's", 15 * time.Second, 30 * time.Second, 15 * time.Second},
		{"unset is the default", 0, 0, cudaprobe.DefaultTimeout},
		{"a nearer preflight deadline wins", 15 * time.Second, 5 * time.Second, 5*time.Second - scanMargin},
		{"a spent deadline leaves a millisecond", 15 * time.Second, -time.Second, time.Millisecond},
	} {
		ctx := context.Background()
		if tc.deadline != 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, now.Add(tc.deadline))
			defer cancel()
		}
		if got := probeBudget(ctx, tc.configured, cudaprobe.DefaultTimeout, now); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
