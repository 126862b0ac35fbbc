// Package rdmatest lays out a host's sysfs, /dev and /proc as a container
// sees them: the driver core's relative class links, the attributes of
// Documentation/ABI/stable/sysfs-class-infiniband as
// drivers/infiniband/core/sysfs.c prints them, real character devices.
package rdmatest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Device is a PCI device; Path is below /sys/devices.
type Device struct {
	Path           string
	Vendor, Device string
	Driver         string
	NUMA           int
	CPUs           string
	// IOMMU is its group's type, "" for none.
	IOMMU string
}

// HCA is an RDMA device of a PCI device.
type HCA struct {
	Name string
	Device
	Ports []Port
	// Verbs is N of uverbsN (231:192+N), -1 for none.
	Verbs int
}

// Port is one port of an HCA, in sysfs's own words.
type Port struct {
	State, PhysState, LinkLayer, Rate string
	GIDs                              []GID
}

// GID is one populated GID table entry.
type GID struct {
	Index          int
	GID, Type, Dev string
}

// Node is a host as the container sees it.
type Node struct {
	GPUs []Device
	HCAs []HCA
	// Bridges are PCI ids of bridges by address; others get Intel's.
	Bridges        map[string][4]string
	Peermem        []string
	Status, Limits string
	// Nodes mknods /dev/infiniband/uverbsN (CAP_MKNOD) but those Missing.
	Nodes   bool
	Missing []int
	// Opens, with Nodes, makes them mem's null (1:3): ib_uverbs' stand-in.
	Opens bool
}

// Layout writes n under root.
func Layout(root string, n Node) error {
	w := writer{root: root}
	for _, d := range n.GPUs {
		w.device(d, n.Bridges)
	}
	for _, h := range n.HCAs {
		w.hca(h, n)
	}
	for _, p := range n.Peermem {
		w.file(p, "1.0\n")
	}
	if n.Status != "" {
		w.file("/proc/self/status", n.Status)
	}
	if n.Limits != "" {
		w.file("/proc/self/limits", n.Limits)
	}
	return w.err
}

type writer struct {
	root   string
	groups int
	err    error
}

func (w *writer) path(p string) string { return filepath.Join(w.root, p) }

func (w *writer) file(p, content string) {
	if w.err != nil {
		return
	}
	if w.err = os.MkdirAll(filepath.Dir(w.path(p)), 0o755); w.err == nil {
		w.err = os.WriteFile(w.path(p), []byte(content), 0o644)
	}
}

// link makes p a relative symbolic link to target, as the kernel's are.
func (w *writer) link(p, target string) {
	if w.err != nil {
		return
	}
	rel, err := filepath.Rel(filepath.Dir(p), target)
	if err != nil {
		w.err = err
		return
	}
	if w.err = os.MkdirAll(filepath.Dir(w.path(p)), 0o755); w.err == nil {
		w.err = os.Symlink(rel, w.path(p))
	}
}

func (w *writer) device(d Device, bridges map[string][4]string) string {
	dir := "/sys/devices/" + d.Path
	parts := strings.Split(d.Path, "/")
	for i := 1; i < len(parts)-1; i++ {
		id, ok := bridges[parts[i]]
		if !ok {
			id = [4]string{"0x8086", "0x347a", "0x0000", "0x0000"}
		}
		b := "/sys/devices/" + strings.Join(parts[:i+1], "/")
		for j, name := range []string{"vendor", "device", "subsystem_vendor", "subsystem_device"} {
			w.file(b+"/"+name, id[j]+"\n")
		}
		w.file(b+"/numa_node", fmt.Sprintf("%d\n", d.NUMA))
	}
	w.file(dir+"/vendor", d.Vendor+"\n")
	w.file(dir+"/device", d.Device+"\n")
	w.file(dir+"/numa_node", fmt.Sprintf("%d\n", d.NUMA))
	w.file(dir+"/local_cpulist", d.CPUs+"\n")
	if d.Driver != "" {
		w.file("/sys/bus/pci/drivers/"+d.Driver+"/bind", "")
		w.link(dir+"/driver", "/sys/bus/pci/drivers/"+d.Driver)
	}
	if d.IOMMU != "" {
		w.groups++
		group := fmt.Sprintf("/sys/kernel/iommu_groups/%d", w.groups)
		w.file(group+"/type", d.IOMMU+"\n")
		w.link(dir+"/iommu_group", group)
	}
	addr := parts[len(parts)-1]
	w.link("/sys/bus/pci/devices/"+addr, dir)
	return dir
}

func (w *writer) hca(h HCA, n Node) {
	dev := w.device(h.Device, n.Bridges)
	// libibverbs matches providers on these (pci-sysfs.c, uverbs_main.c).
	w.file(dev+"/modalias", fmt.Sprintf("pci:v%08Xd%08Xsv%08Xsd%08Xbc02sc07i00\n", hex(h.Vendor), hex(h.Device.Device), hex(h.Vendor), 0))
	w.file("/sys/class/infiniband_verbs/abi_version", "6\n")
	dir := dev + "/infiniband/" + h.Name
	w.link("/sys/class/infiniband/"+h.Name, dir)
	w.link(dir+"/device", dev)
	w.file(dir+"/node_type", "1: CA\n")
	for i, p := range h.Ports {
		pd := fmt.Sprintf("%s/ports/%d", dir, i+1)
		w.file(pd+"/state", p.State+"\n")
		w.file(pd+"/phys_state", p.PhysState+"\n")
		w.file(pd+"/link_layer", p.LinkLayer+"\n")
		w.file(pd+"/rate", p.Rate+"\n")
		for _, g := range p.GIDs {
			w.file(fmt.Sprintf("%s/gids/%d", pd, g.Index), g.GID+"\n")
			w.file(fmt.Sprintf("%s/gid_attrs/types/%d", pd, g.Index), g.Type+"\n")
			w.file(fmt.Sprintf("%s/gid_attrs/ndevs/%d", pd, g.Index), g.Dev+"\n")
		}
	}
	if h.Verbs < 0 {
		return
	}
	uv := fmt.Sprintf("uverbs%d", h.Verbs)
	vd := dev + "/infiniband_verbs/" + uv
	major, minor := uint32(231), uint32(192+h.Verbs)
	if n.Opens {
		major, minor = 1, 3
	}
	w.link("/sys/class/infiniband_verbs/"+uv, vd)
	w.file(vd+"/ibdev", h.Name+"\n")
	w.file(vd+"/dev", fmt.Sprintf("%d:%d\n", major, minor))
	w.file(vd+"/abi_version", "1\n")
	for _, m := range n.Missing {
		if m == h.Verbs {
			return
		}
	}
	if n.Nodes && w.err == nil {
		p := w.path("/dev/infiniband/" + uv)
		if w.err = os.MkdirAll(filepath.Dir(p), 0o755); w.err == nil {
			w.err = unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(major, minor)))
		}
	}
}

func hex(s string) uint64 {
	v, _ := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 32)
	return v
}
