//go:build cgo

package main

import (
	"errors"
	"runtime"

	"golang.org/x/sys/unix"
)

// The probe observes the driver; it never changes the machine. NVIDIA's
// user-space libraries, run as root, create the device node they are about
// to open when it is missing and /proc/driver/nvidia/params does not say
// otherwise (ModifyDeviceFiles), and fork/exec nvidia-modprobe, setuid
// root, to load the kernel module and make nodes when it is installed
// (nvidia-modprobe(1)). Debian's libnvidia-ml 535 on a driverless host reads
// the missing params file and calls
// mknodat("/dev/nvidiactl", S_IFCHR|0666, makedev(195, 255)) inside
// nvmlInit (strace; docs/sources.md, "NVML"). That node outlives the probe,
// and the next run counts it as driver evidence. Without CAP_MKNOD the same
// library gives the same answer ("Driver Not Loaded") and leaves /dev as it
// was; without CAP_SYS_MODULE in the bounding set, nvidia-modprobe cannot
// load a module on the probe's behalf.
//
// Capabilities belong to a thread, and with cgo Go cannot change them on
// every thread (syscall.AllThreadsSyscall refuses), so init locks the main
// goroutine to the main thread, main drops them there before it loads any
// library, and every NVML and CUDA call runs on that thread; threads and
// processes the libraries start inherit its sets.
func init() { runtime.LockOSThread() }

// withheld are the capabilities the probe gives up.
var withheld = []int{unix.CAP_MKNOD, unix.CAP_SYS_MODULE}

// dropCapabilities removes withheld from this thread's bounding set (what
// an exec'd setuid program can gain) and its effective, permitted and
// inheritable sets. A process that lacks them, or cannot drop them from
// the bounding set (no CAP_SETPCAP: not root), is left as it is.
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
