package nccl

import (
	"bufio"
	"net/netip"
	"os"
	"strings"
	"testing"
)

// oracleLayouts reads testdata/oracle.cases: each layout's addresses in
// the order getifaddrs lists them, lo first (up, 127.0.0.1 and ::1).
func oracleLayouts(t *testing.T) map[string][]Address {
	t.Helper()
	f, err := os.Open("testdata/oracle.cases")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type iface struct {
		name    string
		running bool
		addrs   []netip.Prefix
	}
	layouts := map[string][]iface{}
	var name string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch fields[0] {
		case "layout":
			name = fields[1]
			layouts[name] = []iface{{"lo", true, []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8"), netip.MustParsePrefix("::1/128")}}}
		case "if":
			i := iface{name: fields[1], running: fields[2] == "running"}
			for _, a := range fields[3:] {
				i.addrs = append(i.addrs, netip.MustParsePrefix(a))
			}
			layouts[name] = append(layouts[name], i)
		}
	}
	out := map[string][]Address{}
	for name, ifs := range layouts {
		for _, v4 := range []bool{true, false} {
			for index, i := range ifs {
				for _, p := range i.addrs {
					if p.Addr().Is4() == v4 {
						out[name] = append(out[name], Address{i.name, index + 1, p, i.running})
					}
				}
			}
		}
	}
	return out
}

// The bootstrap takes the interface Debian's own libnccl2 took in each
// case of testdata/oracle.cases, for 2.22.3 and 2.29.7 alike (truth:
// testdata/oracle.txt, written by scripts/rdma-debian.sh oracle).
func TestBootstrapTakesTheInterfaceNCCLTook(t *testing.T) {
	layouts := oracleLayouts(t)
	data, err := os.ReadFile("testdata/oracle.txt")
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]bool{}
	n := 0
	for line := range strings.SplitSeq(string(data), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, " | ")
		if len(f) != 4 {
			t.Fatalf("oracle line %q: want VERSION | LAYOUT | SETTINGS | CHOICE", line)
		}
		v, err := ParseVersion(f[0])
		if err != nil {
			t.Fatal(err)
		}
		addrs, ok := layouts[f[1]]
		if !ok {
			t.Fatalf("oracle line %q: no layout %s in oracle.cases", line, f[1])
		}
		s := Settings{}
		if f[2] != "-" {
			for _, kv := range strings.Fields(f[2]) {
				name, value, _ := strings.Cut(kv, "=")
				s[name] = Setting{value, SourceEnvironment}
			}
		}
		got := "none"
		found, known := FindInterfaces(addrs, s, v, 1)
		if !known {
			t.Fatalf("%s: the model could not decide", line)
		}
		if len(found) > 0 {
			got = found[0].Name
		}
		if got != f[3] {
			t.Errorf("NCCL %s, layout %s, %s: model takes %s, NCCL took %s", f[0], f[1], f[2], got, f[3])
		}
		versions[f[0]] = true
		n++
	}
	if n < 40 || len(versions) < 2 {
		t.Fatalf("oracle.txt holds %d cases of %d NCCL releases: regenerate it with scripts/rdma-debian.sh oracle", n, len(versions))
	}
}
