package rdma

import (
	"errors"
	"fmt"
	"net/netip"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/preflight/host"
	"github.com/gpu-preflight/gpu-preflight/preflight/nccl"
	"github.com/gpu-preflight/gpu-preflight/preflight/transport"
)

// Limits that keep a hostile tree cheap: a node has a few tens of HCAs,
// each with one or two ports.
const (
	maxHCAs  = 64
	maxPorts = 8
	// maxGIDs is how many entries of a RoCE port's GID table are read: the
	// kernel fills them from index 0 (two per address of the netdev), and
	// NCCL's search goes over the whole table, whose tail is empty.
	maxGIDs = 32
)

// text reads a one-line sysfs or procfs file, trimmed; "" when missing.
func (g *gatherer) text(p string) string {
	b, err := g.host.ReadFileMax(p, maxFile)
	if err != nil {
		// A GID attribute of an empty slot reads EINVAL (drivers/infiniband/
		// core/sysfs.c): an empty value, not a failure.
		if !errors.Is(err, unix.EINVAL) {
			g.warn(err)
		}
		return ""
	}
	return strings.TrimSpace(string(b))
}

// uverbs maps each HCA to its uverbs device and that device's number:
// /sys/class/infiniband_verbs/uverbsN/{ibdev,dev}, as libibverbs finds them.
func (g *gatherer) uverbs() map[string][2]string {
	out := map[string][2]string{}
	names, err := g.host.ReadDirNames("/sys/class/infiniband_verbs")
	g.warn(err)
	for _, n := range names {
		if !strings.HasPrefix(n, "uverbs") {
			continue
		}
		dir := "/sys/class/infiniband_verbs/" + n
		if ib := g.text(dir + "/ibdev"); ib != "" {
			out[ib] = [2]string{n, g.text(dir + "/dev")}
		}
	}
	return out
}

func (g *gatherer) hcas() []transport.HCA {
	names, err := g.host.ReadDirNames("/sys/class/infiniband")
	g.warn(err)
	verbs := g.uverbs()
	var out []transport.HCA
	for _, name := range names[:min(len(names), maxHCAs)] {
		dir := "/sys/class/infiniband/" + name
		h := transport.HCA{Name: name}
		h.Driver = g.linkBase(dir + "/device/driver")
		h.Vendor, h.Device = g.text(dir+"/device/vendor"), g.text(dir+"/device/device")
		h.Address, h.PCI, h.IOMMU, _ = g.placement(dir + "/device")
		if v, ok := verbs[name]; ok {
			h.Verbs = v[0]
			h.Node = g.open("/dev/infiniband/"+v[0], v[1])
		}
		h.Ports = g.ports(dir + "/ports")
		out = append(out, h)
	}
	return out
}

func (g *gatherer) linkBase(p string) string {
	target, err := g.host.Readlink(p)
	g.warn(err)
	if target == "" {
		return ""
	}
	return path.Base(target)
}

func (g *gatherer) ports(dir string) []transport.Port {
	names, err := g.host.ReadDirNames(dir)
	g.warn(err)
	var out []transport.Port
	for _, n := range names {
		num, err := strconv.Atoi(n)
		if err != nil || len(out) == maxPorts {
			continue
		}
		d := dir + "/" + n
		p := transport.Port{Num: num, LinkLayer: g.text(d + "/link_layer"), Rate: g.text(d + "/rate")}
		_, p.State = ParseState(g.text(d + "/state"))
		_, p.PhysState = ParseState(g.text(d + "/phys_state"))
		if p.LinkLayer == transport.LinkEthernet {
			p.GIDs = g.gids(d)
		}
		out = append(out, p)
	}
	return out
}

// gids reads the populated entries of a port's GID table and their types.
func (g *gatherer) gids(port string) []nccl.GID {
	var out []nccl.GID
	for i := range maxGIDs {
		s := g.text(fmt.Sprintf("%s/gids/%d", port, i))
		if s == "" {
			break
		}
		gid, ok := ParseGID(s)
		if !ok || gid == netip.IPv6Unspecified() {
			continue
		}
		out = append(out, nccl.GID{Index: i, GID: gid, Type: g.text(fmt.Sprintf("%s/gid_attrs/types/%d", port, i))})
	}
	return out
}

// ParseState reads a port's state or phys_state file, "4: ACTIVE" or
// "5: LinkUp" (drivers/infiniband/core/sysfs.c); ok is false otherwise.
func ParseState(s string) (n int, name string) {
	num, name, ok := strings.Cut(s, ": ")
	v, err := strconv.Atoi(num)
	if !ok || err != nil {
		return -1, s
	}
	return v, name
}

// ParseGID reads a GID as sysfs prints it (%pI6: eight groups of four hex
// digits).
func ParseGID(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a, true
}

// open opens a uverbs character device read-write, as libibverbs'
// open_cdev does, and says what happened. dev is the number sysfs gives
// it ("231:192"); a node of another number is not opened.
func (g *gatherer) open(p, dev string) transport.Node {
	n := transport.Node{Path: p}
	host, err := g.host.Resolve(p)
	if err != nil {
		n.Open = errnoName(err)
		return n
	}
	var st unix.Stat_t
	if err := unix.Stat(host, &st); err != nil {
		n.Open = errnoName(err)
		return n
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR {
		n.Open = transport.NodeNotDevice
		return n
	}
	if dev != "" && dev != fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev)) {
		n.Open = transport.NodeOther
		return n
	}
	fd, err := unix.Open(host, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		n.Open = errnoName(err)
		return n
	}
	unix.Close(fd)
	n.Open = transport.NodeOK
	return n
}

func errnoName(err error) string {
	var errno unix.Errno
	if errors.As(err, &errno) {
		if name := unix.ErrnoName(errno); name != "" {
			return name
		}
	}
	return err.Error()
}

// placement is where the PCI device a sysfs link names sits: its address,
// its place in the tree as NCCL reads it, its IOMMU group's type and its
// local CPUs.
func (g *gatherer) placement(link string) (addr string, d nccl.PCIDevice, iommu, cpus string) {
	resolved, err := g.host.Resolve(link)
	if err != nil {
		g.warn(err)
		return
	}
	inside, ok := strings.CutPrefix(resolved, strings.TrimSuffix(g.host.Path("/"), "/"))
	rel, under := strings.CutPrefix(inside, "/sys/devices/")
	if !ok || !under {
		return
	}
	d.Path = strings.Split(rel, "/")
	addr = d.Path[len(d.Path)-1]
	dir := func(k int) string { return "/sys/devices/" + strings.Join(d.Path[:k+1], "/") }
	top := len(d.Path) - 1
	for _, k := range nccl.Switches(d.Path) {
		d.SwitchIDs = append(d.SwitchIDs, g.pciID(dir(k)))
		top = k
	}
	d.NUMANode = -1
	if n, err := strconv.Atoi(g.text(dir(top) + "/numa_node")); err == nil {
		d.NUMANode = n
	}
	if group := g.linkBase(inside + "/iommu_group"); group != "" {
		iommu = g.text("/sys/kernel/iommu_groups/" + group + "/type")
	}
	return addr, d, iommu, g.text(inside + "/local_cpulist")
}

// pciID is a switch's vendor, device and (for Broadcom, whose switches
// NCCL recognises by them) subsystem ids, 16 bits each.
func (g *gatherer) pciID(dir string) uint64 {
	hex := func(name string) uint64 {
		v, _ := strconv.ParseUint(strings.TrimPrefix(g.text(dir+"/"+name), "0x"), 16, 16)
		return v
	}
	id := hex("vendor")<<48 | hex("device")<<32
	if id>>48 == 0x1000 {
		id |= hex("subsystem_vendor")<<16 | hex("subsystem_device")
	}
	return id
}

// gpus places the visible GPUs.
func (g *gatherer) gpus() []transport.GPU {
	var out []transport.GPU
	for _, id := range g.o.GPUs {
		norm, err := host.NormalizeBusID(id)
		if err != nil {
			g.warn(err)
			continue
		}
		domain, rest, _ := strings.Cut(norm, ":")
		d, _ := strconv.ParseUint(domain, 16, 32)
		bdf := fmt.Sprintf("%04x:%s", d, strings.ToLower(rest))
		gpu := transport.GPU{Address: bdf}
		_, gpu.PCI, gpu.IOMMU, gpu.LocalCPUs = g.placement("/sys/bus/pci/devices/" + bdf)
		out = append(out, gpu)
	}
	return out
}

// kernel reads which of NCCL's peer-memory probes exist.
func (g *gatherer) kernel() transport.Kernel {
	k := transport.Kernel{Release: g.o.KernelRelease, DriverVersion: g.o.DriverVersion, OpenModule: g.o.OpenModule}
	for _, f := range nccl.AllPeermemFiles() {
		_, err := g.host.Stat(f)
		if err == nil {
			k.Peermem = append(k.Peermem, f)
		}
		g.warn(err)
	}
	return k
}
