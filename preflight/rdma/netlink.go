package rdma

import (
	"encoding/binary"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"net/netip"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/preflight/nccl"
)

// maxLinks bounds the interfaces and addresses kept; a host network
// namespace with a few hundred veths stays well under it.
const maxLinks = 4096

// interfaces asks the kernel, over rtnetlink, for the namespace's
// interfaces and their addresses, as glibc's getifaddrs does (a link dump,
// then an address dump of every family): the addresses keep the dump's
// order, which is the order NCCL walks them in.
func (g *gatherer) interfaces() ([]facts.Interface, []nccl.Address) {
	links, err := dumpLinks()
	if err != nil {
		g.warn(err)
		return nil, nil
	}
	addrs, err := dumpAddresses(links)
	g.warn(err)
	return links, addrs
}

func dumpLinks() ([]facts.Interface, error) {
	b, err := syscall.NetlinkRIB(syscall.RTM_GETLINK, syscall.AF_UNSPEC)
	if err != nil {
		return nil, err
	}
	msgs, err := syscall.ParseNetlinkMessage(b)
	if err != nil {
		return nil, err
	}
	var out []facts.Interface
	for _, m := range msgs {
		if m.Header.Type != syscall.RTM_NEWLINK || len(m.Data) < syscall.SizeofIfInfomsg || len(out) == maxLinks {
			continue
		}
		// struct ifinfomsg: family, pad, type, index, flags, change.
		flags := binary.NativeEndian.Uint32(m.Data[8:12])
		l := facts.Interface{Index: int(int32(binary.NativeEndian.Uint32(m.Data[4:8]))),
			Up: flags&syscall.IFF_UP != 0, Running: flags&syscall.IFF_RUNNING != 0}
		attrs, err := syscall.ParseNetlinkRouteAttr(&m)
		if err != nil {
			continue
		}
		for _, a := range attrs {
			switch a.Attr.Type {
			case syscall.IFLA_IFNAME:
				l.Name = cString(a.Value)
			case unix.IFLA_LINKINFO:
				l.Kind = linkKind(a.Value)
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// linkKind reads IFLA_INFO_KIND from an IFLA_LINKINFO attribute: the
// kind of a virtual interface ("veth", "bridge").
func linkKind(b []byte) string {
	for len(b) >= 4 {
		n := int(binary.NativeEndian.Uint16(b[0:2]))
		typ := binary.NativeEndian.Uint16(b[2:4])
		if n < 4 || n > len(b) {
			return ""
		}
		if typ == unix.IFLA_INFO_KIND {
			return cString(b[4:n])
		}
		b = b[min(len(b), (n+3)&^3):]
	}
	return ""
}

func dumpAddresses(links []facts.Interface) ([]nccl.Address, error) {
	b, err := syscall.NetlinkRIB(syscall.RTM_GETADDR, syscall.AF_UNSPEC)
	if err != nil {
		return nil, err
	}
	msgs, err := syscall.ParseNetlinkMessage(b)
	if err != nil {
		return nil, err
	}
	var out []nccl.Address
	for _, m := range msgs {
		if m.Header.Type != syscall.RTM_NEWADDR || len(m.Data) < syscall.SizeofIfAddrmsg || len(out) == maxLinks {
			continue
		}
		// struct ifaddrmsg: family, prefixlen, flags, scope, index.
		prefixLen, index := int(m.Data[1]), int(binary.NativeEndian.Uint32(m.Data[4:8]))
		attrs, err := syscall.ParseNetlinkRouteAttr(&m)
		if err != nil {
			continue
		}
		// glibc takes IFA_LOCAL as the address when there is one (on a
		// point-to-point link IFA_ADDRESS is the peer's).
		var local, address []byte
		for _, a := range attrs {
			switch a.Attr.Type {
			case syscall.IFA_LOCAL:
				local = a.Value
			case syscall.IFA_ADDRESS:
				address = a.Value
			}
		}
		if local == nil {
			local = address
		}
		ip, ok := netip.AddrFromSlice(local)
		if !ok {
			continue
		}
		a := nccl.Address{Index: index, Prefix: netip.PrefixFrom(ip, prefixLen)}
		if i := slices.IndexFunc(links, func(l facts.Interface) bool { return l.Index == a.Index }); i >= 0 {
			a.Interface, a.Running = links[i].Name, links[i].Running
		}
		out = append(out, a)
	}
	return out, nil
}

func cString(b []byte) string {
	if i := slices.Index(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
