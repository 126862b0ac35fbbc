package nccl

import (
	"slices"
	"strconv"
)

// PathType is how far apart two devices are, in topoPathTypeStr's order.
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

// levelNames are the names NCCL v reads in a level: C2C from 2.26.2, P2C
// from 2.27.3.
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

// GDRLevel is NCCL_NET_GDR_LEVEL as ncclGetLevel reads it, a name or an
// old number; otherwise PXB, and set is false.
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

// PCIDevice is where a device sits: Path is its sysfs path below
// /sys/devices, root complex first; NUMANode that of the node NCCL
// attaches to a CPU; SwitchIDs the PCI ids (vendor, device, subsystem
// vendor and device) of Switches' nodes.
type PCIDevice struct {
	Path      []string `json:"path"`
	NUMANode  int      `json:"numaNode"`
	SwitchIDs []uint64 `json:"switchIds,omitempty"`
}

// Switches returns the positions in path of the switches NCCL puts between
// the device and its CPU, bottom up: ncclTopoGetXmlFromSys goes up two
// components at a time and stops at one that is no PCI address.
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

// bcmGen is NCCL's getBcmGen, the Broadcom switches it merges.
func bcmGen(id uint64, level uint64) int {
	switch id & 0xfffffffffffff000 {
	case 0x1000c0101000a000:
		return 4
	case 0x1000c03010000000 | level*0x1000:
		return 5
	}
	return 0
}

type node struct {
	key    string // the switch's PCI address, or the CPU's "numa N"
	isCPU  bool
	device bool
}

// chain is the device, its switches (ncclTopoFlattenBcmSwitches applied),
// then its CPU.
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

// Distance is the path type ncclTopoSetPaths gives two devices; SYS when
// either's place is unknown.
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
