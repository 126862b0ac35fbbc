package nccl

import (
	"net/netip"
	"strings"
)

// Address is an IP entry of getifaddrs(3), in glibc's order: the kernel's
// dump, IPv4 by interface index, then IPv6.
type Address struct {
	Interface string       `json:"interface"`
	Index     int          `json:"index"`
	Prefix    netip.Prefix `json:"prefix"`
	// Running is the interface's IFF_RUNNING: up, with a carrier.
	Running bool `json:"running"`
}

// Interface is an interface NCCL chose, with the address it uses.
type Interface struct {
	Name string     `json:"name"`
	Addr netip.Addr `json:"addr"`
}

// FindInterfaces is ncclFindInterfaces: the interfaces (at most max) NCCL v
// uses, by NCCL_SOCKET_IFNAME or its default order. ok is false when
// NCCL_COMM_ID names a host, which the model cannot resolve.
func FindInterfaces(addrs []Address, s Settings, v Version, max int) (found []Interface, ok bool) {
	family := socketFamily(s)
	if env, _ := s.Get(SocketIfname); len(env) > 1 {
		return find(addrs, ParseList(env, MaxInterfaces, v), family, v, max), true
	}
	if found = find(addrs, ParseList("ib", MaxInterfaces, v), family, v, max); len(found) > 0 {
		return found, true
	}
	if id, _ := s.Get(CommID); len(id) > 1 {
		remote, known := commIDAddr(id)
		if !known {
			return nil, false
		}
		if found = matchSubnet(addrs, remote); len(found) > 0 {
			return found, true
		}
	}
	order := []string{"^docker,lo", "docker", "lo"}
	if v.atLeast(runningOnly) {
		order = []string{"^docker,lo,virbr", "docker", "lo", "virbr"}
	}
	for _, filter := range order {
		if found = find(addrs, ParseList(filter, MaxInterfaces, v), family, v, max); len(found) > 0 {
			break
		}
	}
	return found, true
}

// socketFamily is NCCL_SOCKET_FAMILY: 4, 6, or 0 for either.
func socketFamily(s Settings) int {
	switch f, _ := s.Get(SocketFamily); f {
	case "AF_INET":
		return 4
	case "AF_INET6":
		return 6
	}
	return 0
}

// find is findInterfaces: the first address of each interface the list
// takes, skipping IPv6 loopback and, from 2.28.3, interfaces not running.
func find(addrs []Address, l List, family int, v Version, max int) []Interface {
	var out []Interface
	for _, a := range addrs {
		if len(out) == max {
			break
		}
		ip := a.Prefix.Addr()
		switch {
		case !ip.IsValid(),
			v.atLeast(runningOnly) && !a.Running,
			family == 4 && !ip.Is4(), family == 6 && ip.Is4(),
			ip.Is6() && ip.IsLoopback(),
			!l.Match(a.Interface, -1),
			chosen(out, a.Interface):
			continue
		}
		out = append(out, Interface{a.Interface, ip})
	}
	return out
}

func chosen(ifs []Interface, name string) bool {
	for _, i := range ifs {
		if i.Name == name {
			return true
		}
	}
	return false
}

// commIDAddr reads the address of NCCL_COMM_ID, "IPv4:port" or
// "[IPv6]:port"; known is false for a host name.
func commIDAddr(id string) (addr netip.Addr, known bool) {
	host := id
	if i := strings.LastIndexByte(id, ':'); i > 0 {
		host = id[:i]
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	addr, err := netip.ParseAddr(host)
	return addr, err == nil
}

// matchSubnet is ncclFindInterfaceMatchSubnet; a link-local IPv6 address's
// scope never equals NCCL_COMM_ID's.
func matchSubnet(addrs []Address, remote netip.Addr) []Interface {
	for _, a := range addrs {
		ip := a.Prefix.Addr()
		if ip.Is4() != remote.Is4() || ip.Is6() && ip.IsLinkLocalUnicast() {
			continue
		}
		if a.Prefix.Masked().Contains(remote) {
			return []Interface{{a.Interface, ip}}
		}
	}
	return nil
}
