package rdma

import (
	"encoding/json"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/preflight/rdma/rdmatest"
	"github.com/gpu-preflight/gpu-preflight/preflight/transport"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// uverbsDriverHere reports whether this machine's kernel drives uverbs0
// (231:192): then a node of that number opens instead of giving ENXIO.
func uverbsDriverHere() bool {
	_, err := os.Stat("/sys/class/infiniband_verbs/uverbs0")
	return err == nil
}

// Opening a uverbs node tells its causes apart as libibverbs meets them:
// a real character device with no driver behind it gives ENXIO, one the
// container lacks ENOENT; a regular file or a node of another device
// number is not the HCA's.
func TestUverbsNodeOpenTellsNoDriverFromNotPassed(t *testing.T) {
	harness.NeedRoot(t, "mknod of /dev/infiniband/uverbsN")
	n := rdmatest.HGX(1, "InfiniBand", "400 Gb/sec (4X NDR)")
	n.Nodes, n.Missing = true, []int{1}
	root := layout(t, n)
	if err := os.Remove(root.Path("/dev/infiniband/uverbs2")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "/dev/infiniband/uverbs2", "")
	if err := os.Remove(root.Path("/dev/infiniband/uverbs3")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mknod(root.Path("/dev/infiniband/uverbs3"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatal(err)
	}
	f, _ := Gather(Options{Host: root, Image: root})
	want := []string{"ENXIO", "ENOENT", facts.UverbsNotDevice, facts.UverbsOther, "ENXIO"}
	if uverbsDriverHere() {
		want[0] = facts.UverbsOK
	}
	for i, w := range want {
		if got := f.HCAs[i].Node.Open; got != w {
			t.Errorf("%s (%s): %q, want %q", f.HCAs[i].Name, f.HCAs[i].Node.Path, got, w)
		}
	}
}

// A node the device cgroup denies gives EPERM: runc creates
// /dev/infiniband/uverbs0 in the container (linux.devices) and allows it
// or not (linux.resources.devices), as Docker's --device and a bind mount
// without it do.
func TestDeviceCgroupDenialIsEPERM(t *testing.T) {
	harness.NeedRoot(t, "runc")
	if _, err := exec.LookPath("runc"); err != nil {
		t.Fatal("runc is needed to apply a device cgroup (scripts/deps.sh installs it):", err)
	}
	want := map[bool]string{false: "EPERM", true: "ENXIO"}
	if uverbsDriverHere() {
		want[true] = facts.UverbsOK
	}
	for _, allowed := range []bool{false, true} {
		if got := openInContainer(t, allowed); got.Open != want[allowed] {
			t.Errorf("device cgroup allowing it %v: %q, want %q", allowed, got.Open, want[allowed])
		}
	}
}

// openInContainer runs the test binary in a runc container that holds
// uverbs0 and opens it there.
func openInContainer(t *testing.T, allowed bool) facts.UverbsNode {
	t.Helper()
	bundle := t.TempDir()
	if err := os.Mkdir(filepath.Join(bundle, "rootfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	rules := []map[string]any{{"allow": false, "access": "rwm"}}
	if allowed {
		rules = append(rules, map[string]any{"allow": true, "type": "c", "major": 231, "minor": 192, "access": "rw"})
	}
	spec := map[string]any{
		"ociVersion": "1.0.2",
		"process": map[string]any{
			"args": []string{"/rdma.test", "-test.run=^$"},
			"env":  []string{childEnv + "=open /dev/infiniband/uverbs0 231:192"},
			"cwd":  "/",
			"user": map[string]int{"uid": 0, "gid": 0},
		},
		"root": map[string]any{"path": "rootfs", "readonly": true},
		"mounts": []map[string]any{
			{"destination": "/proc", "type": "proc", "source": "proc"},
			{"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": []string{"nosuid", "mode=755"}},
			{"destination": "/rdma.test", "type": "bind", "source": os.Args[0], "options": []string{"bind", "ro"}},
		},
		"linux": map[string]any{
			"devices":    []map[string]any{{"path": "/dev/infiniband/uverbs0", "type": "c", "major": 231, "minor": 192, "fileMode": 0o666, "uid": 0, "gid": 0}},
			"resources":  map[string]any{"devices": rules},
			"namespaces": []map[string]string{{"type": "pid"}, {"type": "mount"}, {"type": "ipc"}, {"type": "uts"}},
		},
	}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bundle, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	id := "rdma-test-" + strings.ReplaceAll(filepath.Base(bundle), "/", "")
	cmd := exec.Command("runc", "run", "--bundle", bundle, id)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		exec.Command("runc", "delete", "--force", id).Run()
		t.Fatalf("runc run: %v\n%s", err, stderr.String())
	}
	var n facts.UverbsNode
	if err := json.Unmarshal(out, &n); err != nil {
		t.Fatalf("the container printed %q: %v", out, err)
	}
	return n
}

// The limits are the process's own: lowered by prlimit, and the bounding
// set without CAP_IPC_LOCK (setpriv), they are what the command inherits,
// and the rule warns; as they were, a root process may lock memory.
func TestLockedMemoryLimitIsTheProcessOwn(t *testing.T) {
	for _, tool := range []string{"prlimit", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s (util-linux) is needed: %v", tool, err)
		}
	}
	prefix := []string{"prlimit", "--memlock=65536:65536"}
	if os.Geteuid() == 0 {
		prefix = append(prefix, "setpriv", "--bounding-set", "-ipc_lock")
	}
	var lowered facts.RankProcess
	runChild(t, nil, prefix, "process", &lowered)
	if lowered.MemlockSoft != 65536 || lowered.MemlockHard != 65536 || lowered.CapBnd>>14&1 != 0 && lowered.UID == 0 {
		t.Fatalf("lowered: %+v", lowered)
	}
	if codes := memlockCodes(lowered); len(codes) != 1 {
		t.Errorf("lowered limits: causes %q, want memlock-limited", codes)
	}
	if os.Geteuid() != 0 {
		return
	}
	var asIs facts.RankProcess
	runChild(t, nil, nil, "process", &asIs)
	if codes := memlockCodes(asIs); len(codes) != 0 {
		t.Errorf("root with CAP_IPC_LOCK: causes %q, want none", codes)
	}
}

// memlockCodes runs the rules for a rank with p's limits and an HCA NCCL
// takes.
func memlockCodes(p facts.RankProcess) []string {
	f := ibFacts()
	f.Process = p
	var codes []string
	for _, x := range transport.Predict(f).Causes {
		if transport.Causes()[x.Code].Check == transport.CheckMemlock {
			codes = append(codes, x.Code)
		}
	}
	return codes
}
