// Package nccl states what NCCL does at init, release by release: its
// configuration grammar, interface and HCA lists, socket interface choice,
// RoCE GID, GPUDirect RDMA probes and levels, and net plugin names. No I/O;
// docs/transport.md cites NCCL's source for each rule.
package nccl

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is an NCCL release; the zero Version is unknown, read as newest.
type Version struct{ Major, Minor, Patch int }

// ParseVersion reads "2.22.3" and "2.22.3-1".
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

// AtLeast reports whether v is major.minor.patch or later; unknown is.
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
