package rdma

import (
	"fmt"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/nccl"
	"github.com/gpu-preflight/gpu-preflight/preflight/rdma/rdmatest"
)

// layout writes n into a new directory and returns it as a host root.
func layout(t testing.TB, n rdmatest.Node) fsroot.Root {
	t.Helper()
	dir := t.TempDir()
	if err := rdmatest.Layout(dir, n); err != nil {
		t.Fatal(err)
	}
	return fsroot.Root(dir)
}

// hgxGPUs are the HGX fixture's GPUs as NVML names them.
func hgxGPUs() []string {
	var out []string
	for _, g := range rdmatest.HGX(1, "InfiniBand", "").GPUs {
		out = append(out, "0000"+strings.ToUpper(path.Base(g.Path)))
	}
	return out
}

func TestHCAsPortsAndPlacementAreReadAsSysfsLaysThemOut(t *testing.T) {
	root := layout(t, rdmatest.HGX(1, "InfiniBand", "400 Gb/sec (4X NDR)"))
	f, warns := Gather(Options{Host: root, Image: root, GPUs: hgxGPUs()})
	if len(warns) > 0 {
		t.Errorf("warnings: %q", warns)
	}
	if len(f.HCAs) != 8 || len(f.GPUs) != 8 {
		t.Fatalf("%d HCAs, %d GPUs; want 8 of each", len(f.HCAs), len(f.GPUs))
	}
	h := f.HCAs[3]
	want := facts.HCAPort{Num: 1, State: "ACTIVE", PhysState: "LinkUp", LinkLayer: "InfiniBand", Rate: "400 Gb/sec (4X NDR)"}
	if h.Name != "mlx5_3" || h.Driver != "mlx5_core" || h.Vendor != "0x15b3" || h.Verbs != "uverbs3" || len(h.Ports) != 1 || h.Ports[0].State != want.State ||
		h.Ports[0].PhysState != want.PhysState || h.Ports[0].LinkLayer != want.LinkLayer || h.Ports[0].Rate != want.Rate {
		t.Errorf("mlx5_3 read as %+v", h)
	}
	if h.Node.Path != "/dev/infiniband/uverbs3" || h.Node.Open != "ENOENT" {
		t.Errorf("mlx5_3's node: %+v, want /dev/infiniband/uverbs3 ENOENT", h.Node)
	}
	if h.IOMMU != "identity" || h.PCI.NUMANode != 0 || len(h.PCI.SwitchIDs) != 2 {
		t.Errorf("mlx5_3's placement: iommu %q, %+v", h.IOMMU, h.PCI)
	}
	if g := f.GPUs[3]; g.Address != "0000:5d:00.0" || g.LocalCPUs != "0-55" || nccl.Distance(g.PCI, h.PCI) != nccl.PathPIX {
		t.Errorf("GPU 3 %+v is %s from mlx5_3, want PIX", g, nccl.Distance(g.PCI, h.PCI))
	}
	if d := nccl.Distance(f.GPUs[0].PCI, f.HCAs[7].PCI); d != nccl.PathSYS {
		t.Errorf("GPU 0 to mlx5_7 across NUMA nodes: %s, want SYS", d)
	}
	if f.Process.UID != 0 || f.Process.MemlockSoft != -1 || f.Process.CapBnd>>14&1 != 1 || f.Process.CPUs != "0-111" {
		t.Errorf("process: %+v", f.Process)
	}
}

func TestRoCEPortsKeepTheirPopulatedGIDs(t *testing.T) {
	root := layout(t, rdmatest.RoCE())
	f, _ := Gather(Options{Host: root, Image: root})
	if len(f.HCAs) != 1 || len(f.HCAs[0].Ports) != 2 {
		t.Fatalf("HCAs %+v", f.HCAs)
	}
	gids := f.HCAs[0].Ports[1].GIDs
	var got []string
	for _, g := range gids {
		got = append(got, fmt.Sprintf("%d %s %s", g.Index, g.GID, g.Type))
	}
	want := []string{"0 fe80::ba59:9fff:fe2e:1a01 IB/RoCE v1", "1 fe80::ba59:9fff:fe2e:1a01 RoCE v2",
		"2 ::ffff:10.10.2.5 IB/RoCE v1", "3 ::ffff:10.10.2.5 RoCE v2"}
	if !slices.Equal(got, want) {
		t.Errorf("GIDs %q\nwant %q", got, want)
	}
	if i, _ := nccl.RoCEGIDIndex(gids, nccl.Settings{}); i != 3 {
		t.Errorf("NCCL's search takes GID %d, want 3 (IPv4, RoCE v2)", i)
	}
}

// prometheus/procfs's fixtures (testdata/fixtures.ttar) lay out
// /sys/class/infiniband/<hca> as plain directories with no device link:
// the ports are still read, the placement is unknown.
func TestClassDirectoryWithoutDeviceLinkStillHasPorts(t *testing.T) {
	dir := t.TempDir()
	root := fsroot.Root(dir)
	for p, content := range map[string]string{
		"/sys/class/infiniband/mlx4_0/ports/1/state":      "4: ACTIVE\n",
		"/sys/class/infiniband/mlx4_0/ports/1/phys_state": "5: LinkUp\n",
		"/sys/class/infiniband/mlx4_0/ports/1/link_layer": "InfiniBand\n",
		"/sys/class/infiniband/mlx4_0/ports/1/rate":       "40 Gb/sec (4X QDR)\n",
		"/sys/class/infiniband/mlx4_0/ports/2/state":      "1: DOWN\n",
		"/sys/class/infiniband/mlx4_0/ports/2/phys_state": "3: Disabled\n",
		"/sys/class/infiniband/mlx4_0/ports/2/link_layer": "InfiniBand\n",
	} {
		writeFile(t, root, p, content)
	}
	f, warns := Gather(Options{Host: root, Image: root})
	if len(warns) > 0 {
		t.Errorf("warnings: %q", warns)
	}
	h := f.HCAs[0]
	if len(h.Ports) != 2 || h.Ports[1].State != "DOWN" || h.Ports[1].PhysState != "Disabled" || h.PCI.Path != nil || h.Verbs != "" {
		t.Errorf("mlx4_0: %+v", h)
	}
}

func TestPeermemProbesAreSeen(t *testing.T) {
	n := rdmatest.RoCE()
	n.Peermem = []string{"/sys/module/nvidia_peermem/version"}
	root := layout(t, n)
	f, _ := Gather(Options{Host: root, Image: root})
	if !slices.Equal(f.Kernel.Peermem, n.Peermem) {
		t.Errorf("peermem %q, want %q", f.Kernel.Peermem, n.Peermem)
	}
}

// A class entry whose link leads nowhere is an HCA without ports or
// placement, and nothing outside the host root is read for it.
func TestDanglingClassLinkReadsNothingElse(t *testing.T) {
	dir := t.TempDir()
	root := fsroot.Root(dir)
	if err := os.MkdirAll(root.Path("/sys/class/infiniband"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../devices/pci0000:00/0000:00:01.0/infiniband/mlx5_0", root.Path("/sys/class/infiniband/mlx5_0")); err != nil {
		t.Fatal(err)
	}
	f, warns := Gather(Options{Host: root, Image: root})
	if len(f.HCAs) != 1 || f.HCAs[0].Name != "mlx5_0" || f.HCAs[0].Ports != nil || f.HCAs[0].Driver != "" || f.HCAs[0].PCI.Path != nil {
		t.Errorf("HCAs %+v, warnings %q", f.HCAs, warns)
	}
}
