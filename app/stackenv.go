package app

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// supervisedEnvironDrop is the least environment dropped under a supervised job:
// a smaller one stays readable in /proc/1/environ.
const supervisedEnvironDrop = 1 << 20

// releaseKernelEnviron drops the environment execve(2) left on the stack, which the
// runtime copied at start, before a child gets a copy too; only one of atLeast bytes or more.
func releaseKernelEnviron(atLeast uint64) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return
	}
	// proc_pid_stat(5) fields 50 and 51, counted after the parenthesised command name.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 49 {
		return
	}
	start, err1 := strconv.ParseUint(f[47], 10, 64)
	end, err2 := strconv.ParseUint(f[48], 10, 64)
	page := uint64(os.Getpagesize())
	start, end = (start+page-1)&^(page-1), end&^(page-1)
	if err1 == nil && err2 == nil && start < end && end-start >= atLeast {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED)
	}
}
