package nccl

import (
	"reflect"
	"testing"
)

func TestNetPluginNames(t *testing.T) {
	v2_27 := Version{2, 27, 3}
	cases := []struct {
		value string
		set   bool
		v     Version
		want  [][]string
	}{
		{"", false, v2_22, [][]string{{"libnccl-net.so"}}},
		{"", true, v2_22, [][]string{{"libnccl-net.so"}}},
		{"ofi", true, v2_22, [][]string{{"ofi", "libnccl-net-ofi.so"}}},
		{"libnccl-net-ofi.so", true, v2_22, [][]string{{"libnccl-net-ofi.so", "libnccl-net-libnccl-net-ofi.so.so"}}},
		{"libnccl-net-ofi.so", true, v2_27, [][]string{{"libnccl-net-ofi.so"}}},
		{"ofi,/opt/x.so", true, v2_27, [][]string{{"ofi", "libnccl-net-ofi.so"}, {"/opt/x.so"}}},
		{"", true, v2_27, nil},
		{"none", true, v2_27, [][]string{{"none", "libnccl-net-none.so"}}},
		{"NONE", true, v2_30, nil},
	}
	for _, c := range cases {
		s := Settings{}
		if c.set {
			s[NetPlugin] = Setting{c.value, SourceEnvironment}
		}
		if got := NetPlugins(s, c.v); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %q: %q, want %q", c.v, c.value, got, c.want)
		}
	}
}

// NCCL up to 2.22 never looks at /sys/module/nvidia_peermem, the only
// trace the driver's own nvidia_peermem leaves with an inbox RDMA stack
// (NVIDIA/nccl#1676).
func TestPeermemProbeDependsOnTheRelease(t *testing.T) {
	has := func(v Version, f string) bool {
		for _, p := range PeermemFiles(v) {
			if p == f {
				return true
			}
		}
		return false
	}
	const module = "/sys/module/nvidia_peermem/version"
	if has(v2_22, module) || !has(Version{2, 23, 4}, module) {
		t.Error("/sys/module/nvidia_peermem is probed from 2.23.4 only")
	}
	if !has(Version{2, 21, 5}, "/sys/kernel/mm/memory_peers/nvidia-peermem/version") || has(v2_22, "/sys/kernel/mm/memory_peers/nvidia-peermem/version") {
		t.Error("memory_peers/nvidia-peermem is probed up to 2.21 only")
	}
}

func TestVersions(t *testing.T) {
	for in, want := range map[string]Version{"2.22.3": {2, 22, 3}, "2.22.3-1": {2, 22, 3}, " 2.30.7 ": {2, 30, 7}} {
		if got, err := ParseVersion(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "2.22", "2.x.3", "2.22.3.4", "-1.2.3"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if !(Version{}).AtLeast(9, 9, 9) || (Version{2, 22, 3}).AtLeast(2, 23, 0) || !(Version{2, 22, 3}).AtLeast(2, 22, 3) {
		t.Error("AtLeast")
	}
}
