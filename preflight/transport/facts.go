// Package transport predicts, for one rank, the network NCCL will use
// (InfiniBand or RoCE through its IB transport, a net plugin such as
// aws-ofi-nccl, or TCP sockets), whether GPUDirect RDMA will be on, and why
// it would fall back or fail, from what the rank sees in its own
// namespaces. Facts come from preflight/rdma; everything here is pure:
// Predict and Evaluate read Facts and a Job and return a Prediction and
// findings, each with its remedy per launcher (remedies.go).
package transport

import "github.com/gpu-preflight/gpu-preflight/preflight/nccl"

// Facts is what one rank sees of the network NCCL may use.
type Facts struct {
	HCAs []HCA `json:"hcas"`
	// Addresses are the namespace's addresses in getifaddrs order, Links
	// its interfaces by index.
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
	// Driver is the kernel driver of its PCI device ("mlx5_core", "efa"),
	// Vendor and Device that device's PCI ids ("0x15b3").
	Driver  string `json:"driver"`
	Vendor  string `json:"vendor"`
	Device  string `json:"device"`
	Address string `json:"address,omitempty"`
	// PCI is its place in the PCI tree; IOMMU its IOMMU group's type.
	PCI   nccl.PCIDevice `json:"pci"`
	IOMMU string         `json:"iommu,omitempty"`
	// Verbs is its uverbs device ("uverbs0"), "" when the kernel has none
	// (ib_uverbs not loaded), and Node what opening its character device
	// gave.
	Verbs string `json:"verbs"`
	Node  Node   `json:"node"`
	Ports []Port `json:"ports"`
}

// Node is the result of opening /dev/infiniband/uverbsN read-write, as
// libibverbs does: NodeOK, or the errno's name ("ENOENT": not in this
// container; "EPERM": the device cgroup denies it; "ENXIO": no driver
// behind it), NodeNotDevice, or NodeOther with the device it names.
type Node struct {
	Path string `json:"path"`
	Open string `json:"open"`
}

// Results of opening a character device besides an errno's name.
const (
	NodeOK        = "ok"
	NodeNotDevice = "not a character device"
	NodeOther     = "another device"
)

// Port is one port of an HCA, as ports/N shows it.
type Port struct {
	Num int `json:"num"`
	// State and PhysState are the names sysfs gives ("ACTIVE", "LinkUp").
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
	// Kind is the rtnetlink kind of a virtual interface ("veth",
	// "bridge"); "" for a device's own interface.
	Kind string `json:"kind,omitempty"`
}

// Process is what limits this process, which the training command
// inherits.
type Process struct {
	UID int `json:"uid"`
	// MemlockSoft and MemlockHard are RLIMIT_MEMLOCK in bytes, -1 for
	// unlimited.
	MemlockSoft int64 `json:"memlockSoft"`
	MemlockHard int64 `json:"memlockHard"`
	// CapEff, CapBnd and CapAmb are the capability sets of
	// /proc/self/status.
	CapEff uint64 `json:"capEff"`
	CapBnd uint64 `json:"capBnd"`
	CapAmb uint64 `json:"capAmb"`
	// CPUs are the CPUs it may run on (Cpus_allowed_list).
	CPUs string `json:"cpus"`
}

// Kernel is what the host's kernel says about GPUDirect RDMA.
type Kernel struct {
	Release string `json:"release"`
	// Peermem lists which of nccl.PeermemFiles' paths (of any release)
	// exist.
	Peermem []string `json:"peermem,omitempty"`
	// DriverVersion and OpenModule describe the NVIDIA kernel module.
	DriverVersion string `json:"driverVersion,omitempty"`
	OpenModule    bool   `json:"openModule,omitempty"`
}

// GPU is a visible GPU's place in the PCI tree.
type GPU struct {
	Address   string         `json:"address"`
	PCI       nccl.PCIDevice `json:"pci"`
	IOMMU     string         `json:"iommu,omitempty"`
	LocalCPUs string         `json:"localCpus,omitempty"`
}

// Image is the image's RDMA user space as the loader model finds it from
// the image's NCCL.
type Image struct {
	// NCCL is the libnccl.so.2 the framework loads, "" when none.
	NCCL string `json:"nccl"`
	// Verbs is libibverbs as NCCL dlopens it ("libibverbs.so", then
	// "libibverbs.so.1").
	Verbs Library `json:"verbs"`
	// RDMACore is the rdma-core release libibverbs' file name gives (44
	// for libibverbs.so.1.14.44.0), 0 when it gives none; VerbsABI its
	// minor ABI (14), which has ibv_reg_dmabuf_mr from 12.
	RDMACore int `json:"rdmaCore,omitempty"`
	VerbsABI int `json:"verbsAbi,omitempty"`
	// Configured are the provider names /etc/libibverbs.d (and
	// RDMAV_DRIVERS or IBV_DRIVERS) name.
	Configured []string   `json:"configured,omitempty"`
	Providers  []Provider `json:"providers,omitempty"`
	Plugins    []Plugin   `json:"plugins,omitempty"`
}

// Library is a library the loader model looked for, with what it found.
type Library struct {
	Name string `json:"name"`
	Path string `json:"path,omitempty"`
	// Missing are the libraries of its dependency closure the loader would
	// not find ("libfabric.so.1 (needed by ...)").
	Missing []string `json:"missing,omitempty"`
}

// Found reports whether the library and all it needs load.
func (l Library) Found() bool { return l.Path != "" && len(l.Missing) == 0 }

// Provider is the libibverbs provider an HCA's driver needs.
type Provider struct {
	Name    string  `json:"name"`
	Library Library `json:"library"`
}

// Plugin is a net plugin NCCL tries: each name it would dlopen, and the
// first that loads.
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
