//go:build container

package container

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// procDriver is the /proc/driver/nvidia tree of a host: what the kernel
// module prints, which the toolkit exposes in the container.
type procDriver struct {
	version string // e.g. "550.54.15"
	gpus    []procGPU
}

type procGPU struct {
	model string
	uuid  string
	bus   string // "0000:18:00.0", the directory name under gpus/
	minor int
}

// write lays out the tree the createContainer hook copies into the
// container. The formats are the kernel module's: the NVRM line of the
// proprietary module and the tab-aligned information file (both as parsed by
// preflight/host, whose comments quote real files); the date, BIOS and IRQ
// values are illustrative.
func (d *procDriver) write(t *testing.T, dir string) {
	t.Helper()
	nv := filepath.Join(dir, "nvidia")
	must(t, os.MkdirAll(filepath.Join(nv, "gpus"), 0o755))
	version := fmt.Sprintf("NVRM version: NVIDIA UNIX x86_64 Kernel Module  %s  Tue Mar  5 22:23:56 UTC 2024\n"+
		"GCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n", d.version)
	must(t, os.WriteFile(filepath.Join(nv, "version"), []byte(version), 0o444))
	for i, g := range d.gpus {
		gd := filepath.Join(nv, "gpus", g.bus)
		must(t, os.MkdirAll(gd, 0o755))
		info := fmt.Sprintf("Model: \t\t %s\nIRQ:   \t\t %d\nGPU UUID: \t %s\nVideo BIOS: \t 96.00.74.00.0d\n"+
			"Bus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t %s\n"+
			"Device Minor: \t %d\nGPU Excluded:\t No\n", g.model, 100+i, g.uuid, g.bus, g.minor)
		must(t, os.WriteFile(filepath.Join(gd, "information"), []byte(info), 0o444))
	}
}
