package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
)

// abortOn is the decision to abort, under policy p, on the findings with
// these ids.
func abortOn(p string, ids ...string) decision.Decision {
	return decision.Decision{Policy: p, Action: decision.Abort, ExitCode: 78, Blocking: ids}
}

// abortOnAll is abortOn with every finding of fs blocking.
func abortOnAll(fs []check.Finding) decision.Decision {
	d := abortOn("fail")
	for _, f := range fs {
		d.Blocking = append(d.Blocking, f.ID)
	}
	return d
}

func TestTerminationMessageNamesEachBlockingFinding(t *testing.T) {
	d := abortOn("strict", "cuda-requirement", "shm")
	msg := TerminationMessage(sampleFindings, d)
	lines := strings.Split(msg, "\n")
	want := []string{
		"gpu-preflight: abort (exit 78, policy strict): 2 blocking finding(s)",
		"cuda-requirement: driver 515.65.01 supports CUDA <= 11.7; this image needs CUDA 12.2 (NVIDIA_REQUIRE_CUDA); remedy: upgrade the driver to >= 535.54.03, or use an image built for CUDA <= 11.7",
		"shm: /dev/shm is 64 MiB, the container default; mirror https://[redacted]@mirror.example/x; remedy: run with --ipc=host or --shm-size=16g",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("message =\n%s\nwant\n%s", msg, strings.Join(want, "\n"))
	}
	if got := TerminationMessage(sampleFindings[:1], d); got != "" {
		t.Errorf("no blocking finding gave %q, want empty", got)
	}
}

func TestTerminationMessageFitsKubernetesCap(t *testing.T) {
	long := strings.Repeat("word ", 2000)
	tests := []struct {
		name     string
		findings []check.Finding
		wantMore bool
	}{
		{"one huge finding", []check.Finding{{ID: "gpu-arch", Status: check.Error, Message: long, Remedy: long}}, false},
		{"three huge findings share the space", []check.Finding{
			{ID: "a", Status: check.Error, Message: long}, {ID: "b", Status: check.Error, Message: long}, {ID: "c", Status: check.Error, Message: long}}, false},
		{"hundreds of findings", manyFindings(300), true},
		{"multi-line message folds", []check.Finding{{ID: "x", Status: check.Error, Message: "a\nb\r\nc", Remedy: "d\ne"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := TerminationMessage(tt.findings, abortOnAll(tt.findings))
			if len(msg) > MaxTerminationBytes {
				t.Errorf("message is %d bytes, over %d", len(msg), MaxTerminationBytes)
			}
			lines := strings.Split(msg, "\n")
			if strings.Contains(msg, "... and") != tt.wantMore {
				t.Errorf("'... and N more' line present = %v, want %v", !tt.wantMore, tt.wantMore)
			}
			shown := 0
			for _, f := range tt.findings {
				for _, l := range lines {
					if strings.HasPrefix(l, f.ID+": ") {
						shown++
						break
					}
				}
			}
			if shown == 0 {
				t.Error("no finding shown")
			}
			if !tt.wantMore && shown != len(tt.findings) {
				t.Errorf("%d of %d findings shown", shown, len(tt.findings))
			}
		})
	}
}

func manyFindings(n int) []check.Finding {
	var out []check.Finding
	for i := 0; i < n; i++ {
		out = append(out, check.Finding{ID: fmt.Sprintf("check-%03d", i), Status: check.Error, Message: strings.Repeat("m", 60), Remedy: "r"})
	}
	return out
}

func TestWriteTerminationOnlyWhereTheDirectoryExists(t *testing.T) {
	dir := t.TempDir()
	// No directory: nothing written, no error (not in Kubernetes).
	missing := filepath.Join(dir, "no-such-dir", "termination-log")
	if err := WriteTermination(missing, "x"); err != nil {
		t.Errorf("missing directory: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Error("WriteTermination created the directory")
	}
	// Directory exists: written, replacing earlier content.
	path := filepath.Join(dir, "termination-log")
	os.WriteFile(path, []byte("an earlier, longer message"), 0o644)
	if err := WriteTermination(path, "short"); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, path)); got != "short" {
		t.Errorf("file = %q, want %q", got, "short")
	}
	// Over the cap: cut.
	if err := WriteTermination(path, strings.Repeat("x", 10000)); err != nil {
		t.Fatal(err)
	}
	if n := len(readFile(t, path)); n > MaxTerminationBytes {
		t.Errorf("wrote %d bytes, over %d", n, MaxTerminationBytes)
	}
	// A symlink at the path is not followed.
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	if err := WriteTermination(link, "x"); err == nil {
		t.Error("WriteTermination followed a symlink")
	}
	if string(readFile(t, target)) != "keep" {
		t.Error("symlink target overwritten")
	}
	// Empty path or message: nothing to do.
	if err := WriteTermination("", "x"); err != nil {
		t.Error(err)
	}
}

func TestWriteTerminationToAFIFOWithoutReaderFailsAtOnce(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "termination-log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- WriteTermination(fifo, "abort") }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "no such device or address") {
			t.Errorf("WriteTermination to a FIFO nobody reads = %v, want ENXIO", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WriteTermination blocked on a FIFO nobody reads")
	}
}
