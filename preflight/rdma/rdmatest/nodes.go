package rdmatest

import "fmt"

// Port states as drivers/infiniband/core/sysfs.c prints them.
const (
	Active   = "4: ACTIVE"
	Down     = "1: DOWN"
	LinkUp   = "5: LinkUp"
	Disabled = "3: Disabled"
	Polling  = "2: Polling"
)

// A root process's files (proc(5)): every capability, no memlock limit.
const (
	StatusRoot = "Name:\tgpu-preflight\nUmask:\t0022\nState:\tR (running)\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n" +
		"CapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\nCapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\n" +
		"CapAmb:\t0000000000000000\nNoNewPrivs:\t0\nCpus_allowed:\tffff,ffffffff,ffffffff\nCpus_allowed_list:\t0-111\n"
	LimitsUnlimited = "Limit                     Soft Limit           Hard Limit           Units     \n" +
		"Max open files            1048576              1048576              files     \n" +
		"Max locked memory         unlimited            unlimited            bytes     \n"
)

// broadcomTop and broadcomSub are the PCI ids of a Broadcom PEX Gen5
// switch's two levels (NCCL's getBcmGen tells them by device 0xc030 and the
// subsystem device's top digit).
var (
	broadcomTop = [4]string{"0x1000", "0xc030", "0x1000", "0x0a00"}
	broadcomSub = [4]string{"0x1000", "0xc030", "0x1000", "0x1a00"}
)

// HGX is an 8-GPU node with one InfiniBand HCA beside each GPU: each pair
// behind its own Broadcom Gen5 switch, whose sub-switches NCCL merges so
// that every GPU is PIX to its HCA, four pairs per NUMA node. The GPUs
// sit on a DGX H100's bus numbers, as test/fakenvml's H100s report them.
func HGX(ports int, linkLayer, rate string) Node {
	n := Node{Bridges: map[string][4]string{}, Status: StatusRoot, Limits: LimitsUnlimited}
	for i, bus := range []int{0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb} {
		b := bus - 5
		numa, cpus := i/4, []string{"0-55", "56-111"}[i/4]
		root := fmt.Sprintf("pci0000:%02x/0000:%02x:01.0/0000:%02x:00.0", b, b, b+1)
		n.Bridges[fmt.Sprintf("0000:%02x:00.0", b+1)] = broadcomTop
		n.Bridges[fmt.Sprintf("0000:%02x:00.0", b+3)] = broadcomSub
		n.Bridges[fmt.Sprintf("0000:%02x:00.0", b+6)] = broadcomSub
		gpu := fmt.Sprintf("%s/0000:%02x:01.0/0000:%02x:00.0/0000:%02x:00.0/0000:%02x:00.0", root, b+2, b+3, b+4, b+5)
		nic := fmt.Sprintf("%s/0000:%02x:02.0/0000:%02x:00.0/0000:%02x:00.0/0000:%02x:00.0", root, b+2, b+6, b+7, b+8)
		n.GPUs = append(n.GPUs, Device{Path: gpu, Vendor: "0x10de", Device: "0x2330", Driver: "nvidia", NUMA: numa, CPUs: cpus, IOMMU: "identity"})
		h := HCA{Name: fmt.Sprintf("mlx5_%d", i), Verbs: i,
			Device: Device{Path: nic, Vendor: "0x15b3", Device: "0x1021", Driver: "mlx5_core", NUMA: numa, CPUs: cpus, IOMMU: "identity"}}
		for range ports {
			h.Ports = append(h.Ports, Port{State: Active, PhysState: LinkUp, LinkLayer: linkLayer, Rate: rate})
		}
		n.HCAs = append(n.HCAs, h)
	}
	return n
}

// RoCE is a node with two GPUs and a two-port ConnectX-6 Dx in RoCE mode
// under one PCIe switch, each port's GID table filled as the kernel fills
// it for a netdev with one IPv4 address: its link-local GID and the
// address, each as RoCE v1 and v2.
func RoCE() Node {
	n := Node{Status: StatusRoot, Limits: LimitsUnlimited}
	const sw = "pci0000:30/0000:30:01.0/0000:31:00.0"
	for i := range 2 {
		n.GPUs = append(n.GPUs, Device{Path: fmt.Sprintf("%s/0000:32:%02x.0/0000:%02x:00.0", sw, i, 0x33+i),
			Vendor: "0x10de", Device: "0x20b5", Driver: "nvidia", CPUs: "0-31"})
	}
	h := HCA{Name: "mlx5_0", Verbs: 0, Device: Device{Path: sw + "/0000:32:02.0/0000:35:00.0",
		Vendor: "0x15b3", Device: "0x101d", Driver: "mlx5_core", CPUs: "0-31"}}
	for p, dev := range []string{"ens1f0np0", "ens1f1np1"} {
		ll := fmt.Sprintf("fe80:0000:0000:0000:ba59:9fff:fe2e:1a%02x", p)
		v4 := fmt.Sprintf("0000:0000:0000:0000:0000:ffff:0a0a:%02x05", p+1)
		h.Ports = append(h.Ports, Port{State: Active, PhysState: LinkUp, LinkLayer: "Ethernet", Rate: "100 Gb/sec (4X EDR)",
			GIDs: []GID{{0, ll, "IB/RoCE v1", dev}, {1, ll, "RoCE v2", dev}, {2, v4, "IB/RoCE v1", dev}, {3, v4, "RoCE v2", dev}}})
	}
	n.HCAs = []HCA{h}
	return n
}

// EFA is an AWS node with eight GPUs and four Elastic Fabric Adapters, a
// pair of GPUs beside each, as p4d instances are: EFA's ports report the
// link layer "Unknown" (drivers/infiniband/hw/efa, efa_port_link_layer).
func EFA() Node {
	n := Node{Status: StatusRoot, Limits: LimitsUnlimited}
	for i := range 4 {
		b := 0x10 + 0x40*i
		sw := fmt.Sprintf("pci0000:%02x/0000:%02x:00.0/0000:%02x:00.0", b, b, b+1)
		for g := range 2 {
			n.GPUs = append(n.GPUs, Device{Path: fmt.Sprintf("%s/0000:%02x:%02x.0/0000:%02x:00.0", sw, b+2, g+1, b+3+g),
				Vendor: "0x10de", Device: "0x20b0", Driver: "nvidia", NUMA: i / 2, CPUs: []string{"0-23", "24-47"}[i/2]})
		}
		n.HCAs = append(n.HCAs, HCA{Name: fmt.Sprintf("rdmap%ds0", b+5), Verbs: i,
			Device: Device{Path: fmt.Sprintf("%s/0000:%02x:03.0/0000:%02x:00.0", sw, b+2, b+5), Vendor: "0x1d0f", Device: "0xefa1",
				Driver: "efa", NUMA: i / 2, CPUs: []string{"0-23", "24-47"}[i/2]},
			Ports: []Port{{State: Active, PhysState: LinkUp, LinkLayer: "Unknown", Rate: "100 Gb/sec (4X EDR)"}}})
	}
	return n
}
