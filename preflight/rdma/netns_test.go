package rdma

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/preflight/nccl"
)

// netnsLayout builds, in this process's (new) network namespace, the
// layout of ../nccl/testdata/oracle.cases named name: lo up, then each
// interface a veth whose peer (zzN) has no address, running, up without a
// carrier, or down.
func netnsLayout(name string) error {
	// No IPv6 link-local address appears by itself, as in the oracle's.
	if err := os.WriteFile("/proc/sys/net/ipv6/conf/default/addr_gen_mode", []byte("1"), 0); err != nil {
		return err
	}
	nl, err := dialNetlink()
	if err != nil {
		return err
	}
	defer unix.Close(nl)
	if err := linkUp(nl, "lo"); err != nil {
		return err
	}
	f, err := os.Open("../nccl/testdata/oracle.cases")
	if err != nil {
		return err
	}
	defer f.Close()
	in, peers := false, 0
	running := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		switch {
		case fields[0] == "layout":
			in = fields[1] == name
		case in && fields[0] == "if":
			peers++
			peer := fmt.Sprintf("zz%d", peers)
			if err := addVeth(nl, fields[1], peer); err != nil {
				return err
			}
			for _, a := range fields[3:] {
				if err := addAddr(nl, fields[1], netip.MustParsePrefix(a)); err != nil {
					return err
				}
			}
			if fields[2] == "running" {
				if err := linkUp(nl, peer); err != nil {
					return err
				}
			}
			if fields[2] != "down" {
				if err := linkUp(nl, fields[1]); err != nil {
					return err
				}
				running[fields[1]] = fields[2] == "running"
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return settled(running)
}

// IF_OPER_UNKNOWN and IF_OPER_UP (linux/if.h).
const operUnknown, operUp = 0, 6

// settled waits until the kernel's link watcher, which may lag a link's
// change by a second, has set the operational state of each interface
// brought up: up where its peer is (running[name]), known and not up where
// it is not. IFF_RUNNING follows that state.
func settled(running map[string]bool) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := syscall.NetlinkRIB(syscall.RTM_GETLINK, syscall.AF_UNSPEC)
		if err != nil {
			return err
		}
		msgs, err := syscall.ParseNetlinkMessage(b)
		if err != nil {
			return err
		}
		pending := ""
		for _, m := range msgs {
			if m.Header.Type != syscall.RTM_NEWLINK {
				continue
			}
			attrs, _ := syscall.ParseNetlinkRouteAttr(&m)
			name, oper := "", byte(0)
			for _, a := range attrs {
				switch a.Attr.Type {
				case syscall.IFLA_IFNAME:
					name = cString(a.Value)
				case unix.IFLA_OPERSTATE:
					oper = a.Value[0]
				}
			}
			want, brought := running[name]
			if brought && (oper == operUnknown || (oper == operUp) != want) {
				pending = name
			}
		}
		if pending == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s's operational state has not settled", pending)
		}
		time.Sleep(time.Millisecond)
	}
}

func dialNetlink() (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return -1, err
	}
	return fd, unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
}

// attr is one rtnetlink attribute, padded to four bytes.
func attr(typ uint16, data []byte) []byte {
	b := make([]byte, 4, 4+len(data)+3)
	binary.NativeEndian.PutUint16(b[0:2], uint16(4+len(data)))
	binary.NativeEndian.PutUint16(b[2:4], typ)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func cstr(s string) []byte { return append([]byte(s), 0) }

// ifinfo is a struct ifinfomsg.
func ifinfo(index int32, flags, change uint32) []byte {
	b := make([]byte, 16)
	binary.NativeEndian.PutUint32(b[4:8], uint32(index))
	binary.NativeEndian.PutUint32(b[8:12], flags)
	binary.NativeEndian.PutUint32(b[12:16], change)
	return b
}

// request sends one rtnetlink request and waits for the kernel's answer;
// create asks for a new object, else an existing one is changed.
func request(fd int, typ uint16, create bool, body []byte) error {
	flags := uint16(unix.NLM_F_REQUEST | unix.NLM_F_ACK)
	if create {
		flags |= unix.NLM_F_CREATE | unix.NLM_F_EXCL
	}
	msg := make([]byte, 16, 16+len(body))
	binary.NativeEndian.PutUint32(msg[0:4], uint32(16+len(body)))
	binary.NativeEndian.PutUint16(msg[4:6], typ)
	binary.NativeEndian.PutUint16(msg[6:8], flags)
	msg = append(msg, body...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return err
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil || len(msgs) == 0 {
		return fmt.Errorf("netlink answer: %v", err)
	}
	if msgs[0].Header.Type == unix.NLMSG_ERROR && len(msgs[0].Data) >= 4 {
		if e := int32(binary.NativeEndian.Uint32(msgs[0].Data[0:4])); e != 0 {
			return syscall.Errno(-e)
		}
	}
	return nil
}

func addVeth(fd int, name, peer string) error {
	peerInfo := append(ifinfo(0, 0, 0), attr(unix.IFLA_IFNAME, cstr(peer))...)
	info := append(attr(unix.IFLA_INFO_KIND, []byte("veth")), attr(unix.IFLA_INFO_DATA, attr(1 /* VETH_INFO_PEER */, peerInfo))...)
	body := append(ifinfo(0, 0, 0), attr(unix.IFLA_IFNAME, cstr(name))...)
	return request(fd, unix.RTM_NEWLINK, true, append(body, attr(unix.IFLA_LINKINFO, info)...))
}

// ifIndex is if_nametoindex, by ioctl.
func ifIndex(name string) (int32, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return 0, err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFINDEX, ifr); err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return int32(ifr.Uint32()), nil
}

func linkUp(fd int, name string) error {
	i, err := ifIndex(name)
	if err != nil {
		return err
	}
	return request(fd, unix.RTM_NEWLINK, false, ifinfo(i, unix.IFF_UP, unix.IFF_UP))
}

func addAddr(fd int, name string, p netip.Prefix) error {
	i, err := ifIndex(name)
	if err != nil {
		return err
	}
	family, flags := byte(unix.AF_INET), uint32(0)
	if p.Addr().Is6() {
		family, flags = unix.AF_INET6, unix.IFA_F_NODAD
	}
	body := []byte{family, byte(p.Bits()), 0, 0, 0, 0, 0, 0}
	binary.NativeEndian.PutUint32(body[4:8], uint32(i))
	ip := p.Addr().AsSlice()
	body = append(append(append(body, attr(unix.IFA_LOCAL, ip)...), attr(unix.IFA_ADDRESS, ip)...), attr(unix.IFA_FLAGS, binary.NativeEndian.AppendUint32(nil, flags))...)
	return request(fd, unix.RTM_NEWADDR, true, body)
}

// netnsAttr starts a child in a new network namespace: as root without a
// user namespace (which a chroot refuses), otherwise in one of its own.
func netnsAttr() *syscall.SysProcAttr {
	if os.Geteuid() == 0 {
		return &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	}
	return &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}}
}

// The interfaces and addresses read over netlink, in the kernel's order,
// make NCCL's model take the interface Debian's own libnccl2 took in the
// same namespaces (../nccl/testdata/oracle.txt): the gatherer sees what
// getifaddrs shows NCCL.
func TestNamespaceInterfacesGiveNCCLsOwnChoice(t *testing.T) {
	data, err := os.ReadFile("../nccl/testdata/oracle.txt")
	if err != nil {
		t.Fatal(err)
	}
	read := map[string][]nccl.Address{}
	cases := 0
	for line := range strings.SplitSeq(string(data), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, " | ")
		v, err := nccl.ParseVersion(f[0])
		if err != nil {
			t.Fatal(err)
		}
		addrs, ok := read[f[1]]
		if !ok {
			var got struct {
				Links     []facts.Interface
				Addresses []nccl.Address
			}
			runChild(t, netnsAttr(), nil, "layout "+f[1], &got)
			addrs, read[f[1]] = got.Addresses, got.Addresses
			for _, l := range got.Links {
				if l.Name != "lo" && l.Kind != "veth" {
					t.Errorf("layout %s: %s read as kind %q, want veth", f[1], l.Name, l.Kind)
				}
			}
		}
		s := nccl.Settings{}
		if f[2] != "-" {
			for _, kv := range strings.Fields(f[2]) {
				name, value, _ := strings.Cut(kv, "=")
				s[name] = nccl.Setting{Value: value, Source: nccl.SourceEnvironment}
			}
		}
		found, _ := nccl.FindInterfaces(addrs, s, v, 1)
		got := "none"
		if len(found) > 0 {
			got = found[0].Name
		}
		if got != f[3] {
			t.Errorf("NCCL %s, layout %s, %s: the gathered namespace gives %s, NCCL took %s (addresses %v)", f[0], f[1], f[2], got, f[3], addrs)
		}
		cases++
	}
	if cases < 40 {
		t.Fatalf("only %d oracle cases", cases)
	}
}
