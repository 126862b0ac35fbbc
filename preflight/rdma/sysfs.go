package rdma

import (
	"errors"
	"fmt"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"io/fs"
	"net/netip"
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/host"
	"github.com/gpu-preflight/gpu-preflight/preflight/nccl"
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

// resolve is the directory p names under the host root, on this machine,
// its links resolved once: the attributes below it are then read with
// attr, a few system calls each instead of a walk of the whole path.
func (g *gatherer) resolve(p string) string {
	host, err := g.host.Resolve(p)
	g.warn(err)
	return host
}

// follow is where the link rel below a resolved directory leads, resolved
// as the kernel would: sysfs's links are relative and land on real
// directories, so a lexical join is the answer. A target that would leave
// the host root is resolved inside it instead.
func (g *gatherer) follow(dir, rel, inside string) string {
	if dir == "" {
		return ""
	}
	target, err := os.Readlink(dir + "/" + rel)
	if err != nil {
		if errors.Is(err, unix.EINVAL) {
			return dir + "/" + rel // a directory, not a link
		}
		if !errors.Is(err, fs.ErrNotExist) {
			g.warn(err)
		}
		return ""
	}
	top := strings.TrimSuffix(g.host.Path("/"), "/")
	joined := path.Join(dir, target)
	if path.IsAbs(target) || !strings.HasPrefix(joined, top+"/") {
		return g.resolve(inside)
	}
	return joined
}

// attr reads the attribute rel below a resolved directory, trimmed; ""
// when missing. No sysfs attribute is a link, so a link in its place is
// refused rather than followed out of the host root.
func (g *gatherer) attr(dir, rel string) string {
	if dir == "" {
		return ""
	}
	p := dir + "/" + rel
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		// A GID attribute of an empty slot reads EINVAL
		// (drivers/infiniband/core/sysfs.c): an empty value.
		if err != unix.ENOENT && err != unix.ENOTDIR && err != unix.EINVAL {
			g.warn(&fs.PathError{Op: "open", Path: p, Err: err})
		}
		return ""
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		g.warn(&fs.PathError{Op: "read", Path: p, Err: fsroot.ErrNotRegular})
		return ""
	}
	buf := make([]byte, 256)
	n, err := unix.Read(fd, buf)
	if err != nil {
		if err != unix.EINVAL {
			g.warn(&fs.PathError{Op: "read", Path: p, Err: err})
		}
		return ""
	}
	return strings.TrimSpace(string(buf[:n]))
}

// linkBase is the last component of the target of the link rel below a
// resolved directory ("mlx5_core" for device/driver).
func linkBase(dir, rel string) string {
	if dir == "" {
		return ""
	}
	target, err := os.Readlink(dir + "/" + rel)
	if err != nil || target == "" {
		return ""
	}
	return path.Base(target)
}

// uverbs maps each HCA to its uverbs device and that device's number:
// /sys/class/infiniband_verbs/uverbsN/{ibdev,dev}, as libibverbs finds them.
func (g *gatherer) uverbs() map[string][2]string {
	out := map[string][2]string{}
	names, err := g.host.ReadDirNames("/sys/class/infiniband_verbs")
	g.warn(err)
	class := g.resolve("/sys/class/infiniband_verbs")
	for _, n := range names {
		if !strings.HasPrefix(n, "uverbs") {
			continue
		}
		dir := g.follow(class, n, "/sys/class/infiniband_verbs/"+n)
		if ib := g.attr(dir, "ibdev"); ib != "" {
			out[ib] = [2]string{n, g.attr(dir, "dev")}
		}
	}
	return out
}

func (g *gatherer) hcas() []facts.HCA {
	names, err := g.host.ReadDirNames("/sys/class/infiniband")
	g.warn(err)
	verbs := g.uverbs()
	var out []facts.HCA
	class := g.resolve("/sys/class/infiniband")
	for _, name := range names[:min(len(names), maxHCAs)] {
		inside := "/sys/class/infiniband/" + name
		dir := g.follow(class, name, inside)
		h := facts.HCA{Name: name}
		dev := ""
		if dir != "" {
			dev = g.follow(dir, "device", inside+"/device")
		}
		h.Address, h.PCI, h.IOMMU, _ = g.placement(dev)
		h.Driver = linkBase(dev, "driver")
		h.Vendor, h.Device = g.attr(dev, "vendor"), g.attr(dev, "device")
		if v, ok := verbs[name]; ok {
			h.Verbs = v[0]
			h.Node = g.open("/dev/infiniband/"+v[0], v[1])
		}
		h.Ports = g.ports(dir)
		out = append(out, h)
	}
	return out
}

func (g *gatherer) ports(hca string) []facts.HCAPort {
	if hca == "" {
		return nil
	}
	names, err := os.ReadDir(hca + "/ports")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		g.warn(err)
	}
	var out []facts.HCAPort
	for _, e := range names {
		num, err := strconv.Atoi(e.Name())
		if err != nil || len(out) == maxPorts {
			continue
		}
		d := hca + "/ports/" + e.Name()
		p := facts.HCAPort{Num: num, LinkLayer: g.attr(d, "link_layer"), Rate: g.attr(d, "rate")}
		_, p.State = ParseState(g.attr(d, "state"))
		_, p.PhysState = ParseState(g.attr(d, "phys_state"))
		if p.LinkLayer == facts.LinkEthernet {
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
		s := g.attr(port, "gids/"+strconv.Itoa(i))
		if s == "" {
			break
		}
		gid, ok := ParseGID(s)
		if !ok || gid == netip.IPv6Unspecified() {
			continue
		}
		out = append(out, nccl.GID{Index: i, GID: gid, Type: g.attr(port, "gid_attrs/types/"+strconv.Itoa(i))})
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
func (g *gatherer) open(p, dev string) facts.UverbsNode {
	n := facts.UverbsNode{Path: p}
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
		n.Open = facts.UverbsNotDevice
		return n
	}
	if dev != "" && dev != fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev)) {
		n.Open = facts.UverbsOther
		return n
	}
	fd, err := unix.Open(host, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		n.Open = errnoName(err)
		return n
	}
	unix.Close(fd)
	n.Open = facts.UverbsOK
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

// placement is where the PCI device at resolved (a directory resolve
// returned) sits: its address, its place in the tree as NCCL reads it, its
// IOMMU group's type and its local CPUs.
func (g *gatherer) placement(resolved string) (addr string, d nccl.PCIDevice, iommu, cpus string) {
	top := strings.TrimSuffix(g.host.Path("/"), "/")
	inside, ok := strings.CutPrefix(resolved, top)
	rel, under := strings.CutPrefix(inside, "/sys/devices/")
	if !ok || !under || resolved == "" {
		return
	}
	d.Path = strings.Split(rel, "/")
	addr = d.Path[len(d.Path)-1]
	dir := func(k int) string { return top + "/sys/devices/" + strings.Join(d.Path[:k+1], "/") }
	attached := len(d.Path) - 1
	for _, k := range nccl.Switches(d.Path) {
		d.SwitchIDs = append(d.SwitchIDs, g.pciID(dir(k)))
		attached = k
	}
	d.NUMANode = -1
	if n, err := strconv.Atoi(g.attr(dir(attached), "numa_node")); err == nil {
		d.NUMANode = n
	}
	if group := linkBase(resolved, "iommu_group"); group != "" {
		if g.groups == "" {
			g.groups = g.resolve("/sys/kernel/iommu_groups")
		}
		iommu = g.attr(g.groups, group+"/type")
	}
	return addr, d, iommu, g.attr(resolved, "local_cpulist")
}

// pciID is a switch's vendor, device and (for Broadcom, whose switches
// NCCL recognises by them) subsystem ids, 16 bits each; one read a switch.
func (g *gatherer) pciID(dir string) uint64 {
	if id, ok := g.switches[dir]; ok {
		return id
	}
	hex := func(name string) uint64 {
		v, _ := strconv.ParseUint(strings.TrimPrefix(g.attr(dir, name), "0x"), 16, 16)
		return v
	}
	id := hex("vendor")<<48 | hex("device")<<32
	if id>>48 == 0x1000 {
		id |= hex("subsystem_vendor")<<16 | hex("subsystem_device")
	}
	if g.switches == nil {
		g.switches = map[string]uint64{}
	}
	g.switches[dir] = id
	return id
}

// gpus places the visible GPUs.
func (g *gatherer) gpus() []facts.GPUPlacement {
	var out []facts.GPUPlacement
	bus := ""
	if len(g.o.GPUs) > 0 {
		bus = g.resolve("/sys/bus/pci/devices")
	}
	for _, id := range g.o.GPUs {
		norm, err := host.NormalizeBusID(id)
		if err != nil {
			g.warn(err)
			continue
		}
		domain, rest, _ := strings.Cut(norm, ":")
		d, _ := strconv.ParseUint(domain, 16, 32)
		bdf := fmt.Sprintf("%04x:%s", d, strings.ToLower(rest))
		gpu := facts.GPUPlacement{Address: bdf}
		_, gpu.PCI, gpu.IOMMU, gpu.LocalCPUs = g.placement(g.follow(bus, bdf, "/sys/bus/pci/devices/"+bdf))
		out = append(out, gpu)
	}
	return out
}

// kernel reads which of NCCL's peer-memory probes exist.
func (g *gatherer) kernel() facts.RDMAKernel {
	k := facts.RDMAKernel{Release: g.o.KernelRelease, DriverVersion: g.o.DriverVersion, OpenModule: g.o.OpenModule}
	for _, f := range nccl.AllPeermemFiles() {
		_, err := g.host.Stat(f)
		if err == nil {
			k.Peermem = append(k.Peermem, f)
		}
		g.warn(err)
	}
	return k
}
