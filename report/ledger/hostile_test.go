package ledger

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAppendRefusesAHardLinkedLedger: a ledger that is another name of some
// other file (a hard link the job or a neighbour made) is refused: the
// line would be appended to that file too.
func TestAppendRefusesAHardLinkedLedger(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "runs.jsonl")
	if err := os.Link(victim, path); err != nil {
		t.Fatal(err)
	}
	err := Append(path, bigRecord(1, 0))
	if err == nil || !strings.Contains(err.Error(), "hard link") {
		t.Errorf("Append to a hard-linked ledger: %v, want a refusal that names the hard link", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("the other file was appended to: %q", b)
	}
}

const envFullDisk = "GPU_PREFLIGHT_TEST_LEDGER_FULL" // the directory to mount a small tmpfs on

// fullDiskChild mounts a 64 KiB tmpfs on dir (in its own mount namespace),
// appends records to a ledger there until one fails, and prints the
// ledger's contents after that failure and after one more append, which
// fails too (the disk is still full).
func fullDiskChild(dir string) {
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		fmt.Fprintln(os.Stderr, "mount:", err)
		os.Exit(4)
	}
	path := filepath.Join(dir, "runs.jsonl")
	var err error
	n := 0
	for ; err == nil && n < 1000; n++ {
		err = Append(path, bigRecord(2, 0))
	}
	if err == nil || !strings.Contains(err.Error(), "cut back") {
		fmt.Fprintf(os.Stderr, "after %d appends: %v; want a short write that was cut back\n", n, err)
		os.Exit(3)
	}
	_ = Append(path, bigRecord(2, 1)) // the disk is still full: no room for it
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
	os.Stdout.Write(b)
}

// TestFullDiskLeavesNoPartialLine is the attack as it was run: a ledger on
// a tmpfs that fills up in the middle of a line. Every line left is whole.
func TestFullDiskLeavesNoPartialLine(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envFullDisk+"="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	if os.Getuid() != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}}
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("full-disk child: %v\n%s\n(this test needs a mount namespace: root, or unprivileged user namespaces enabled)", err, stderr.String())
	}
	path := filepath.Join(t.TempDir(), "copy.jsonl")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	n := strings.Count(string(out), "\n")
	if n == 0 {
		t.Fatal("no line fitted on the tmpfs: the test proved nothing")
	}
	checkWholeLines(t, path, n)
}
