package store

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
)

// A path set explicitly is created when its directory exists; the default
// (create false) is written only when the file is there already, as the
// kubelet leaves it in a pod: nothing is created on a workstation.
func TestWriteTerminationCreatesOnlyAPathSetExplicitly(t *testing.T) {
	dir := t.TempDir()
	// No directory: nothing written, no error (not in Kubernetes).
	missing := filepath.Join(dir, "no-such-dir", "termination-log")
	for _, create := range []bool{true, false} {
		if err := WriteTermination(missing, "x", create); err != nil {
			t.Errorf("missing directory (create %v): %v", create, err)
		}
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Error("WriteTermination created the directory")
	}
	// The default path, no file: nothing created.
	path := filepath.Join(dir, "termination-log")
	if err := WriteTermination(path, "x", false); err != nil {
		t.Errorf("no file at the default path: %v", err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("WriteTermination created %s for a path nobody set (%v)", path, err)
	}
	// Set explicitly: created.
	if err := WriteTermination(path, "explicit", true); err != nil {
		t.Fatal(err)
	}
	if got := string(reporttest.ReadFile(t, path)); got != "explicit" {
		t.Errorf("file = %q, want %q", got, "explicit")
	}
	// The file exists (the kubelet made it): written, replacing earlier
	// content, whether or not the path was set.
	os.WriteFile(path, []byte("an earlier, longer message"), 0o644)
	if err := WriteTermination(path, "short", false); err != nil {
		t.Fatal(err)
	}
	if got := string(reporttest.ReadFile(t, path)); got != "short" {
		t.Errorf("file = %q, want %q", got, "short")
	}
	// Over the cap: cut.
	if err := WriteTermination(path, strings.Repeat("x", 10000), false); err != nil {
		t.Fatal(err)
	}
	if n := len(reporttest.ReadFile(t, path)); n > report.MaxTerminationBytes {
		t.Errorf("wrote %d bytes, over %d", n, report.MaxTerminationBytes)
	}
	// A symlink at the path is not followed.
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	for _, create := range []bool{true, false} {
		if err := WriteTermination(link, "x", create); err == nil {
			t.Errorf("WriteTermination followed a symlink (create %v)", create)
		}
	}
	if string(reporttest.ReadFile(t, target)) != "keep" {
		t.Error("symlink target overwritten")
	}
	// Empty path or message: nothing to do.
	if err := WriteTermination("", "x", true); err != nil {
		t.Error(err)
	}
}

func TestWriteTerminationToAFIFOWithoutReaderFailsAtOnce(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "termination-log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- WriteTermination(fifo, "abort", false) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "no such device or address") {
			t.Errorf("WriteTermination to a FIFO nobody reads = %v, want ENXIO", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WriteTermination blocked on a FIFO nobody reads")
	}
}
