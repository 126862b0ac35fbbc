//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/ldso/ldsotest"
	"github.com/gpu-preflight/gpu-preflight/preflight/rdma/rdmatest"
	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

var (
	debianRDMAOnce sync.Once
	debianRDMA     string
	debianRDMAErr  error
)

// ncclImage is an image with Debian bookworm's rdma-core (libibverbs1,
// ibverbs-providers, unpacked by scripts/rdma-debian.sh) and a CUDA build
// of torch whose libtorch_cuda.so needs NCCL 2.21.5, as pip and the
// distributions lay them out.
func ncclImage(t *testing.T) string {
	t.Helper()
	debianRDMAOnce.Do(func() {
		out, err := exec.Command("bash", "../../scripts/rdma-debian.sh", "image").Output()
		debianRDMA, debianRDMAErr = strings.TrimSpace(string(out)), err
	})
	if debianRDMAErr != nil {
		t.Fatalf("scripts/rdma-debian.sh image: %v", debianRDMAErr)
	}
	img := filepath.Join(t.TempDir(), "image")
	if out, err := exec.Command("cp", "-a", debianRDMA, img).CombinedOutput(); err != nil {
		t.Fatalf("copying %s: %v\n%s", debianRDMA, err, out)
	}
	const lib, sp = "usr/lib/x86_64-linux-gnu/", "usr/local/lib/python3.11/dist-packages/"
	ldsotest.Build(t, img, ldsotest.Lib{Path: lib + "libnccl.so.2.21.5", Soname: "libnccl.so.2"})
	if err := os.Symlink("libnccl.so.2.21.5", filepath.Join(img, lib, "libnccl.so.2")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{sp + "torch-2.4.0+cu121.dist-info", sp + "torch"} {
		if err := os.MkdirAll(filepath.Join(img, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	version := "__version__ = '2.4.0+cu121'\ndebug = False\ncuda: Optional[str] = '12.1'\nhip: Optional[str] = None\n"
	if err := os.WriteFile(filepath.Join(img, sp, "torch/version.py"), []byte(version), 0o644); err != nil {
		t.Fatal(err)
	}
	ldsotest.Build(t, img, ldsotest.Lib{Path: sp + "torch/lib/libtorch_cuda.so", Soname: "libtorch_cuda.so", Needs: []string{lib + "libnccl.so.2"}})
	return img
}

// rankEnv is the environment of a rank on eight fake H100s whose host
// root is node laid out by rdmatest and whose image is img (ncclImage).
func rankEnv(t *testing.T, img string, node rdmatest.Node, extra ...string) []string {
	t.Helper()
	env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.HealthyH100x8()))
	if err := rdmatest.Layout(envValue(env, "PREFLIGHT_HOST_ROOT"), node); err != nil {
		t.Fatal(err)
	}
	return append(withoutVar(env, "PREFLIGHT_ROOT"), append([]string{"PREFLIGHT_ROOT=" + img}, extra...)...)
}

// needRoot fails under CI, where the suite runs as root, and skips
// elsewhere.
func needRoot(t *testing.T, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal("this test needs root: " + why)
	}
	t.Skip("needs root: " + why)
}

var slurmTwoNodes = []string{"SLURM_JOB_ID=4242", "SLURM_JOB_NUM_NODES=2"}

// Each cause of a multi-node job's transport gives its finding, code and
// the remedy for its launcher through the binary: a fallback warns and
// the job runs (strict stops it with the mismatch code), a setting naming
// what is not there is the mismatch code, every port down the node-fault
// code.
func TestTransportCausesEndToEnd(t *testing.T) {
	hgx := func(change func(*rdmatest.Node)) rdmatest.Node {
		n := rdmatest.HGX(1, "InfiniBand", "400 Gb/sec (4X NDR)")
		if change != nil {
			change(&n)
		}
		return n
	}
	opens := func(n rdmatest.Node) rdmatest.Node { n.Nodes, n.Opens = true, true; return n }
	// dockerDefaults are a root process's capabilities under Docker's
	// default set (no CAP_IPC_LOCK) and the 64 KiB locked-memory limit.
	dockerDefaults := func(n *rdmatest.Node) {
		n.Status = strings.ReplaceAll(rdmatest.StatusRoot, "000001ffffffffff", "00000000a80425fb")
		n.Limits = strings.Replace(rdmatest.LimitsUnlimited, "unlimited            unlimited           ", "65536                65536               ", 1)
	}
	const libdir = "usr/lib/x86_64-linux-gnu/"
	dockerTwoNodes := []string{"WORLD_SIZE=16", "LOCAL_WORLD_SIZE=8"}
	tests := []struct {
		name      string
		node      rdmatest.Node
		env       []string
		root      bool
		id        string
		status    string
		nodeFault bool
		says      []string
		// without are files removed from the image, host files written
		// under the host root.
		without []string
		host    map[string]string
	}{
		{"devices not passed in, under Slurm", hgx(nil), slurmTwoNodes, false, "nccl-transport", "warn", false,
			[]string{"RDMA devices not in this container", "mlx5_7", "NET/Socket", "MELLANOX_VISIBLE_DEVICES=all"}, nil, nil},
		{"devices not passed in, under Kubernetes", hgx(nil), []string{"KUBERNETES_SERVICE_HOST=10.96.0.1", "PET_NNODES=2"}, false,
			"nccl-transport", "warn", false, []string{"RDMA devices not in this container", "resources.limits"}, nil, nil},
		{"no ib_uverbs: the nodes give ENXIO", hgx(func(n *rdmatest.Node) { n.Nodes = true }), slurmTwoNodes, true,
			"nccl-transport", "warn", false, []string{"without their kernel verbs driver", "ENXIO", "modprobe ib_uverbs"}, nil, nil},
		{"every port down", hgx(func(n *rdmatest.Node) {
			for i := range n.HCAs {
				n.HCAs[i].Ports[0].State, n.HCAs[i].Ports[0].PhysState = rdmatest.Down, rdmatest.Polling
			}
		}), slurmTwoNodes, false, "nccl-transport", "error", true, []string{"every port NCCL would use is down", "drain the node"}, nil, nil},
		{"a spare port down is reported, not a fault", hgx(func(n *rdmatest.Node) {
			for i := range n.HCAs {
				n.HCAs[i].Ports = append(n.HCAs[i].Ports, rdmatest.Port{State: rdmatest.Down, PhysState: rdmatest.Disabled, LinkLayer: "InfiniBand"})
			}
		}), slurmTwoNodes, false, "nccl-transport", "warn", false, []string{"ports down, left out by NCCL", "mlx5_0:2"}, nil, nil},
		{"NCCL_IB_HCA names no HCA", hgx(nil), append([]string{"NCCL_IB_HCA=mlx5_9"}, slurmTwoNodes...), false,
			"nccl-transport", "error", false, []string{`NCCL_IB_HCA="mlx5_9"`, "takes none of"}, nil, nil},
		{"NCCL_SOCKET_IFNAME names no interface", hgx(nil), append([]string{"NCCL_SOCKET_IFNAME==nosuch0"}, slurmTwoNodes...), false,
			"nccl-transport", "error", false, []string{`NCCL_SOCKET_IFNAME="=nosuch0"`, "no socket interface found"}, nil, nil},
		{"NCCL_NET_PLUGIN names a plugin the image lacks", hgx(nil), append([]string{"NCCL_NET_PLUGIN=aws-ofi"}, slurmTwoNodes...), false,
			"nccl-transport", "error", false, []string{`NCCL_NET_PLUGIN="aws-ofi"`, "libnccl-net-aws-ofi.so"}, nil, nil},
		{"EFA without aws-ofi-nccl", rdmatest.EFA(), slurmTwoNodes, false, "nccl-transport", "warn", false,
			[]string{"EFA adapters", "aws-ofi-nccl"}, nil, nil},
		{"an image without libibverbs, under Docker", opens(hgx(nil)), dockerTwoNodes, true, "nccl-transport", "warn", false,
			[]string{"cannot open libibverbs.so", "not in the image", "apt-get install libibverbs1"},
			[]string{libdir + "libibverbs.so.1", libdir + "libibverbs.so.1.14.44.0"}, nil},
		{"an image without the mlx5 provider, under Slurm", opens(hgx(nil)), slurmTwoNodes, true, "nccl-transport", "warn", false,
			[]string{"no provider", "mlx5_0", "libmlx5-rdmav*.so not found", "MELLANOX_MOUNT_DRIVER=1"},
			[]string{libdir + "libibverbs/libmlx5-rdmav34.so"}, nil},
		{"Docker's locked-memory limit without CAP_IPC_LOCK", opens(hgx(dockerDefaults)), dockerTwoNodes, true, "rdma-memlock", "warn", false,
			[]string{"RLIMIT_MEMLOCK is 64 KiB", "CAP_IPC_LOCK", "ibv_reg_mr failed", "--ulimit memlock=-1:-1"}, nil, nil},
		{"the same limit under Kubernetes", opens(hgx(dockerDefaults)), []string{"KUBERNETES_SERVICE_HOST=10.96.0.1", "PET_NNODES=2"}, true,
			"rdma-memlock", "warn", false, []string{"RLIMIT_MEMLOCK is 64 KiB", "LimitMEMLOCK=infinity", "IPC_LOCK"}, nil, nil},
		{"no nvidia_peermem on a kernel before DMA-BUF", opens(hgx(nil)), []string{"KUBERNETES_SERVICE_HOST=10.96.0.1", "PET_NNODES=2"}, true,
			"gpudirect-rdma", "warn", false, []string{"GPUDirect RDMA is off", "Linux 5.4.0-150-generic predates 5.12", "driver.rdma.enabled=true"},
			nil, map[string]string{"/proc/sys/kernel/osrelease": "5.4.0-150-generic\n"}},
		{"nvidia_peermem loaded, NCCL too old to see it", opens(hgx(func(n *rdmatest.Node) { n.Peermem = []string{"/sys/module/nvidia_peermem/version"} })),
			slurmTwoNodes, true, "gpudirect-rdma", "warn", false, []string{"nvidia_peermem is loaded", "NCCL 2.21.5", "2.23.4 or later"}, nil, nil},
		{"HCAs on one socket only: GPUs beyond NCCL_NET_GDR_LEVEL", opens(hgx(func(n *rdmatest.Node) {
			n.Peermem, n.HCAs = []string{"/sys/kernel/mm/memory_peers/nv_mem/version"}, n.HCAs[4:]
		})), slurmTwoNodes, true, "gpudirect-rdma", "warn", false,
			[]string{"farther from every NIC than NCCL_NET_GDR_LEVEL=PXB", "0000:18:00.0 (nearest mlx5_4: SYS)", "under the same PCIe switch"}, nil, nil},
		{"NCCL_IB_GID_INDEX names an empty GID entry", opens(rdmatest.RoCE()), append([]string{"NCCL_IB_GID_INDEX=5"}, slurmTwoNodes...), true,
			"nccl-transport", "error", false, []string{"NCCL_IB_GID_INDEX=5", "empty GID entry", "mlx5_0:1, mlx5_0:2", "show_gids"}, nil, nil},
		{"an IOMMU translating the GPUs' DMA", hgx(func(n *rdmatest.Node) {
			for i := range n.GPUs {
				n.GPUs[i].IOMMU = "DMA-FQ"
			}
		}), nil, false, "gpu-p2p", "warn", false, []string{"IOMMU translates", "0000:18:00.0 (DMA-FQ)", "iommu=pt"}, nil, nil},
		{"CPUs of one socket, GPUs on both", hgx(func(n *rdmatest.Node) {
			n.Status = strings.Replace(rdmatest.StatusRoot, "Cpus_allowed_list:\t0-111", "Cpus_allowed_list:\t0-55", 1)
		}), slurmTwoNodes, false, "gpu-p2p", "info", false, []string{"(0-55) is local to 0000:9a:00.0", "0000:db:00.0", "--gpu-bind=closest"}, nil, nil},
	}
	img := ncclImage(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root {
				needRoot(t, "mknod of /dev/infiniband/uverbsN")
			}
			image := img
			if len(tt.without) > 0 {
				image = filepath.Join(t.TempDir(), "image")
				if out, err := exec.Command("cp", "-a", img, image).CombinedOutput(); err != nil {
					t.Fatalf("copying %s: %v\n%s", img, err, out)
				}
				for _, f := range tt.without {
					if err := os.Remove(filepath.Join(image, f)); err != nil {
						t.Fatal(err)
					}
				}
			}
			env := rankEnv(t, image, tt.node, tt.env...)
			for p, content := range tt.host {
				f := filepath.Join(envValue(env, "PREFLIGHT_HOST_ROOT"), p)
				if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rec, r := checkJSON(t, env)
			status, text := finding(t, rec, tt.id)
			if status != tt.status {
				t.Fatalf("%s %s, want %s: %s", tt.id, status, tt.status, text)
			}
			for _, want := range tt.says {
				if !strings.Contains(text, want) {
					t.Errorf("%s does not say %q: %s", tt.id, want, text)
				}
			}
			want := map[string]int{"warn": 0, "error": abortCode}[tt.status]
			if tt.nodeFault {
				want = nodeFaultCode
			}
			if r.code != want || rec.Decision.NodeFault != tt.nodeFault {
				t.Errorf("exit %d, node fault %v; want %d, %v\nstderr: %s", r.code, rec.Decision.NodeFault, want, tt.nodeFault, r.stderr)
			}
			if tt.status != "warn" {
				return
			}
			strict := run(t, 30*time.Second, append(env, "PREFLIGHT_POLICY=strict"), shimBin(t), "--", "sh", "-c", "echo ran")
			term, _ := os.ReadFile(envValue(env, "PREFLIGHT_TERMINATION_LOG"))
			if strict.code != abortCode || strict.stdout != "" || !strings.Contains(string(term), tt.id) {
				t.Errorf("under strict: exit %d, stdout %q, termination message %q; want %d naming %s\nstderr: %s",
					strict.code, strict.stdout, term, abortCode, tt.id, strict.stderr)
			}
		})
	}
}

// A job on one node uses no network: the same node gives no transport
// finding, and the record still carries the prediction.
func TestSingleNodeJobGetsNoTransportFinding(t *testing.T) {
	env := rankEnv(t, ncclImage(t), rdmatest.HGX(1, "InfiniBand", "400 Gb/sec (4X NDR)"), "WORLD_SIZE=8", "LOCAL_WORLD_SIZE=8")
	rec, r := checkJSON(t, env)
	for _, id := range []string{"nccl-transport", "gpudirect-rdma", "rdma-memlock"} {
		if status, text := finding(t, rec, id); status != "skip" {
			t.Errorf("%s %s on a single-node job: %s", id, status, text)
		}
	}
	if status, text := finding(t, rec, "gpu-p2p"); status != "pass" {
		t.Errorf("gpu-p2p %s: %s", status, text)
	}
	var transport struct {
		Host struct {
			Transport struct {
				Prediction struct {
					Network string
					Causes  []struct{ Code string }
				}
				HCAs []struct{ Name string }
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &transport); err != nil {
		t.Fatal(err)
	}
	p := transport.Host.Transport.Prediction
	if r.code != 0 || p.Network != "Socket" || len(p.Causes) != 1 || p.Causes[0].Code != "rdma-device-not-passed" || len(transport.Host.Transport.HCAs) != 8 {
		t.Errorf("exit %d, host.transport %+v; want exit 0 and the prediction on the eight HCAs", r.code, transport.Host.Transport)
	}
}

// A multi-node job on a node whose HCAs open, with nvidia_peermem loaded,
// is predicted on NET/IB with GPUDirect RDMA on every HCA: no finding, and
// the record carries the prediction.
func TestHealthyIBNodePredictsIBWithGPUDirect(t *testing.T) {
	needRoot(t, "mknod of /dev/infiniband/uverbsN")
	n := rdmatest.HGX(1, "InfiniBand", "400 Gb/sec (4X NDR)")
	n.Nodes, n.Opens, n.Peermem = true, true, []string{"/sys/kernel/mm/memory_peers/nv_mem/version"}
	env := rankEnv(t, ncclImage(t), n, slurmTwoNodes...)
	rec, r := checkJSON(t, env)
	for _, id := range []string{"nccl-transport", "gpudirect-rdma", "rdma-memlock", "gpu-p2p"} {
		if status, text := finding(t, rec, id); status != "pass" {
			t.Errorf("%s %s: %s", id, status, text)
		}
	}
	var transport struct {
		Host struct {
			Transport struct {
				Prediction struct {
					Network, LinkLayer, GDR, Summary string
					Devices                          []string
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &transport); err != nil {
		t.Fatal(err)
	}
	p := transport.Host.Transport.Prediction
	if r.code != 0 || p.Network != "IB" || p.LinkLayer != "InfiniBand" || p.GDR != "peermem" || len(p.Devices) != 8 || p.Devices[7] != "mlx5_7:1" {
		t.Errorf("exit %d, prediction %+v; want NET/IB with nvidia_peermem on mlx5_0:1 to mlx5_7:1", r.code, p)
	}
}

// A device cgroup that does not allow /dev/infiniband, as a bind mount
// without Docker's --device leaves it, makes the open fail with EPERM:
// the binary, run by runc in such a container, says the devices are
// denied and how each launcher allows them.
func TestDeviceCgroupDenialEndToEnd(t *testing.T) {
	needRoot(t, "runc applies a device cgroup")
	if _, err := exec.LookPath("runc"); err != nil {
		t.Fatal("runc is needed to apply a device cgroup (scripts/deps.sh installs it):", err)
	}
	n := rdmatest.HGX(1, "InfiniBand", "400 Gb/sec (4X NDR)")
	n.Nodes = true
	env := rankEnv(t, ncclImage(t), n, "WORLD_SIZE=16", "LOCAL_WORLD_SIZE=8")
	r := runInContainer(t, env, shimBin(t), "check", "--json")
	var rec record
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
		t.Fatalf("exit %d, no record: %v\nstdout: %s\nstderr: %s", r.code, err, r.stdout, r.stderr)
	}
	status, text := finding(t, rec, "nccl-transport")
	for _, want := range []string{"may not open (device cgroup)", "/dev/infiniband/uverbs0: EPERM", "--device=/dev/infiniband/uverbsN", "--device-cgroup-rule"} {
		if !strings.Contains(text, want) {
			t.Errorf("nccl-transport does not say %q: %s", want, text)
		}
	}
	if status != "warn" || r.code != 0 {
		t.Errorf("nccl-transport %s, exit %d; want a warning and exit 0", status, r.code)
	}
}

// runInContainer runs bin in a runc container over this machine's /usr,
// /etc, /tmp and the repository (where bin is built), whose device cgroup
// allows only the memory devices (null, zero, random, urandom).
func runInContainer(t *testing.T, env []string, bin string, args ...string) result {
	t.Helper()
	bundle := t.TempDir()
	rootfs := filepath.Join(bundle, "rootfs")
	repo := harness.Root(t)
	for _, d := range []string{"usr", "etc", "tmp", "proc", "dev", repo} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range []string{"bin", "lib", "lib64", "sbin"} {
		if err := os.Symlink("usr/"+l, filepath.Join(rootfs, l)); err != nil {
			t.Fatal(err)
		}
	}
	rules := []map[string]any{{"allow": false, "access": "rwm"}}
	for _, minor := range []int{3, 5, 8, 9} {
		rules = append(rules, map[string]any{"allow": true, "type": "c", "major": 1, "minor": minor, "access": "rwm"})
	}
	bind := func(dir string, opts ...string) map[string]any {
		return map[string]any{"destination": dir, "type": "bind", "source": dir, "options": append([]string{"rbind"}, opts...)}
	}
	spec := map[string]any{
		"ociVersion": "1.0.2",
		"process":    map[string]any{"args": append([]string{bin}, args...), "env": env, "cwd": "/", "user": map[string]int{"uid": 0, "gid": 0}},
		"root":       map[string]any{"path": "rootfs", "readonly": true},
		"mounts": []map[string]any{
			{"destination": "/proc", "type": "proc", "source": "proc"},
			{"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": []string{"nosuid", "mode=755"}},
			bind("/usr", "ro"), bind("/etc", "ro"), bind("/tmp"), bind(repo, "ro"),
		},
		"linux": map[string]any{
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
	id := "e2e-" + filepath.Base(filepath.Dir(bundle))
	t.Cleanup(func() { exec.Command("runc", "delete", "--force", id).Run() })
	return runCmd(t, exec.Command("runc", "run", "--bundle", bundle, id), 30*time.Second)
}

// A job started by its command's launcher (torchrun --nnodes=2, the
// ENTRYPOINT's argument) has no launcher variable yet: the command says
// it spans nodes, and the transport's findings speak; --nnodes=1 says it
// does not.
func TestTorchrunNNodesMakesTheJobMultiNode(t *testing.T) {
	img := ncclImage(t)
	for _, tc := range []struct {
		nnodes string
		want   string
	}{{"--nnodes=2", "warn"}, {"--nnodes=1:4", "warn"}, {"--nnodes=1", "skip"}} {
		env := rankEnv(t, img, rdmatest.HGX(1, "InfiniBand", "400 Gb/sec (4X NDR)"), "PREFLIGHT_POLICY=warn")
		dir := t.TempDir()
		env = append(withoutVar(env, "PREFLIGHT_PROVENANCE_DIR"), "PREFLIGHT_PROVENANCE_DIR="+dir)
		r := run(t, 30*time.Second, env, shimBin(t), "--", "torchrun", tc.nnodes, "--nproc-per-node=8", "train.py")
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		if len(files) != 1 {
			t.Fatalf("%s: records %v (exit %d)\nstderr: %s", tc.nnodes, files, r.code, r.stderr)
		}
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		var rec record
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		status, text := finding(t, rec, "nccl-transport")
		if status != tc.want {
			t.Errorf("torchrun %s: nccl-transport %s: %s", tc.nnodes, status, text)
		}
	}
}
