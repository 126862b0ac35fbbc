package nccl

import (
	"slices"
	"strings"
)

// NetPlugins lists the plugins NCCL v tries, each as the names it
// dlopens in turn.
func NetPlugins(s Settings, v Version) [][]string {
	value, set := s.Get(NetPlugin)
	if !set || value == "" && !v.AtLeast(2, 27, 3) {
		return [][]string{{"libnccl-net.so"}}
	}
	if !v.AtLeast(2, 27, 3) {
		return [][]string{{value, "libnccl-net-" + value + ".so"}}
	}
	if v.atLeast(runningOnly) && strings.EqualFold(value, "none") {
		return nil
	}
	// NCCL keeps 14 plugins (NCCL_NET_MAX_PLUGINS less its two own) and
	// skips a name past 254 bytes (MAX_STR_LEN).
	var out [][]string
	for name := range strings.SplitSeq(value, ",") {
		if len(out) == 14 {
			break
		}
		if name == "" || len(name) > 254 {
			continue
		}
		names := []string{name}
		if !strings.Contains(name, "/") && !(strings.HasPrefix(name, "lib") && strings.HasSuffix(name, ".so")) {
			names = append(names, "libnccl-net-"+name+".so")
		}
		out = append(out, names)
	}
	return out
}

// PeermemFiles are the files whose presence tells NCCL v that
// nv_peer_mem or nvidia_peermem is loaded.
func PeermemFiles(v Version) []string {
	const peers = "/sys/kernel/mm/memory_peers/"
	switch {
	case v.atLeast(peermemModule):
		return []string{peers + "nv_mem/version", peers + "nv_mem_nc/version", "/sys/module/nvidia_peermem/version"}
	case v.atLeast(peermemNC):
		return []string{peers + "nv_mem/version", peers + "nv_mem_nc/version"}
	}
	return []string{peers + "nv_mem/version", peers + "nvidia-peermem/version"}
}

// AllPeermemFiles is every file PeermemFiles names for some release.
func AllPeermemFiles() []string {
	var out []string
	for _, v := range []Version{{2, 21, 5}, peermemNC, peermemModule} {
		for _, f := range PeermemFiles(v) {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// HasDMABuf reports whether release v can register through DMA-BUF.
func (v Version) HasDMABuf() bool { return v.atLeast(dmaBufReleased) }
