package nccl

import (
	"slices"
	"strings"
	"testing"
)

func dev(path string, numa int, ids ...uint64) PCIDevice {
	return PCIDevice{Path: strings.Split(path, "/"), NUMANode: numa, SwitchIDs: ids}
}

// A two-level PCIe switch as 8-GPU servers have them: a GPU and a NIC each
// behind their own sub-switch, both under one top switch, under one root
// port of NUMA node 0.
const (
	gpuUnderSubSwitch = "pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:18:00.0/0000:19:00.0/0000:1a:00.0"
	nicUnderSubSwitch = "pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:02.0/0000:1b:00.0/0000:1c:00.0/0000:1d:00.0"
	nicUnderTopSwitch = "pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:03.0/0000:1e:00.0"
	nicOnRootPort     = "pci0000:15/0000:15:02.0/0000:20:00.0"
	nicOtherRootPort  = "pci0000:5c/0000:5c:01.0/0000:5d:00.0"
	nicOtherSocket    = "pci0000:9a/0000:9a:01.0/0000:9b:00.0"
)

func TestSwitchesAreEveryOtherBridgeUpToTheRootComplex(t *testing.T) {
	if got := Switches(strings.Split(gpuUnderSubSwitch, "/")); !slices.Equal(got, []int{4, 2}) {
		t.Errorf("switches at %v, want [4 2]", got)
	}
	if got := Switches(strings.Split(nicOnRootPort, "/")); len(got) != 0 {
		t.Errorf("a device on a root port has switches at %v", got)
	}
}

func TestDistanceIsNCCLsPathType(t *testing.T) {
	gpu := dev(gpuUnderSubSwitch, 0)
	cases := []struct {
		name string
		nic  PCIDevice
		want PathType
	}{
		{"sibling sub-switch", dev(nicUnderSubSwitch, 0), PathPXB},
		{"the top switch", dev(nicUnderTopSwitch, 0), PathPXB},
		{"a root port of the same root complex", dev(nicOnRootPort, 0), PathPHB},
		{"another root complex, same NUMA node", dev(nicOtherRootPort, 0), PathPHB},
		{"another NUMA node", dev(nicOtherSocket, 1), PathSYS},
		{"unknown place", PCIDevice{}, PathSYS},
	}
	for _, c := range cases {
		if got := Distance(gpu, c.nic); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if got := Distance(gpu, gpu); got != PathLOC {
		t.Errorf("a device to itself: %s", got)
	}
}

// Broadcom's PEX Gen5 switches show a top level and sub-switches; NCCL
// merges them, so a GPU and a NIC behind sibling sub-switches are PIX.
func TestBroadcomSubSwitchesAreMergedIntoTheirTopSwitch(t *testing.T) {
	const top, sub = 0x1000_c030_1000_0a00, 0x1000_c030_1000_1a00
	gpu := dev(gpuUnderSubSwitch, 0, sub, top)
	nic := dev(nicUnderSubSwitch, 0, sub, top)
	if got := Distance(gpu, nic); got != PathPIX {
		t.Errorf("Gen5 sub-switches: %s, want PIX", got)
	}
	const gen4 = 0x1000_c010_1000_a000
	if got := Distance(dev(gpuUnderSubSwitch, 0, gen4, gen4), dev(nicUnderSubSwitch, 0, gen4, gen4)); got != PathPIX {
		t.Errorf("Gen4 sub-switches: %s, want PIX", got)
	}
	if got := Distance(dev(gpuUnderSubSwitch, 0, top, top), dev(nicUnderSubSwitch, 0, top, top)); got != PathPXB {
		t.Errorf("two top-level Gen5 switches are not merged: %s, want PXB", got)
	}
}

func TestGDRLevelNamesAndOldNumbers(t *testing.T) {
	cases := []struct {
		value string
		v     Version
		want  PathType
		set   bool
	}{
		{"PHB", v2_22, PathPHB, true},
		{"SYS", v2_22, PathSYS, true},
		{"0", v2_22, PathLOC, true},
		{"2", v2_22, PathPXB, true},
		{"3", v2_22, PathPHB, true},
		{"9", v2_22, PathSYS, true},
		{"P2C", v2_22, PathPXB, false},
		{"P2C", Version{2, 27, 3}, PathP2C, true},
		{"phb", v2_22, PathPXB, false},
	}
	for _, c := range cases {
		got, set := GDRLevel(Settings{NetGDRLevel: {c.value, ""}}, c.v)
		if got != c.want || set != c.set {
			t.Errorf("%s %q: %s (set %v), want %s (set %v)", c.v, c.value, got, set, c.want, c.set)
		}
	}
	if got, set := GDRLevel(Settings{}, v2_22); got != PathPXB || set {
		t.Errorf("unset: %s (set %v), want PXB", got, set)
	}
}
