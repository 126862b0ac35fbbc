package nccl

import (
	"net/netip"
	"testing"
)

// roceTable is a ConnectX port's GID table with an IPv4 and an IPv6
// address on its netdev, as the kernel fills it: each address once as
// RoCE v1, once as v2.
func roceTable() []GID {
	g := func(i int, addr, typ string) GID { return GID{i, netip.MustParseAddr(addr), typ} }
	return []GID{
		g(0, "fe80::ba59:9fff:fe2e:1a4c", "IB/RoCE v1"),
		g(1, "fe80::ba59:9fff:fe2e:1a4c", "RoCE v2"),
		g(2, "::ffff:10.10.1.5", "IB/RoCE v1"),
		g(3, "::ffff:10.10.1.5", "RoCE v2"),
		g(4, "fd00:10::5", "IB/RoCE v1"),
		g(5, "fd00:10::5", "RoCE v2"),
	}
}

func TestRoCEGIDSearchTakesTheIPv4RoCEv2Entry(t *testing.T) {
	cases := []struct {
		name string
		s    Settings
		want int
	}{
		{"default", Settings{}, 3},
		{"AF_INET6", Settings{IBAddrFamily: {"AF_INET6", ""}}, 5},
		{"RoCE v1", Settings{IBRoCEVersion: {"1", ""}}, 2},
		{"range outside", Settings{IBAddrRange: {"10.20.0.0/16", ""}}, 0},
		{"range inside", Settings{IBAddrRange: {"10.10.0.0/16", ""}}, 3},
	}
	for _, c := range cases {
		if got, fixed := RoCEGIDIndex(roceTable(), c.s); got != c.want || fixed {
			t.Errorf("%s: index %d (fixed %v), want %d", c.name, got, fixed, c.want)
		}
	}
}

func TestRoCEGIDIndexSettingIsTakenAsIs(t *testing.T) {
	if got, fixed := RoCEGIDIndex(roceTable(), Settings{IBGIDIndex: {"7", ""}}); got != 7 || !fixed {
		t.Errorf("NCCL_IB_GID_INDEX=7: %d, fixed %v", got, fixed)
	}
	if got, fixed := RoCEGIDIndex(roceTable(), Settings{IBGIDIndex: {"-1", ""}}); got != 3 || fixed {
		t.Errorf("NCCL_IB_GID_INDEX=-1 searches: %d, fixed %v", got, fixed)
	}
}

func TestGIDWithoutAnAddressIsNotConfigured(t *testing.T) {
	for addr, want := range map[string]bool{"::": false, "fe80::": false, "fe80::1": true, "::ffff:10.0.0.1": true} {
		if got := (GID{GID: netip.MustParseAddr(addr)}).Configured(); got != want {
			t.Errorf("%s configured: %v, want %v", addr, got, want)
		}
	}
}
