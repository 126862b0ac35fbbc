package rdma

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"

	"github.com/gpu-preflight/gpu-preflight/preflight/rdma/rdmatest"
)

func FuzzParseProcFiles(f *testing.F) {
	f.Add(rdmatest.StatusRoot, rdmatest.LimitsUnlimited)
	// Docker's default under containerd: 8 MiB, and a user's status.
	f.Add("Uid:\t1000\t1000\t1000\t1000\nCapEff:\t0000000000000000\nCapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\nCpus_allowed_list:\t0-3\n",
		"Max locked memory         8388608              8388608              bytes     \n")
	f.Fuzz(func(t *testing.T, status, limits string) {
		var p facts.RankProcess
		ParseStatus(status, &p)
		soft, hard := ParseMemlock(limits)
		if soft < -1 || hard < -1 {
			t.Fatalf("limits %d %d", soft, hard)
		}
		_ = PasswdHome(status, 0)
	})
}

func FuzzParseSysfs(f *testing.F) {
	// Attribute values as drivers/infiniband/core/sysfs.c prints them.
	for _, s := range []string{"4: ACTIVE", "5: LinkUp", "1: DOWN", "fe80:0000:0000:0000:ba59:9fff:fe2e:1a4c",
		"0000:0000:0000:0000:0000:ffff:0a0a:0105", "0000:0000:0000:0000:0000:0000:0000:0000", "driver mlx5\n", "# comment\n\tdriver\t efa \n",
		// An IFLA_LINKINFO attribute holding IFLA_INFO_KIND "veth".
		"\x09\x00\x01\x00veth\x00\x00\x00\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, name := ParseState(s)
		if n >= 0 && !strings.HasSuffix(s, name) {
			t.Fatalf("%q: %d %q", s, n, name)
		}
		if g, ok := ParseGID(s); ok && !g.Is6() {
			t.Fatalf("%q: GID %v", s, g)
		}
		if k := linkKind([]byte(s)); len(k) > len(s) {
			t.Fatalf("%q: kind %q", s, k)
		}
		for _, d := range ParseDriverConfig(s) {
			if d == "" || strings.ContainsAny(d, " \t\n") {
				t.Fatalf("%q: driver %q", s, d)
			}
		}
	})
}

// A name verbsFile reads is libibverbs.so.1.<abi>.<core>.<rest>, with the
// numbers it gives written in decimal (leading zeros aside).
func FuzzVerbsFile(f *testing.F) {
	f.Add("libibverbs.so.1.14.44.0") // Debian bookworm's libibverbs1
	f.Add("libibverbs.so.1.014.56.0")
	f.Add("libibverbs.so.1")
	f.Fuzz(func(t *testing.T, name string) {
		abi, core, ok := verbsFile(name)
		if !ok {
			return
		}
		rest, found := strings.CutPrefix(name, "libibverbs.so.1.")
		parts := strings.SplitN(rest, ".", 3)
		decimal := func(s string, n int) bool {
			return s != "" && (strings.TrimLeft(s, "0") == strconv.Itoa(n) || n == 0 && strings.Trim(s, "0") == "")
		}
		if !found || len(parts) != 3 || !decimal(parts[0], abi) || !decimal(parts[1], core) {
			t.Fatalf("%q read as ABI %d, rdma-core %d", name, abi, core)
		}
	})
}
