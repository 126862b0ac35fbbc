//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/rdma/rdmatest"
	"github.com/gpu-preflight/gpu-preflight/preflight/rdmaprobe"
	"github.com/gpu-preflight/gpu-preflight/test/fakeverbs"
)

// The RDMA active tier (PREFLIGHT_RDMA_CHECK) end to end: the shim with its
// embedded probe against a fake libibverbs.so.1 in the image, where the
// loader model finds the image's own; and the probe against Debian's real
// rdma-core on this kernel, which has no RDMA.

// activeRecord is the part of the record the active tier's tests read.
type activeRecord struct {
	Host struct {
		Transport struct {
			Prediction struct {
				Network, Proved string
				Causes          []struct{ Code string }
			}
			Active struct {
				Mode, Outcome, Error, Library string
				Devices                       []struct {
					Name  string
					Ports []struct {
						Num              int
						State, LinkLayer string
					}
					Steps []struct{ Step, Errno string }
				}
			}
		}
	}
}

// activeImage is ncclImage with the fake in place of Debian's libibverbs.
func activeImage(t *testing.T) string {
	t.Helper()
	img := ncclImage(t)
	lib, err := fakeverbs.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", lib, filepath.Join(img, "usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0")).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return img
}

// activeRun runs `check --json` on eight InfiniBand HCAs whose nodes open,
// with the fake playing s; it returns the record, the run, what the fake
// held when it ended and whether it was loaded at all; with human, the
// run's stderr is the human report of a second run.
func activeRun(t *testing.T, img string, s fakeverbs.Scenario, human bool, extra ...string) (record, activeRecord, result, string, bool) {
	t.Helper()
	dir := t.TempDir()
	s.Ledger = filepath.Join(dir, "ledger")
	scen, err := s.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	node := rdmatest.HGX(1, "InfiniBand", "400 Gb/sec (4X NDR)")
	node.Nodes, node.Opens = true, true
	env := rankEnv(t, img, node, append([]string{fakeverbs.EnvScenario + "=" + scen, fakeverbs.EnvLoaded + "=" + filepath.Join(dir, "loaded")},
		append(slurmTwoNodes, extra...)...)...)
	rec, r := checkJSON(t, env)
	if human {
		h := run(t, 30*time.Second, env, shimBin(t), "check")
		r.stderr = h.stdout
	}
	var a activeRecord
	if err := json.Unmarshal([]byte(r.stdout), &a); err != nil {
		t.Fatal(err)
	}
	ledger, _ := os.ReadFile(s.Ledger)
	_, err = os.Stat(filepath.Join(dir, "loaded"))
	return rec, a, r, strings.TrimSpace(string(ledger)), err == nil
}

// Each answer of the image's libibverbs becomes the transport cause it
// proves, with the launcher's remedy and the exit code of its class:
// success is said and proved, ENOMEM from ibv_reg_mr is the memlock
// limit, EPERM from ibv_open_device the device cgroup (NCCL then falls
// back to sockets); whatever was taken is given back.
func TestRDMAActiveTierTurnsVerbsErrnosIntoCauses(t *testing.T) {
	needRoot(t, "mknod of /dev/infiniband/uverbsN")
	img := activeImage(t)
	denied := fakeverbs.HGX()
	for i := range denied.Devices {
		denied.Devices[i].Open = "EPERM"
	}
	limited := fakeverbs.HGX()
	limited.Devices[3].Reg = "ENOMEM"
	tests := []struct {
		name, mode string
		scenario   fakeverbs.Scenario
		id, status string
		network    string
		says       []string
		outcome    string
		human      string
	}{
		{"every HCA opens and registers", "register", fakeverbs.HGX(), "nccl-transport", "pass", "IB",
			[]string{"NET/IB on mlx5_0:1", "opened, ports queried, 1 MiB registered through", "mlx5_7"}, "ok", "register: ok, 8 device(s)"},
		{"open mode registers nothing", "open", fakeverbs.HGX(), "nccl-transport", "pass", "IB",
			[]string{"opened, ports queried, a protection domain allocated"}, "ok", "open: ok, 8 device(s)"},
		{"ibv_reg_mr answers ENOMEM: the memlock limit", "register", limited, "rdma-memlock", "warn", "IB",
			[]string{"mlx5_3 (ibv_reg_mr: ENOMEM", "PropagateResourceLimitsExcept=MEMLOCK"}, "failed", "register: failed, 8 device(s); mlx5_3 ibv_reg_mr: ENOMEM"},
		{"ibv_open_device answers EPERM: the device cgroup", "open", denied, "nccl-transport", "warn", "Socket",
			[]string{"may not open (device cgroup)", "mlx5_0 (ibv_open_device: EPERM", "NET/Socket", "ConstrainDevices"}, "failed", "open: failed, 8 device(s); mlx5_0 ibv_open_device: EPERM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, a, r, ledger, _ := activeRun(t, img, tt.scenario, true, "PREFLIGHT_RDMA_CHECK="+tt.mode)
			status, text := finding(t, rec, tt.id)
			if status != tt.status {
				t.Fatalf("%s %s, want %s: %s", tt.id, status, tt.status, text)
			}
			for _, want := range tt.says {
				if !strings.Contains(text, want) {
					t.Errorf("%s does not say %q: %s", tt.id, want, text)
				}
			}
			act := a.Host.Transport.Active
			if act.Mode != tt.mode || act.Outcome != tt.outcome || len(act.Devices) != 8 || !strings.HasSuffix(act.Library, "libibverbs.so.1.14.44.0") {
				t.Errorf("host.transport.active: %+v", act)
			}
			if got := a.Host.Transport.Prediction.Network; got != tt.network {
				t.Errorf("network %q, want %q", got, tt.network)
			}
			if p := act.Devices[0].Ports; tt.network == "IB" && (len(p) != 1 || p[0].State != "ACTIVE" || p[0].LinkLayer != "InfiniBand") {
				t.Errorf("mlx5_0's ports as ibv_query_port gave them: %+v", p)
			}
			if !strings.Contains(r.stderr, "RDMA check") || !strings.Contains(r.stderr, tt.human) {
				t.Errorf("the human report does not say %q:\n%s", tt.human, r.stderr)
			}
			if ledger != "0" {
				t.Errorf("the fake still held %q contexts, domains and regions when the probe ended", ledger)
			}
			if r.code != 0 {
				t.Errorf("exit %d, want 0 (a warning lets the job start)", r.code)
			}
		})
	}
}

// An ibv_open_device that never returns cannot hang the start: the probe
// and its process group are killed at PREFLIGHT_RDMA_TIMEOUT, the run
// ends soon after, and the node is reported faulty (75), for a job on one
// node too, since NCCL opens the HCAs for every communicator.
func TestRDMAActiveTierHangIsANodeFault(t *testing.T) {
	needRoot(t, "mknod of /dev/infiniband/uverbsN")
	ref := reference(t)
	hang := fakeverbs.HGX()
	hang.Devices[2].Open = "hang"
	img := activeImage(t)
	for _, shape := range []struct{ name, nodes string }{
		{"two nodes", "SLURM_JOB_NUM_NODES=2"},
		{"one node", "SLURM_JOB_NUM_NODES=1"},
	} {
		t.Run(shape.name, func(t *testing.T) {
			tag := marker(t)
			start := time.Now()
			rec, a, r, _, _ := activeRun(t, img, hang, false, "PREFLIGHT_RDMA_CHECK=open", "PREFLIGHT_RDMA_TIMEOUT=2s", shape.nodes, tag)
			took := time.Since(start)
			status, text := finding(t, rec, "nccl-transport")
			if status != "error" || r.code != nodeFaultCode || a.Host.Transport.Active.Outcome != "timeout" ||
				!strings.Contains(text, "PREFLIGHT_RDMA_TIMEOUT=2s") || !strings.Contains(text, "drain the node") {
				t.Errorf("nccl-transport %s, exit %d, outcome %q: %s", status, r.code, a.Host.Transport.Active.Outcome, text)
			}
			if took < 2*time.Second {
				t.Errorf("the run took %v with PREFLIGHT_RDMA_TIMEOUT=2s; it cannot end before the deadline", took)
			}
			withinDeadline(t, "the run", took, 2*time.Second, ref)
			if left := processesWith(tag); len(left) > 0 {
				t.Errorf("processes left behind: %v", left)
			}
		})
	}
}

// Off, the default, starts nothing: the image's libibverbs is never loaded.
func TestRDMAActiveTierOffLoadsNothing(t *testing.T) {
	needRoot(t, "mknod of /dev/infiniband/uverbsN")
	s := fakeverbs.HGX()
	s.Devices[0].Open = "hang"
	_, a, _, _, loaded := activeRun(t, activeImage(t), s, false)
	if loaded {
		t.Error("PREFLIGHT_RDMA_CHECK unset loaded libibverbs")
	}
	if act := a.Host.Transport.Active; act.Mode != "off" || act.Outcome != "not-run" || len(act.Devices) != 0 {
		t.Errorf("host.transport.active: %+v", act)
	}
}

// Debian bookworm's real libibverbs and providers, run by the probe inside
// the image (chroot, in a private mount namespace) on this kernel, which
// has no RDMA, answer truthfully: no uverbs at all is ENOSYS from
// ibv_get_device_list; with rdmatest's HGX sysfs and real uverbs nodes
// (open(2) gives ENXIO here), the mlx5 provider lists all eight and
// ibv_open_device fails with ENOENT, which rdma-core's open_cdev reports
// after its udev fallback finds no /dev/char; without the provider's
// configuration no device is listed.
func TestDebianLibibverbsAnswersTruthfully(t *testing.T) {
	needRoot(t, "chroot, mount --bind and mknod")
	tests := []struct {
		name     string
		sysfs    bool
		without  string
		list     string
		listed   int
		open     string
		notFound bool
	}{
		{"this kernel's own /sys", false, "", "ENOSYS", 0, "", false},
		{"rdmatest's HGX sysfs and uverbs nodes", true, "", "", 8, "ENOENT", false},
		{"no mlx5.driver in /etc/libibverbs.d", true, "etc/libibverbs.d/mlx5.driver", "", 0, "", true},
	}
	img := ncclImage(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			if out, err := exec.Command("cp", "-a", img, root).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if out, err := exec.Command("cp", probeBin(t), filepath.Join(root, "probe")).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if tt.without != "" {
				if err := os.Remove(filepath.Join(root, tt.without)); err != nil {
					t.Fatal(err)
				}
			}
			host := "/"
			if tt.sysfs {
				host = t.TempDir()
				node := rdmatest.HGX(1, "InfiniBand", "400 Gb/sec (4X NDR)")
				node.Nodes = true
				if err := rdmatest.Layout(host, node); err != nil {
					t.Fatal(err)
				}
			}
			for _, d := range []string{"sys", "dev/infiniband"} {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			script := `set -e
mount --bind "$1/sys" "$2/sys"
if [ -d "$1/dev/infiniband" ]; then mount --bind "$1/dev/infiniband" "$2/dev/infiniband"; fi
exec chroot "$2" /probe rdma open /usr/lib/x86_64-linux-gnu/libibverbs.so.1 mlx5_0:1`
			cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", host, root)
			r := runCmd(t, cmd, 30*time.Second)
			doc, err := rdmaprobe.Decode([]byte(r.stdout), "open")
			if err != nil {
				t.Fatalf("%v\nstdout: %s\nstderr: %s", err, r.stdout, r.stderr)
			}
			if doc.List == nil || doc.List.Errno != tt.list || len(doc.Listed) != tt.listed {
				t.Fatalf("ibv_get_device_list: %+v, listed %v; want errno %q and %d devices", doc.List, doc.Listed, tt.list, tt.listed)
			}
			if tt.list != "" {
				return
			}
			if len(doc.Devices) != 1 {
				t.Fatalf("devices %+v", doc.Devices)
			}
			s := doc.Devices[0].Failed()
			switch {
			case s == nil:
				t.Errorf("mlx5_0 passed on a kernel without RDMA: %+v", doc.Devices[0])
			case tt.notFound && s.Step != facts.RDMAStepFind:
				t.Errorf("mlx5_0 without its provider: %+v, want the find step", s)
			case !tt.notFound && (s.Step != facts.RDMAStepOpen || s.Errno != tt.open):
				t.Errorf("mlx5_0: %+v, want %s from ibv_open_device", s, tt.open)
			}
		})
	}
}
