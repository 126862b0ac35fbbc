// Package nccl states what NCCL itself does at init, release by release, so
// that a rank can be told which network NCCL will use without loading it:
// the grammar of its configuration files and of its interface and HCA
// lists, the socket interface its bootstrap picks, the GID a RoCE port
// uses, its GPUDirect RDMA probes and distance levels, and the net plugin
// names it tries. Nothing here does I/O; docs/transport.md cites the NCCL
// source of each rule.
package nccl

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is an NCCL release. The zero Version is unknown, and is read as
// the newest release the rules know.
type Version struct{ Major, Minor, Patch int }

// ParseVersion reads "2.22.3", as the image scan records it, and also
// "2.22.3-1", as packages and NCCL's tags spell it.
func ParseVersion(s string) (Version, error) {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "-")
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return Version{}, fmt.Errorf("NCCL version %q is not MAJOR.MINOR.PATCH", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return Version{}, fmt.Errorf("NCCL version %q is not MAJOR.MINOR.PATCH", s)
		}
		n[i] = v
	}
	return Version{n[0], n[1], n[2]}, nil
}

// Known reports whether v names a release.
func (v Version) Known() bool { return v != Version{} }

// AtLeast reports whether v is the release major.minor.patch or later; an
// unknown v is.
func (v Version) AtLeast(major, minor, patch int) bool {
	if !v.Known() {
		return true
	}
	if v.Major != major {
		return v.Major > major
	}
	if v.Minor != minor {
		return v.Minor > minor
	}
	return v.Patch >= patch
}

func (v Version) String() string {
	if !v.Known() {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// The first releases (by their tags) with each change the rules follow.
var (
	confFileVar    = Version{2, 23, 4} // NCCL_CONF_FILE replaces ~/.nccl.conf
	peermemModule  = Version{2, 23, 4} // /sys/module/nvidia_peermem probed
	peermemNC      = Version{2, 22, 3} // nv_mem_nc replaces nvidia-peermem
	confComments   = Version{2, 26, 2} // "#" lines skipped
	runningOnly    = Version{2, 28, 3} // interfaces must be IFF_RUNNING; virbr excluded
	confChunks     = Version{2, 30, 3} // fgets of 4096 bytes, "\r" stripped, $HOME
	listTokenizer  = Version{2, 30, 7} // strtok_r/strsep list parser
	dmaBufReleased = Version{2, 13, 4} // NCCL_DMABUF_ENABLE and ibv_reg_dmabuf_mr
)

func (v Version) atLeast(w Version) bool { return v.AtLeast(w.Major, w.Minor, w.Patch) }
