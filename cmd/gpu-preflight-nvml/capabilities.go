//go:build cgo

package main

import (
	"errors"
	"runtime"

	"golang.org/x/sys/unix"
)

// The probe observes the driver; it never changes the machine. Run as root,
// NVIDIA's libraries create a missing device node inside nvmlInit and
// exec nvidia-modprobe, setuid root, to load the module (docs/sources.md,
// "NVML"): a node that outlives the probe and counts as driver evidence next
// run. Without CAP_MKNOD and CAP_SYS_MODULE they answer the same and change
// nothing. Capabilities belong to a thread and cgo cannot change every
// thread's, so main stays on the main thread, drops them there before it
// loads a library, and makes every NVML and CUDA call there.
func init() { runtime.LockOSThread() }

var withheld = []int{unix.CAP_MKNOD, unix.CAP_SYS_MODULE}

// dropCapabilities removes withheld from this thread's bounding set (what a
// setuid exec can gain) and its other sets; a process without them, or
// without CAP_SETPCAP, is left as it is.
func dropCapabilities() error {
	for _, c := range withheld {
		if in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err != nil || in != 1 {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EPERM) {
			return err
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData // version 3: two 32-bit words
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	held := false
	for _, c := range withheld {
		d, bit := &data[c/32], uint32(1)<<(c%32)
		if (d.Effective|d.Permitted|d.Inheritable)&bit != 0 {
			held = true
			d.Effective &^= bit
			d.Permitted &^= bit
			d.Inheritable &^= bit
		}
	}
	if !held {
		return nil
	}
	return unix.Capset(&hdr, &data[0])
}
