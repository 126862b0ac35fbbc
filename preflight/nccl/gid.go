package nccl

import (
	"net/netip"
	"strings"
)

// GID is a GID table entry (ports/N/gids/I, gid_attrs/types/I).
type GID struct {
	Index int        `json:"index"`
	GID   netip.Addr `json:"gid"`
	Type  string     `json:"type,omitempty"`
}

// RoCEVersion is 1 or 2 for a GID's type, 0 when it is neither.
func (g GID) RoCEVersion() int {
	switch {
	case strings.HasPrefix(g.Type, "IB/RoCE v1"), strings.HasPrefix(g.Type, "RoCE v1"):
		return 1
	case strings.HasPrefix(g.Type, "RoCE v2"):
		return 2
	}
	return 0
}

// Configured is NCCL's configuredGid: neither zero nor the bare link-local
// prefix fe80::.
func (g GID) Configured() bool {
	b := g.GID.As16()
	return g.GID.IsValid() && b != [16]byte{} && b != [16]byte{0: 0xfe, 1: 0x80}
}

// valid is NCCL's validGid: configured and not link-local (fe80::/64).
func (g GID) valid() bool {
	b := g.GID.As16()
	return g.Configured() && !(b[0] == 0xfe && b[1] == 0x80 && [6]byte(b[2:8]) == [6]byte{})
}

// family is NCCL's getGidAddrFamily: 4 or 6.
func (g GID) family() int {
	b := g.GID.As16()
	mapped := [12]byte(b[:12]) == [12]byte{10: 0xff, 11: 0xff}
	mcast := [12]byte(b[:12]) == [12]byte{0: 0xff, 1: 0x0e, 10: 0xff, 11: 0xff}
	if mapped || mcast {
		return 4
	}
	return 6
}

// RoCEGIDIndex is the GID NCCL uses on a RoCE port with this table (by
// index, populated entries only): NCCL_IB_GID_INDEX (fixed), else
// ncclIbGetGidIndex's search.
func RoCEGIDIndex(gids []GID, s Settings) (index int, fixed bool) {
	if i := Param(s, IBGIDIndex, -1); i >= 0 {
		return int(min(i, 1<<31)), true
	}
	family := 4
	if f, _ := s.Get(IBAddrFamily); f == "AF_INET6" {
		family = 6
	}
	want := int(Param(s, IBRoCEVersion, 2))
	inRange := addrRange(s, family)
	at := func(i int) GID {
		for _, g := range gids {
			if g.Index == i {
				return g
			}
		}
		return GID{Index: i, GID: netip.IPv6Unspecified()}
	}
	best := 0
	for _, cand := range gids {
		if cand.Index < 1 {
			continue
		}
		cur := at(best)
		match := inRange(cand)
		if cand.family() != cur.family() && cand.family() == family && match {
			best = cand.Index
			continue
		}
		if cand.family() != family || !cand.valid() || !match {
			continue
		}
		if (cur.RoCEVersion() != cand.RoCEVersion() || !cur.valid()) && cand.RoCEVersion() == want {
			best = cand.Index
		}
	}
	return best, false
}

// addrRange is NCCL_IB_ADDR_RANGE as matchGidAddrPrefix applies it; unset
// or unusable, it takes every GID.
func addrRange(s Settings, family int) func(GID) bool {
	r, _ := s.Get(IBAddrRange)
	p, err := netip.ParsePrefix(r)
	if err != nil || p.Addr().Is4() != (family == 4) {
		return func(GID) bool { return true }
	}
	return func(g GID) bool {
		b := g.GID.As16()
		if family == 4 {
			return p.Masked().Contains(netip.AddrFrom4([4]byte(b[12:])))
		}
		return p.Masked().Contains(g.GID)
	}
}
