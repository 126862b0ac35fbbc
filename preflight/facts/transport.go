package facts

import "github.com/gpu-preflight/gpu-preflight/preflight/nccl"

// Transport is what one rank sees of the network NCCL may use
// (preflight/rdma) and NCCL's choice predicted from it (preflight/transport,
// docs/transport.md). The record keeps the prediction and the HCAs; the
// rest is the prediction's working data. Active (the opt-in active tier)
// overrides sysfs's word.
type Transport struct {
	Prediction TransportPrediction `json:"prediction"`
	HCAs       []HCA               `json:"hcas"`
	Active     RDMACheck           `json:"active"`
	// Addresses are in getifaddrs order.
	Addresses []nccl.Address `json:"addresses" record:"-"`
	Links     []Interface    `json:"links" record:"-"`
	Process   RankProcess    `json:"process" record:"-"`
	Kernel    RDMAKernel     `json:"kernel" record:"-"`
	GPUs      []GPUPlacement `json:"gpus" record:"-"`
	Image     RDMAImage      `json:"image" record:"-"`
	NCCL      NCCLConfig     `json:"nccl" record:"-"`
}

// TransportPrediction is what NCCL will do on this rank. Network is NetIB,
// NetSocket, the net plugin's path, or "" when NCCL will fail at init or
// the image has none; Devices are the IB transport's ports ("mlx5_0:1")
// or the EFA devices a plugin drives, LinkLayer theirs joined by "+"; GDR
// is "peermem", "dmabuf" or "" (GPUDirect RDMA off); Bootstrap is the
// socket interface NCCL's bootstrap uses, Interfaces NET/Socket's; Proved
// the active tier's passes.
type TransportPrediction struct {
	Network    string           `json:"network"`
	Devices    []string         `json:"devices"`
	LinkLayer  string           `json:"linkLayer"`
	GDR        string           `json:"gdr"`
	Bootstrap  string           `json:"bootstrap"`
	Interfaces []string         `json:"interfaces"`
	Summary    string           `json:"summary"`
	Proved     string           `json:"proved,omitempty"`
	Causes     []TransportCause `json:"causes"`
}

// Networks NCCL names (NCCL_NET compares them without case).
const (
	NetIB     = "IB"
	NetSocket = "Socket"
)

// TransportCause is one reason the prediction found (transport.Causes).
type TransportCause struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// HCA is an RDMA device in /sys/class/infiniband; Driver, Vendor and
// Device are its PCI device's ("mlx5_core", "0x15b3"), Verbs its uverbs
// device ("" without ib_uverbs).
type HCA struct {
	Name    string         `json:"name"`
	Driver  string         `json:"driver"`
	Vendor  string         `json:"vendor"`
	Device  string         `json:"device"`
	Address string         `json:"address,omitempty"`
	PCI     nccl.PCIDevice `json:"pci" record:"-"`
	IOMMU   string         `json:"iommu,omitempty"`
	Verbs   string         `json:"verbs"`
	Node    UverbsNode     `json:"node"`
	Ports   []HCAPort      `json:"ports"`
}

// UverbsNode is what opening /dev/infiniband/uverbsN read-write gave:
// UverbsOK, UverbsNotDevice, UverbsOther, or the errno's name (ENOENT: not
// passed in; EPERM: device cgroup; ENXIO: no driver).
type UverbsNode struct {
	Path string `json:"path"`
	Open string `json:"open"`
}

// UverbsNode results besides errnos.
const (
	UverbsOK        = "ok"
	UverbsNotDevice = "not a character device"
	UverbsOther     = "another device"
)

// HCAPort is ports/N of an HCA.
type HCAPort struct {
	Num       int        `json:"num"`
	State     string     `json:"state"`
	PhysState string     `json:"physState"`
	LinkLayer string     `json:"linkLayer"`
	Rate      string     `json:"rate,omitempty"`
	GIDs      []nccl.GID `json:"gids,omitempty" record:"-"`
}

// Link layers as sysfs names them.
const (
	LinkInfiniBand = "InfiniBand"
	LinkEthernet   = "Ethernet"
)

// Interface is one network interface of the namespace; Kind is a virtual
// one's ("veth"), "" for a device's own.
type Interface struct {
	Name    string `json:"name"`
	Index   int    `json:"index"`
	Up      bool   `json:"up"`
	Running bool   `json:"running"`
	Kind    string `json:"kind,omitempty"`
}

// RankProcess is this process's limits, which the command inherits:
// memlock in bytes (-1 unlimited), the capability sets, Cpus_allowed_list.
type RankProcess struct {
	UID         int    `json:"uid"`
	MemlockSoft int64  `json:"memlockSoft"`
	MemlockHard int64  `json:"memlockHard"`
	CapEff      uint64 `json:"capEff"`
	CapBnd      uint64 `json:"capBnd"`
	CapAmb      uint64 `json:"capAmb"`
	CPUs        string `json:"cpus"`
}

// RDMAKernel is what the host's kernel says about GPUDirect RDMA; Peermem
// are the nccl.AllPeermemFiles that exist.
type RDMAKernel struct {
	Release       string   `json:"release"`
	Peermem       []string `json:"peermem,omitempty"`
	DriverVersion string   `json:"driverVersion,omitempty"`
	OpenModule    bool     `json:"openModule,omitempty"`
}

// GPUPlacement is a visible GPU's place in the PCI tree.
type GPUPlacement struct {
	Address   string         `json:"address"`
	PCI       nccl.PCIDevice `json:"pci"`
	IOMMU     string         `json:"iommu,omitempty"`
	LocalCPUs string         `json:"localCpus,omitempty"`
}

// RDMAImage is the image's RDMA user space as the loader model finds it:
// NCCL is the framework's libnccl.so.2 ("" when none); RDMACore and
// VerbsABI come from libibverbs.so.1.<ABI>.<release> (0 unknown);
// Configured are the providers libibverbs is told to load.
type RDMAImage struct {
	NCCL       string          `json:"nccl"`
	Verbs      LoadedLibrary   `json:"verbs"`
	RDMACore   int             `json:"rdmaCore,omitempty"`
	VerbsABI   int             `json:"verbsAbi,omitempty"`
	Configured []string        `json:"configured,omitempty"`
	Providers  []VerbsProvider `json:"providers,omitempty"`
	Plugins    []NetPlugin     `json:"plugins,omitempty"`
}

// LoadedLibrary is what the loader model found; Missing, its closure's gaps.
type LoadedLibrary struct {
	Name    string   `json:"name"`
	Path    string   `json:"path,omitempty"`
	Missing []string `json:"missing,omitempty"`
}

// Found reports whether the library and all it needs load.
func (l LoadedLibrary) Found() bool { return l.Path != "" && len(l.Missing) == 0 }

// VerbsProvider is the libibverbs provider an HCA's driver needs.
type VerbsProvider struct {
	Name    string        `json:"name"`
	Library LoadedLibrary `json:"library"`
}

// NetPlugin is a net plugin NCCL tries, by each name it dlopens.
type NetPlugin struct {
	Names   []string      `json:"names"`
	Library LoadedLibrary `json:"library"`
}

// NCCLConfig is the image's NCCL release and its resolved settings.
type NCCLConfig struct {
	Version   string        `json:"version"`
	Settings  nccl.Settings `json:"settings"`
	ConfFiles []string      `json:"confFiles,omitempty"`
}
