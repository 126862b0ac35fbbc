package transport

import (
	"fmt"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/nccl"
)

// hgx is a healthy rank of an 8-GPU node: eight InfiniBand HCAs that
// open, each beside a GPU under the same switch, Debian's libibverbs and
// mlx5 provider in the image, nvidia_peermem loaded, no memory limit.
func hgx() facts.Transport {
	f := facts.Transport{
		Addresses: []nccl.Address{
			{Interface: "lo", Index: 1, Prefix: netip.MustParsePrefix("127.0.0.1/8"), Running: true},
			{Interface: "eth0", Index: 2, Prefix: netip.MustParsePrefix("10.0.0.2/24"), Running: true},
		},
		Links:   []facts.Interface{{Name: "lo", Index: 1, Up: true, Running: true}, {Name: "eth0", Index: 2, Up: true, Running: true, Kind: "veth"}},
		Process: facts.RankProcess{UID: 0, MemlockSoft: -1, MemlockHard: -1, CapBnd: 0x1ffffffffff, CPUs: "0-111"},
		Kernel:  facts.RDMAKernel{Release: "6.8.0-45-generic", Peermem: []string{"/sys/kernel/mm/memory_peers/nv_mem/version"}, DriverVersion: "550.90.07"},
		Image: facts.RDMAImage{NCCL: "/usr/lib/x86_64-linux-gnu/libnccl.so.2",
			Verbs:    facts.LoadedLibrary{Name: "libibverbs.so.1", Path: "/usr/lib/x86_64-linux-gnu/libibverbs.so.1"},
			RDMACore: 44, VerbsABI: 14, Configured: []string{"mlx5", "efa"},
			Providers: []facts.VerbsProvider{{Name: "mlx5", Library: facts.LoadedLibrary{Path: "/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so"}}},
			Plugins:   []facts.NetPlugin{{Names: []string{"libnccl-net.so"}, Library: facts.LoadedLibrary{Name: "libnccl-net.so"}}}},
		NCCL: facts.NCCLConfig{Version: "2.22.3", Settings: nccl.Settings{}},
	}
	for i := range 8 {
		sw := fmt.Sprintf("pci0000:%02x/0000:%02x:01.0/0000:%02x:00.0", 0x10+0x20*i, 0x10+0x20*i, 0x11+0x20*i)
		place := func(fn string) nccl.PCIDevice {
			return nccl.PCIDevice{Path: strings.Split(sw+fn, "/"), NUMANode: i / 4}
		}
		f.GPUs = append(f.GPUs, facts.GPUPlacement{Address: fmt.Sprintf("0000:%02x:00.0", 0x13+0x20*i), PCI: place(fmt.Sprintf("/0000:%02x:01.0/0000:%02x:00.0", 0x12+0x20*i, 0x13+0x20*i)),
			IOMMU: "identity", LocalCPUs: []string{"0-55", "56-111"}[i/4]})
		f.HCAs = append(f.HCAs, facts.HCA{Name: fmt.Sprintf("mlx5_%d", i), Driver: "mlx5_core", Vendor: "0x15b3",
			PCI: place(fmt.Sprintf("/0000:%02x:02.0/0000:%02x:00.0", 0x12+0x20*i, 0x14+0x20*i)), Verbs: fmt.Sprintf("uverbs%d", i),
			Node:  facts.UverbsNode{Path: fmt.Sprintf("/dev/infiniband/uverbs%d", i), Open: facts.UverbsOK},
			Ports: []facts.HCAPort{{Num: 1, State: "ACTIVE", PhysState: "LinkUp", LinkLayer: facts.LinkInfiniBand, Rate: "400 Gb/sec (4X NDR)"}}})
	}
	return f
}

var multiNode = Job{MultiNode: true, Evidence: "SLURM_JOB_NUM_NODES=4", Launcher: Slurm}

func set(f *facts.Transport, name, value string) {
	f.NCCL.Settings[name] = nccl.Setting{Value: value, Source: nccl.SourceEnvironment}
}

func TestHealthyNodeIsNETIBWithGPUDirect(t *testing.T) {
	pred, verdicts := evaluate(hgx(), multiNode)
	if pred.Network != facts.NetIB || len(pred.Devices) != 8 || pred.Devices[7] != "mlx5_7:1" || pred.LinkLayer != facts.LinkInfiniBand || pred.GDR != "peermem" || pred.Bootstrap != "eth0" {
		t.Errorf("prediction %+v", pred)
	}
	if want := "NET/IB on mlx5_0:1, mlx5_1:1, mlx5_2:1, mlx5_3:1, mlx5_4:1, mlx5_5:1, mlx5_6:1, mlx5_7:1 (InfiniBand), GPUDirect RDMA through nvidia_peermem"; pred.Summary != want {
		t.Errorf("summary %q\nwant    %q", pred.Summary, want)
	}
	for _, v := range verdicts {
		if v.Status != StatusPass {
			t.Errorf("%s: %s %q", v.Check, v.Status, v.Message)
		}
	}
}

// Each cause, on the healthy node changed as a real node would be, gives
// its code, its check's status and the network NCCL falls back to.
func TestEachCauseGivesItsFinding(t *testing.T) {
	cases := []struct {
		name    string
		change  func(*facts.Transport)
		code    string
		status  string
		network string
	}{
		{"devices not passed", func(f *facts.Transport) { eachHCA(f, func(h *facts.HCA) { h.Node.Open = "ENOENT" }) }, "rdma-device-not-passed", StatusWarn, facts.NetSocket},
		{"device cgroup", func(f *facts.Transport) { eachHCA(f, func(h *facts.HCA) { h.Node.Open = "EPERM" }) }, "rdma-device-denied", StatusWarn, facts.NetSocket},
		{"no ib_uverbs", func(f *facts.Transport) { eachHCA(f, func(h *facts.HCA) { h.Node.Open = "ENXIO" }) }, "rdma-driver-not-loaded", StatusWarn, facts.NetSocket},
		{"no uverbs device", func(f *facts.Transport) { eachHCA(f, func(h *facts.HCA) { h.Verbs = "" }) }, "rdma-driver-not-loaded", StatusWarn, facts.NetSocket},
		{"one device denied", func(f *facts.Transport) { f.HCAs[3].Node.Open = "EPERM" }, "rdma-device-denied", StatusWarn, facts.NetIB},
		{"every port down", func(f *facts.Transport) {
			eachHCA(f, func(h *facts.HCA) { h.Ports[0].State, h.Ports[0].PhysState = "DOWN", "Polling" })
		}, "ports-down", StatusError, facts.NetSocket},
		{"a spare port down", func(f *facts.Transport) { f.HCAs[7].Ports[0].State = "DOWN" }, "port-down", StatusInfo, facts.NetIB},
		{"NCCL_IB_HCA names none", func(f *facts.Transport) { set(f, nccl.IBHCA, "mlx6") }, "ib-hca-unmatched", StatusError, facts.NetSocket},
		{"NCCL_SOCKET_IFNAME names none", func(f *facts.Transport) { set(f, nccl.SocketIfname, "eth9") }, "socket-interface-unmatched", StatusError, ""},
		{"NCCL_NET=IB without IB", func(f *facts.Transport) { set(f, nccl.Net, "IB"); f.HCAs = nil }, "net-unavailable", StatusError, ""},
		{"NCCL_NET_PLUGIN not found", func(f *facts.Transport) {
			set(f, nccl.NetPlugin, "ofi")
			f.Image.Plugins = []facts.NetPlugin{{Names: []string{"ofi", "libnccl-net-ofi.so"}}}
		}, "net-plugin-missing", StatusError, facts.NetIB},
		{"no libibverbs", func(f *facts.Transport) { f.Image.Verbs = facts.LoadedLibrary{Name: "libibverbs.so.1"} }, "libibverbs-missing", StatusWarn, facts.NetSocket},
		{"no mlx5 provider", func(f *facts.Transport) { f.Image.Configured = []string{"efa"} }, "rdma-provider-missing", StatusWarn, facts.NetSocket},
		{"NCCL_IB_DISABLE", func(f *facts.Transport) { set(f, nccl.IBDisable, "1") }, "ib-disabled", StatusInfo, facts.NetSocket},
		{"no HCA", func(f *facts.Transport) { f.HCAs = nil }, "no-rdma-device", StatusInfo, facts.NetSocket},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := hgx()
			c.change(&f)
			pred, verdicts := evaluate(f, multiNode)
			v := verdicts[0]
			if !slices.Contains(v.Codes, c.code) || v.Status != c.status || pred.Network != c.network {
				t.Errorf("codes %q, status %s, network %q; want %s, %s, %q\n%s", v.Codes, v.Status, pred.Network, c.code, c.status, c.network, v.Message)
			}
			if v.Remedy == "" {
				t.Error("no remedy")
			}
		})
	}
}

func eachHCA(f *facts.Transport, change func(*facts.HCA)) {
	for i := range f.HCAs {
		change(&f.HCAs[i])
	}
}

// A node fault is a finding of its own kind: the node-fault exit code.
func TestEveryPortDownIsANodeFault(t *testing.T) {
	f := hgx()
	eachHCA(&f, func(h *facts.HCA) { h.Ports[0].State = "DOWN" })
	_, verdicts := evaluate(f, multiNode)
	if !verdicts[0].NodeFault {
		t.Errorf("%+v", verdicts[0])
	}
}

// NCCL_IB_HCA's names are prefixes: "mlx5_1" takes mlx5_1 and, on a node
// with more, mlx5_10 to mlx5_17; "=mlx5_1" takes only mlx5_1.
func TestHCAFilterIsNCCLs(t *testing.T) {
	f := hgx()
	f.HCAs = append(f.HCAs, facts.HCA{Name: "mlx5_10", Driver: "mlx5_core", Verbs: "uverbs10", Node: facts.UverbsNode{Open: facts.UverbsOK},
		Ports: []facts.HCAPort{{Num: 1, State: "ACTIVE", LinkLayer: facts.LinkInfiniBand}}})
	for value, want := range map[string][]string{"mlx5_1": {"mlx5_1:1", "mlx5_10:1"}, "=mlx5_1": {"mlx5_1:1"}, "^mlx5_0,mlx5_1": {"mlx5_2:1", "mlx5_3:1", "mlx5_4:1", "mlx5_5:1", "mlx5_6:1", "mlx5_7:1"}} {
		g := f
		g.NCCL.Settings = nccl.Settings{}
		set(&g, nccl.IBHCA, value)
		if pred := Predict(g); !slices.Equal(pred.Devices, want) {
			t.Errorf("NCCL_IB_HCA=%s: %q, want %q", value, pred.Devices, want)
		}
	}
}

func TestGPUDirectRDMA(t *testing.T) {
	cases := []struct {
		name   string
		change func(*facts.Transport)
		gdr    string
		code   string
		status string
	}{
		{"no peermem, old kernel", func(f *facts.Transport) { f.Kernel.Peermem, f.Kernel.Release = nil, "5.4.0-150-generic" }, "", "gdr-off", StatusWarn},
		{"nvidia_peermem unseen by 2.22", func(f *facts.Transport) { f.Kernel.Peermem = []string{"/sys/module/nvidia_peermem/version"} }, "", "peermem-unseen", StatusWarn},
		{"nvidia_peermem seen by 2.23.4", func(f *facts.Transport) {
			f.Kernel.Peermem = []string{"/sys/module/nvidia_peermem/version"}
			f.NCCL.Version = "2.23.4"
		}, "peermem", "", StatusPass},
		{"DMA-BUF with the open module", func(f *facts.Transport) { f.Kernel.Peermem, f.Kernel.OpenModule = nil, true }, "dmabuf", "", StatusPass},
		{"DMA-BUF, proprietary module", func(f *facts.Transport) { f.Kernel.Peermem = nil }, "", "dmabuf-unconfirmed", StatusInfo},
		{"DMA-BUF turned off", func(f *facts.Transport) {
			f.Kernel.Peermem, f.Kernel.OpenModule = nil, true
			set(f, nccl.DMABufEnable, "0")
		}, "", "gdr-off", StatusWarn},
		{"rdma-core before 34", func(f *facts.Transport) { f.Kernel.Peermem, f.Kernel.OpenModule, f.Image.VerbsABI = nil, true, 11 }, "", "gdr-off", StatusWarn},
		{"GDR level below the distance", func(f *facts.Transport) { set(f, nccl.NetGDRLevel, "LOC") }, "peermem", "gdr-distance", StatusWarn},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := hgx()
			c.change(&f)
			pred, verdicts := evaluate(f, multiNode)
			v := verdicts[1]
			if pred.GDR != c.gdr || v.Status != c.status || c.code != "" && !slices.Contains(v.Codes, c.code) {
				t.Errorf("GDR %q, %s %q; want %q, %s %s", pred.GDR, v.Status, v.Codes, c.gdr, c.status, c.code)
			}
		})
	}
}

func TestLockedMemoryNeedsIPCLockOrNoLimit(t *testing.T) {
	cases := []struct {
		name string
		p    facts.RankProcess
		warn bool
	}{
		{"unlimited", facts.RankProcess{UID: 1000, MemlockSoft: -1}, false},
		{"root with IPC_LOCK in its bounding set", facts.RankProcess{UID: 0, MemlockSoft: 8 << 20, CapBnd: 1 << capIPCLock}, false},
		{"root without", facts.RankProcess{UID: 0, MemlockSoft: 8 << 20, CapBnd: 0x1ffffffffff &^ (1 << capIPCLock)}, true},
		{"a user with IPC_LOCK effective but not ambient", facts.RankProcess{UID: 1000, MemlockSoft: 64 << 10, CapEff: 1 << capIPCLock}, true},
		{"a user with ambient IPC_LOCK", facts.RankProcess{UID: 1000, MemlockSoft: 64 << 10, CapAmb: 1 << capIPCLock}, false},
	}
	for _, c := range cases {
		f := hgx()
		f.Process = c.p
		_, verdicts := evaluate(f, multiNode)
		if got := verdicts[2].Status == StatusWarn; got != c.warn {
			t.Errorf("%s: %s %q", c.name, verdicts[2].Status, verdicts[2].Message)
		}
	}
}

func TestPeerToPeerIsCheckedOnOneNodeToo(t *testing.T) {
	f := hgx()
	f.GPUs[0].IOMMU, f.GPUs[5].IOMMU = "DMA-FQ", "DMA"
	f.Process.CPUs = "0-55"
	_, verdicts := evaluate(f, Job{Launcher: Docker})
	for _, v := range verdicts[:3] {
		if v.Status != StatusSkip {
			t.Errorf("%s on one node: %s", v.Check, v.Status)
		}
	}
	if v := verdicts[3]; v.Status != StatusWarn || !slices.Equal(v.Codes, []string{"iommu-translated", "numa-remote"}) {
		t.Errorf("p2p: %s %q %s", v.Status, v.Codes, v.Message)
	}
}

func TestRoCEGIDIndexMustNameAnEntry(t *testing.T) {
	f := hgx()
	gids := []nccl.GID{{Index: 0, GID: netip.MustParseAddr("fe80::1"), Type: "IB/RoCE v1"}, {Index: 3, GID: netip.MustParseAddr("::ffff:10.0.0.5"), Type: "RoCE v2"}}
	eachHCA(&f, func(h *facts.HCA) { h.Ports[0].LinkLayer, h.Ports[0].GIDs = facts.LinkEthernet, gids })
	for value, bad := range map[string]bool{"3": false, "9": true} {
		set(&f, nccl.IBGIDIndex, value)
		_, verdicts := evaluate(f, multiNode)
		if got := slices.Contains(verdicts[0].Codes, "gid-index-empty"); got != bad {
			t.Errorf("NCCL_IB_GID_INDEX=%s: %q", value, verdicts[0].Codes)
		}
	}
}

func TestEFAWithoutPluginFallsBackToSockets(t *testing.T) {
	f := hgx()
	f.HCAs = []facts.HCA{{Name: "rdmap16s27", Driver: "efa", Vendor: "0x1d0f", Verbs: "uverbs0", Node: facts.UverbsNode{Open: facts.UverbsOK},
		Ports: []facts.HCAPort{{Num: 1, State: "ACTIVE", LinkLayer: "Unknown"}}}}
	pred, verdicts := evaluate(f, multiNode)
	if pred.Network != facts.NetSocket || !slices.Contains(verdicts[0].Codes, "efa-plugin-missing") || slices.Contains(verdicts[0].Codes, "no-rdma-device") {
		t.Errorf("%+v %q", pred, verdicts[0].Codes)
	}
}

// NCCL 2.22's default takes the first interface not named docker* or lo*:
// on a host network, a libvirt bridge before the NIC.
func TestDefaultSocketOnAVirtualInterfaceIsFound(t *testing.T) {
	f := hgx()
	f.HCAs = nil
	f.Links = []facts.Interface{{Name: "lo", Index: 1, Running: true}, {Name: "virbr0", Index: 2, Running: true, Kind: "bridge"}, {Name: "eno1", Index: 3, Running: true}}
	f.Addresses = []nccl.Address{
		{Interface: "lo", Index: 1, Prefix: netip.MustParsePrefix("127.0.0.1/8"), Running: true},
		{Interface: "virbr0", Index: 2, Prefix: netip.MustParsePrefix("192.168.122.1/24"), Running: true},
		{Interface: "eno1", Index: 3, Prefix: netip.MustParsePrefix("192.168.1.10/24"), Running: true},
	}
	pred, verdicts := evaluate(f, multiNode)
	if pred.Interfaces[0] != "virbr0" || !slices.Contains(verdicts[0].Codes, "socket-virtual-interface") {
		t.Errorf("%+v %q", pred, verdicts[0].Codes)
	}
	f.NCCL.Version = "2.29.7"
	if pred := Predict(f); pred.Interfaces[0] != "eno1" {
		t.Errorf("2.29.7 takes %s, want eno1", pred.Interfaces[0])
	}
}

func TestNoNCCLNoPrediction(t *testing.T) {
	f := hgx()
	f.Image.NCCL = ""
	pred, verdicts := evaluate(f, multiNode)
	if pred.Network != "" || verdicts[0].Status != StatusPass || !strings.Contains(pred.Summary, "no NCCL") {
		t.Errorf("%+v %+v", pred, verdicts[0])
	}
}

// Every cause a rule can give is in the table, under a check, with a
// remedy for every launcher.
func TestEveryCauseHasARemedyForEveryLauncher(t *testing.T) {
	for code, c := range Causes() {
		if c.Check == "" {
			t.Errorf("%s has no check", code)
		}
		for _, l := range []Launcher{Docker, Kubernetes, Slurm} {
			if c.RemedyFor(l) == "" {
				t.Errorf("%s has no remedy for %s", code, l)
			}
		}
	}
}

var addCall = regexp.MustCompile(`a\.add\("([a-z0-9-]+)"`)

// Every code a rule reports is a row of Causes.
func TestEveryCodeReportedIsACause(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range addCall.FindAllStringSubmatch(string(b), -1) {
			n++
			if _, ok := Causes()[m[1]]; !ok {
				t.Errorf("%s reports %q, which Causes lacks", name, m[1])
			}
		}
	}
	for _, c := range nodeCauses {
		if _, ok := Causes()[c.code]; !ok {
			t.Errorf("devicesUnusable reports %q, which Causes lacks", c.code)
		}
	}
	if n+len(nodeCauses) < len(Causes()) {
		t.Errorf("found %d reports of %d causes", n+len(nodeCauses), len(Causes()))
	}
}

// evaluate is the prediction and every check's verdict on it.
func evaluate(f facts.Transport, job Job) (facts.TransportPrediction, []Verdict) {
	pred := Predict(f)
	var out []Verdict
	for _, c := range Checks {
		out = append(out, Evaluate(c, pred, job))
	}
	return pred, out
}
