// Package procdriver writes a host's /proc/driver/nvidia tree as the NVIDIA
// kernel module presents it, for a prepared root (PREFLIGHT_HOST_ROOT) or
// the createContainer hook that mounts it (test/ocihook).
package procdriver

import (
	"fmt"
	"os"
	"path/filepath"
)

// Driver is the tree of one host.
type Driver struct {
	Version string // "550.54.15"
	GPUs    []GPU
}

// GPU is one directory under gpus/.
type GPU struct {
	Model string // "NVIDIA H100 80GB HBM3"
	UUID  string // "GPU-..."
	Bus   string // "0000:18:00.0", the directory name
	Minor int    // the device node's minor number, /dev/nvidiaN
}

// H100 is the first GPU of a DGX H100 board.
var H100 = GPU{Model: "NVIDIA H100 80GB HBM3", UUID: "GPU-00000000-0000-0000-0000-000000000000", Bus: "0000:18:00.0"}

// Write lays out dir/nvidia/version and dir/nvidia/gpus/<bus>/information,
// read-only, dir standing for /proc/driver. The formats are the kernel
// module's, as preflight/host quotes them; build date, BIOS and IRQ are
// illustrative.
func (d Driver) Write(dir string) error {
	nv := filepath.Join(dir, "nvidia")
	if err := os.MkdirAll(filepath.Join(nv, "gpus"), 0o755); err != nil {
		return err
	}
	version := fmt.Sprintf("NVRM version: NVIDIA UNIX x86_64 Kernel Module  %s  Tue Mar  5 22:23:56 UTC 2024\n"+
		"GCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n", d.Version)
	if err := os.WriteFile(filepath.Join(nv, "version"), []byte(version), 0o444); err != nil {
		return err
	}
	for i, g := range d.GPUs {
		gd := filepath.Join(nv, "gpus", g.Bus)
		if err := os.MkdirAll(gd, 0o755); err != nil {
			return err
		}
		info := fmt.Sprintf("Model: \t\t %s\nIRQ:   \t\t %d\nGPU UUID: \t %s\nVideo BIOS: \t 96.00.74.00.0d\n"+
			"Bus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t %s\n"+
			"Device Minor: \t %d\nGPU Excluded:\t No\n", g.Model, 100+i, g.UUID, g.Bus, g.Minor)
		if err := os.WriteFile(filepath.Join(gd, "information"), []byte(info), 0o444); err != nil {
			return err
		}
	}
	return nil
}
