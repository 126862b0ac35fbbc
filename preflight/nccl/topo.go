package nccl

import (
	"slices"
	"strconv"
)

// PathType is how far apart two devices are, in NCCL's topoPathTypeStr
// order (as of 2.27.5; every release orders the names it has the same way).
type PathType int

// The path types, nearest first.
const (
	PathLOC PathType = iota
	PathNVL
	PathNVB
	PathC2C
	PathPIX
	PathPXB
	PathP2C
	PathPXN
	PathPHB
	PathSYS
)

var pathNames = [...]string{"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS"}

func (p PathType) String() string {
	if p < 0 || int(p) >= len(pathNames) {
		return "DIS"
	}
	return pathNames[p]
}

// levelNames are the names NCCL v reads in a level setting (its
// topoPathTypeStr up to SYS): C2C from 2.26.2, P2C from 2.27.3.
func levelNames(v Version) []PathType {
	out := []PathType{PathLOC, PathNVL, PathNVB, PathPIX, PathPXB, PathPXN, PathPHB, PathSYS}
	if v.AtLeast(2, 26, 2) {
		out = append(out, PathC2C)
	}
	if v.AtLeast(2, 27, 3) {
		out = append(out, PathP2C)
	}
	return out
}

// GDRLevel is NCCL_NET_GDR_LEVEL as ncclGetLevel reads it: a path name, or
// a number in the old numbering (0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 and up
// SYS). Anything else, or unset, is NCCL's default, PXB (set is false).
func GDRLevel(s Settings, v Version) (level PathType, set bool) {
	str, ok := s.Get(NetGDRLevel)
	if !ok {
		return PathPXB, false
	}
	for _, p := range levelNames(v) {
		if str == p.String() {
			return p, true
		}
	}
	if str != "" && '0' <= str[0] && str[0] <= '9' {
		old := []PathType{PathLOC, PathPIX, PathPXB, PathPHB, PathSYS, PathSYS}
		n, _ := strtoll(str)
		return old[min(n, int64(len(old)-1))], true
	}
	return PathPXB, false
}

// PCIDevice is where a device sits in the PCI tree: Path holds the
// components of its sysfs path below /sys/devices, from the root complex
// ("pci0000:00") to the device itself; NUMANode is the numa_node of the
// node NCCL attaches to a CPU (the last of Switches, or the device); and
// SwitchIDs are the PCI ids (vendor, device, subsystem vendor and device,
// 16 bits each) of the nodes of Switches, bottom up, 0 when unread.
type PCIDevice struct {
	Path      []string `json:"path"`
	NUMANode  int      `json:"numaNode"`
	SwitchIDs []uint64 `json:"switchIds,omitempty"`
}

// Switches returns the positions in path of the PCI switches NCCL's
// topology puts between the device (the last component) and its CPU,
// bottom up: ncclTopoGetXmlFromSys goes up two components at a time
// (skipping the downstream port a device hangs from) and stops at the
// first component that is not a PCI address.
func Switches(path []string) []int {
	var out []int
	for k := len(path) - 1; k >= 2 && isBDF(path[k-1]) && isBDF(path[k-2]); k -= 2 {
		out = append(out, k-2)
	}
	return out
}

// isBDF is NCCL's checkBDFFormat: "BBBB:BB:DD.F" in hexadecimal.
func isBDF(s string) bool {
	if len(s) != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.' {
		return false
	}
	for i, c := range []byte(s) {
		if i == 4 || i == 7 || i == 10 {
			continue
		}
		if digit(c, 16) < 0 {
			return false
		}
	}
	return true
}

// bcmGen is NCCL's getBcmGen: Broadcom's PEX Gen4 and Gen5 switches show
// two levels of switch that NCCL merges into one.
func bcmGen(id uint64, level uint64) int {
	switch id & 0xfffffffffffff000 {
	case 0x1000c0101000a000:
		return 4
	case 0x1000c03010000000 | level*0x1000:
		return 5
	}
	return 0
}

// node is one step of a device's way up to its CPU.
type node struct {
	key    string // the switch's PCI address, or the CPU's "numa N"
	isCPU  bool
	device bool
}

// chain is the device's way up: the device, its switches (a Broadcom
// sub-switch merged into the switch above it, as
// ncclTopoFlattenBcmSwitches does), then its CPU.
func (d PCIDevice) chain() []node {
	if len(d.Path) == 0 {
		return nil
	}
	out := []node{{key: d.Path[len(d.Path)-1], device: true}}
	sw := Switches(d.Path)
	for i, k := range sw {
		if i+1 < len(sw) && i < len(d.SwitchIDs) && i+1 < len(d.SwitchIDs) {
			if g := bcmGen(d.SwitchIDs[i+1], 0); g != 0 && bcmGen(d.SwitchIDs[i], 1) == g {
				continue
			}
		}
		out = append(out, node{key: d.Path[k]})
	}
	return append(out, node{key: "numa " + strconv.Itoa(d.NUMANode), isCPU: true})
}

// Distance is the path type NCCL computes between two devices: PIX
// through one switch, PXB through several, PHB through their CPU, SYS
// across CPUs (NCCL's ncclTopoSetPaths over the tree chain builds). It is
// PathSYS when either device's place is unknown.
func Distance(a, b PCIDevice) PathType {
	ca, cb := a.chain(), b.chain()
	if len(ca) == 0 || len(cb) == 0 {
		return PathSYS
	}
	if ca[0].key == cb[0].key {
		return PathLOC
	}
	at := func(c []node, key string) int {
		return slices.IndexFunc(c, func(n node) bool { return n.key == key })
	}
	for i, n := range ca {
		j := at(cb, n.key)
		if j < 0 {
			continue
		}
		switch {
		case n.isCPU:
			return PathPHB
		case i > 1 || j > 1:
			return PathPXB
		}
		return PathPIX
	}
	return PathSYS
}
