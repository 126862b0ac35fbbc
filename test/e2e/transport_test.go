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
	tests := []struct {
		name      string
		node      rdmatest.Node
		env       []string
		root      bool
		id        string
		status    string
		nodeFault bool
		says      []string
	}{
		{"devices not passed in, under Slurm", hgx(nil), slurmTwoNodes, false, "nccl-transport", "warn", false,
			[]string{"RDMA devices not in this container", "mlx5_7", "NET/Socket", "MELLANOX_VISIBLE_DEVICES=all"}},
		{"devices not passed in, under Kubernetes", hgx(nil), []string{"KUBERNETES_SERVICE_HOST=10.96.0.1", "PET_NNODES=2"}, false,
			"nccl-transport", "warn", false, []string{"RDMA devices not in this container", "resources.limits"}},
		{"no ib_uverbs: the nodes give ENXIO", hgx(func(n *rdmatest.Node) { n.Nodes = true }), slurmTwoNodes, true,
			"nccl-transport", "warn", false, []string{"without their kernel verbs driver", "ENXIO", "modprobe ib_uverbs"}},
		{"every port down", hgx(func(n *rdmatest.Node) {
			for i := range n.HCAs {
				n.HCAs[i].Ports[0].State, n.HCAs[i].Ports[0].PhysState = rdmatest.Down, rdmatest.Polling
			}
		}), slurmTwoNodes, false, "nccl-transport", "error", true, []string{"every port NCCL would use is down", "drain the node"}},
		{"a spare port down is reported, not a fault", hgx(func(n *rdmatest.Node) {
			for i := range n.HCAs {
				n.HCAs[i].Ports = append(n.HCAs[i].Ports, rdmatest.Port{State: rdmatest.Down, PhysState: rdmatest.Disabled, LinkLayer: "InfiniBand"})
			}
		}), slurmTwoNodes, false, "nccl-transport", "warn", false, []string{"ports down, left out by NCCL", "mlx5_0:2"}},
		{"NCCL_IB_HCA names no HCA", hgx(nil), append([]string{"NCCL_IB_HCA=mlx5_9"}, slurmTwoNodes...), false,
			"nccl-transport", "error", false, []string{`NCCL_IB_HCA="mlx5_9"`, "takes none of"}},
		{"NCCL_SOCKET_IFNAME names no interface", hgx(nil), append([]string{"NCCL_SOCKET_IFNAME==nosuch0"}, slurmTwoNodes...), false,
			"nccl-transport", "error", false, []string{`NCCL_SOCKET_IFNAME="=nosuch0"`, "no socket interface found"}},
		{"NCCL_NET_PLUGIN names a plugin the image lacks", hgx(nil), append([]string{"NCCL_NET_PLUGIN=aws-ofi"}, slurmTwoNodes...), false,
			"nccl-transport", "error", false, []string{`NCCL_NET_PLUGIN="aws-ofi"`, "libnccl-net-aws-ofi.so"}},
		{"EFA without aws-ofi-nccl", rdmatest.EFA(), slurmTwoNodes, false, "nccl-transport", "warn", false,
			[]string{"EFA adapters", "aws-ofi-nccl"}},
	}
	img := ncclImage(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root {
				needRoot(t, "mknod of /dev/infiniband/uverbsN")
			}
			env := rankEnv(t, img, tt.node, tt.env...)
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
