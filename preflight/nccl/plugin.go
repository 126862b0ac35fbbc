package nccl

import (
	"slices"
	"strings"
)

// NetPlugins lists the net plugins NCCL v tries to load, in order, each as
// the library names it passes to dlopen in turn. Unset, NCCL_NET_PLUGIN
// means "libnccl-net.so". A name is tried as given, then as
// "libnccl-net-NAME.so" (from 2.27.3 only for a name without "/" that is
// not already "lib*.so"). From 2.27.3 the value is a comma list, and from
// 2.28.3 "none" loads no plugin.
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
	var out [][]string
	for name := range strings.SplitSeq(value, ",") {
		if name == "" {
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

// PeermemFiles are the files whose presence tells NCCL v's IB transport
// that a peer-memory module (nv_peer_mem, nvidia_peermem) is loaded: its
// GPUDirect RDMA without DMA-BUF.
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

// HasDMABuf reports whether release v registers GPU memory with the NIC
// through DMA-BUF (NCCL_DMABUF_ENABLE, default 1).
func (v Version) HasDMABuf() bool { return v.atLeast(dmaBufReleased) }
