package nccl

import (
	"strconv"
	"strings"
	"testing"
)

var fuzzVersions = []Version{v2_22, v2_26, v2_30}

func FuzzParseConf(f *testing.F) {
	f.Add([]byte(docsConf))
	// The /etc/nccl.conf Azure's HPC images write (Azure/azhpc-images,
	// ubuntu/common/install_nccl.sh).
	f.Add([]byte("NCCL_IB_PCI_RELAXED_ORDERING=1\nCUDA_DEVICE_ORDER=PCI_BUS_ID\nNCCL_TOPO_FILE=/opt/microsoft/ndv4-topo.xml\nNCCL_SOCKET_IFNAME=eth0\n"))
	f.Add([]byte("# comment\r\nNCCL_IB_HCA = =mlx5_0:1\r\n\x00=x\n=\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, v := range fuzzVersions {
			for _, a := range ParseConf(data, v) {
				if a.Name == "" || strings.ContainsAny(a.Name, "=\n\x00") || len(a.Name) > maxConfName {
					t.Fatalf("%s: name %q", v, a.Name)
				}
				if strings.ContainsAny(a.Value, "\n\x00") || len(a.Value) > maxConfValue {
					t.Fatalf("%s: value %q", v, a.Value)
				}
				if !strings.Contains(string(data), a.Name) {
					t.Fatalf("%s: %q=%q is not in the input", v, a.Name, a.Value)
				}
			}
		}
	})
}

func FuzzParseList(f *testing.F) {
	// Values from the issues and scripts docs/transport.md cites.
	for _, s := range []string{"mlx5_2,mlx5_5", "=mlx5_0:1,mlx5_1:1", "^docker,lo", "^=eth0", "eth0:1",
		"mlx5_0:1:2", ":,:", "rdma0,rdma1,rdma2,rdma3,rdma4,rdma5,rdma6,rdma7", "=ens1f0"} {
		f.Add(s, "mlx5_1", 1)
	}
	f.Fuzz(func(t *testing.T, s, name string, port int) {
		for _, v := range fuzzVersions {
			l := ParseList(s, MaxInterfaces, v)
			if len(l.Entries) > MaxInterfaces {
				t.Fatalf("%s: %d entries", v, len(l.Entries))
			}
			for _, e := range l.Entries {
				if e.Prefix == "" || len(e.Prefix) > maxPrefix || strings.ContainsAny(e.Prefix, ",:") {
					t.Fatalf("%s: prefix %q", v, e.Prefix)
				}
			}
			_ = l.Match(name, port)
		}
		// Without ports, the two parsers agree.
		if !strings.Contains(s, ":") {
			a, b := ParseList(s, MaxHCAs, v2_22), ParseList(s, MaxHCAs, v2_30)
			if len(a.Entries) != len(b.Entries) {
				t.Fatalf("%q: %d entries before 2.30.7, %d after", s, len(a.Entries), len(b.Entries))
			}
		}
	})
}

func FuzzParam(f *testing.F) {
	for _, s := range []string{"3", "0x10", "-1", "010", "9223372036854775807", "1e3", " 7 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Param(Settings{IBGIDIndex: {s, ""}}, IBGIDIndex, -99)
		if want, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && !strings.HasPrefix(strings.TrimLeft(strings.TrimSpace(s), "+-"), "0") && got != want {
			t.Fatalf("%q: %d, want %d", s, got, want)
		}
		for _, v := range fuzzVersions {
			_, _ = GDRLevel(Settings{NetGDRLevel: {s, ""}}, v)
			_, _ = ParseVersion(s)
		}
	})
}
