//go:build cgo

package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// Bounds on the procfs files read.
const (
	maxMapsBytes      = 4 << 20
	maxMountinfoBytes = 4 << 20
)

// driverLibrary says which libnvidia-ml file is mapped, its version and
// whether it is a mount point; nil when none is (it never loaded).
func driverLibrary(init gonvml.Return) *facts.DriverLibrary {
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil
	}
	defer maps.Close()
	path := mappedLibrary(io.LimitReader(maps, maxMapsBytes))
	if path == "" {
		return nil
	}
	l := &facts.DriverLibrary{Path: path, Version: libraryVersion(path), RMVersionMismatch: init == gonvml.ERROR_LIB_RM_VERSION_MISMATCH}
	if mi, err := os.Open("/proc/self/mountinfo"); err == nil {
		defer mi.Close()
		mounted := isMountPoint(io.LimitReader(mi, maxMountinfoBytes), path)
		l.Mounted = &mounted
	}
	return l
}

// mappedLibrary reads a proc(5) maps listing: paths from the sixth field.
func mappedLibrary(maps io.Reader) string {
	s := bufio.NewScanner(maps)
	for s.Scan() {
		f := strings.SplitN(s.Text(), " ", 6)
		if len(f) < 6 {
			continue
		}
		path := strings.TrimSuffix(strings.TrimLeft(f[5], " "), " (deleted)")
		if strings.HasPrefix(filepath.Base(path), "libnvidia-ml.so") {
			return path
		}
	}
	return ""
}

// libraryVersion is the driver version a file name carries
// (libnvidia-ml.so.535.183.01, .so.570.26): "" for a soname such as .so.1.
func libraryVersion(path string) string {
	v, ok := strings.CutPrefix(filepath.Base(path), "libnvidia-ml.so.")
	parts := strings.Split(v, ".")
	if !ok || len(parts) < 2 || len(parts) > 3 || len(parts[0]) < 3 {
		return ""
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return ""
		}
	}
	return v
}

// isMountPoint reads a proc(5) mountinfo listing: mount points are the
// fifth field.
func isMountPoint(mountinfo io.Reader, path string) bool {
	s := bufio.NewScanner(mountinfo)
	s.Buffer(make([]byte, 0, 4096), 64<<10)
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) > 4 && unescapeMount(f[4]) == path {
			return true
		}
	}
	return false
}

// unescapeMount undoes the kernel's \ooo escapes.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
