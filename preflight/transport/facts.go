// Package transport predicts one rank's NCCL network (IB or RoCE, a net
// plugin, or TCP sockets) and GPUDirect RDMA, and why it would fall back
// or fail, from the facts preflight/rdma gathers in the rank's namespaces.
// It is pure; each cause carries its remedy per launcher (remedies.go).
package transport

import "github.com/gpu-preflight/gpu-preflight/preflight/nccl"

// Facts is what one rank sees of the network NCCL may use.
type Facts struct {
	HCAs []HCA `json:"hcas"`
	// Addresses are in getifaddrs order.
	Addresses []nccl.Address `json:"addresses"`
	Links     []Link         `json:"links"`
	Process   Process        `json:"process"`
	Kernel    Kernel         `json:"kernel"`
	GPUs      []GPU          `json:"gpus"`
	Image     Image          `json:"image"`
	NCCL      NCCL           `json:"nccl"`
}

// HCA is an RDMA device in /sys/class/infiniband.
type HCA struct {
	Name string `json:"name"`
	// Driver, Vendor and Device are its PCI device's ("mlx5_core", "0x15b3").
	Driver  string         `json:"driver"`
	Vendor  string         `json:"vendor"`
	Device  string         `json:"device"`
	Address string         `json:"address,omitempty"`
	PCI     nccl.PCIDevice `json:"pci"`
	IOMMU   string         `json:"iommu,omitempty"`
	// Verbs is its uverbs device, "" without ib_uverbs.
	Verbs string `json:"verbs"`
	Node  Node   `json:"node"`
	Ports []Port `json:"ports"`
}

// Node is what opening /dev/infiniband/uverbsN read-write gave: NodeOK,
// NodeNotDevice, NodeOther, or the errno's name (ENOENT: not passed in;
// EPERM: device cgroup; ENXIO: no driver).
type Node struct {
	Path string `json:"path"`
	Open string `json:"open"`
}

// Node results besides errnos.
const (
	NodeOK        = "ok"
	NodeNotDevice = "not a character device"
	NodeOther     = "another device"
)

// Port is ports/N of an HCA.
type Port struct {
	Num       int        `json:"num"`
	State     string     `json:"state"`
	PhysState string     `json:"physState"`
	LinkLayer string     `json:"linkLayer"`
	Rate      string     `json:"rate,omitempty"`
	GIDs      []nccl.GID `json:"gids,omitempty"`
}

// Link layers as sysfs names them.
const (
	LinkInfiniBand = "InfiniBand"
	LinkEthernet   = "Ethernet"
)

// Link is one network interface of the namespace.
type Link struct {
	Name    string `json:"name"`
	Index   int    `json:"index"`
	Up      bool   `json:"up"`
	Running bool   `json:"running"`
	// Kind is a virtual interface's ("veth"), "" for a device's own.
	Kind string `json:"kind,omitempty"`
}

// Process is this process's limits, which the command inherits.
type Process struct {
	UID int `json:"uid"`
	// MemlockSoft and MemlockHard are in bytes, -1 for unlimited.
	MemlockSoft int64  `json:"memlockSoft"`
	MemlockHard int64  `json:"memlockHard"`
	CapEff      uint64 `json:"capEff"`
	CapBnd      uint64 `json:"capBnd"`
	CapAmb      uint64 `json:"capAmb"`
	// CPUs is Cpus_allowed_list.
	CPUs string `json:"cpus"`
}

// Kernel is what the host's kernel says about GPUDirect RDMA.
type Kernel struct {
	Release string `json:"release"`
	// Peermem are the nccl.AllPeermemFiles that exist.
	Peermem       []string `json:"peermem,omitempty"`
	DriverVersion string   `json:"driverVersion,omitempty"`
	OpenModule    bool     `json:"openModule,omitempty"`
}

// GPU is a visible GPU's place in the PCI tree.
type GPU struct {
	Address   string         `json:"address"`
	PCI       nccl.PCIDevice `json:"pci"`
	IOMMU     string         `json:"iommu,omitempty"`
	LocalCPUs string         `json:"localCpus,omitempty"`
}

// Image is the image's RDMA user space as the loader model finds it.
type Image struct {
	// NCCL is the framework's libnccl.so.2, "" when none.
	NCCL  string  `json:"nccl"`
	Verbs Library `json:"verbs"`
	// RDMACore and VerbsABI come from libibverbs.so.1.<ABI>.<release>;
	// 0 when unknown.
	RDMACore int `json:"rdmaCore,omitempty"`
	VerbsABI int `json:"verbsAbi,omitempty"`
	// Configured are the providers /etc/libibverbs.d names.
	Configured []string   `json:"configured,omitempty"`
	Providers  []Provider `json:"providers,omitempty"`
	Plugins    []Plugin   `json:"plugins,omitempty"`
}

// Library is what the loader model found for a library.
type Library struct {
	Name string `json:"name"`
	Path string `json:"path,omitempty"`
	// Missing are the libraries of its closure not found.
	Missing []string `json:"missing,omitempty"`
}

// Found reports whether the library and all it needs load.
func (l Library) Found() bool { return l.Path != "" && len(l.Missing) == 0 }

// Provider is the libibverbs provider an HCA's driver needs.
type Provider struct {
	Name    string  `json:"name"`
	Library Library `json:"library"`
}

// Plugin is a net plugin NCCL tries, by each name it dlopens.
type Plugin struct {
	Names   []string `json:"names"`
	Library Library  `json:"library"`
}

// NCCL is the image's NCCL release and its settings as it resolves them.
type NCCL struct {
	Version   string        `json:"version"`
	Settings  nccl.Settings `json:"settings"`
	ConfFiles []string      `json:"confFiles,omitempty"`
}
