package nccl

import (
	"slices"
	"strings"
	"testing"
)

var (
	v2_22 = Version{2, 22, 3}
	v2_26 = Version{2, 26, 2}
	v2_30 = Version{2, 30, 7}
)

// The example NCCL's own documentation gives (docs/userguide/source/env.rst).
const docsConf = "NCCL_DEBUG=WARN\nNCCL_SOCKET_IFNAME==ens1f0\n"

func TestConfLineIsCutAtTheFirstEqualsAndNothingIsTrimmed(t *testing.T) {
	got := ParseConf([]byte(docsConf+"NCCL_IB_HCA = mlx5_0\nno equals sign\n=value without name\nNCCL_NET=IB"), v2_22)
	want := []Assignment{{"NCCL_DEBUG", "WARN"}, {"NCCL_SOCKET_IFNAME", "=ens1f0"}, {"NCCL_IB_HCA ", " mlx5_0"}, {"NCCL_NET", "IB"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestConfCommentsExistFrom2_26_2(t *testing.T) {
	conf := []byte("#NCCL_IB_DISABLE=1\n")
	if got := ParseConf(conf, v2_22); len(got) != 1 || got[0].Name != "#NCCL_IB_DISABLE" {
		t.Errorf("2.22.3 read %q, want the variable #NCCL_IB_DISABLE", got)
	}
	if got := ParseConf(conf, v2_26); len(got) != 0 {
		t.Errorf("2.26.2 read %q, want a comment", got)
	}
}

func TestConfCarriageReturnIsDroppedFrom2_30_3(t *testing.T) {
	conf := []byte("NCCL_SOCKET_IFNAME=eth0\r\n")
	if got := ParseConf(conf, v2_22); got[0].Value != "eth0\r" {
		t.Errorf("2.22.3 read %q, want the value eth0\\r", got[0].Value)
	}
	if got := ParseConf(conf, v2_30); got[0].Value != "eth0" {
		t.Errorf("2.30.7 read %q, want eth0", got[0].Value)
	}
}

func TestConfLongLinesAreReadInPiecesFrom2_30_3(t *testing.T) {
	conf := []byte("A=" + strings.Repeat("x", 5000) + "=y\n")
	old := ParseConf(conf, v2_22)
	if len(old) != 1 || len(old[0].Value) != maxConfValue {
		t.Errorf("2.22.3: %d assignments, want one with a value cut at %d bytes", len(old), maxConfValue)
	}
	// 4095 bytes, then the rest "xxx=y" as a line of its own.
	if got := ParseConf(conf, v2_30); len(got) != 2 || got[1].Value != "y" || len(got[1].Name) != 5002-4095 {
		t.Errorf("2.30.7: got %d assignments, want the tail read as a second line", len(got))
	}
}

func TestConfLineEndsAtNUL(t *testing.T) {
	if got := ParseConf([]byte("NCCL_NET=IB\x00junk\nA\x00=B\n"), v2_22); !slices.Equal(got, []Assignment{{"NCCL_NET", "IB"}}) {
		t.Errorf("got %q", got)
	}
}

func env(kv ...string) Lookup {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(name string) (string, bool) { v, ok := m[name]; return v, ok }
}

func TestEnvironmentWinsAndEmptyMasksTheFile(t *testing.T) {
	files := []ConfFile{{"/root/.nccl.conf", []byte("NCCL_IB_HCA=mlx5_0\nNCCL_IB_HCA=mlx5_1\nNCCL_NET=Socket\n")},
		{"/etc/nccl.conf", []byte("NCCL_IB_HCA=mlx5_9\nNCCL_NET_GDR_LEVEL=PHB\nNCCL_DEBUG=INFO\n")}}
	s := Resolve(v2_22, env("NCCL_NET", "", "NCCL_SOCKET_IFNAME", "eth0"), files)
	want := Settings{
		IBHCA:        {"mlx5_0", "/root/.nccl.conf"},
		Net:          {"", SourceEnvironment},
		SocketIfname: {"eth0", SourceEnvironment},
		NetGDRLevel:  {"PHB", "/etc/nccl.conf"},
	}
	if len(s) != len(want) {
		t.Errorf("got %v, want %v", s, want)
	}
	for k, w := range want {
		if s[k] != w {
			t.Errorf("%s = %+v, want %+v", k, s[k], w)
		}
	}
}

func TestConfFileVariableReplacesTheUserFileFrom2_23_4(t *testing.T) {
	e := env("NCCL_CONF_FILE", "/opt/nccl.conf", "HOME", "/home/env")
	cases := []struct {
		v    Version
		want []string
	}{
		{v2_22, []string{"/home/pw/.nccl.conf", "/etc/nccl.conf"}},
		{Version{2, 23, 4}, []string{"/opt/nccl.conf", "/etc/nccl.conf"}},
	}
	for _, c := range cases {
		if got := ConfFiles(c.v, e, "/home/pw"); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.v, got, c.want)
		}
	}
}

func TestHomeComesFromTheEnvironmentFrom2_30_3(t *testing.T) {
	if got := ConfFiles(v2_30, env("HOME", "/home/env"), "/home/pw"); got[0] != "/home/env/.nccl.conf" {
		t.Errorf("2.30.7: %q", got)
	}
	if got := ConfFiles(v2_30, env(), "/home/pw"); !slices.Equal(got, []string{"/etc/nccl.conf"}) {
		t.Errorf("2.30.7 without HOME: %q", got)
	}
	if got := ConfFiles(v2_26, env("HOME", "/home/env"), ""); !slices.Equal(got, []string{"/etc/nccl.conf"}) {
		t.Errorf("2.26.2 for a user without a passwd entry: %q", got)
	}
}

func TestParamReadsAsStrtoll(t *testing.T) {
	for value, want := range map[string]int64{"3": 3, "0x10": 16, "010": 8, "3x": 3, "x": 0, " -1": -1,
		"": -7, "99999999999999999999": -7, "-9223372036854775808": -1 << 63} {
		s := Settings{IBGIDIndex: {value, SourceEnvironment}}
		if got := Param(s, IBGIDIndex, -7); got != want {
			t.Errorf("%q: %d, want %d", value, got, want)
		}
	}
}
