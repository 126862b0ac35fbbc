package app

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// environDrop is the least environment dropped before the job starts: a
// smaller one costs nothing worth a read of /proc and stays in /proc/PID/environ.
const environDrop = 1 << 20

// releaseKernelEnviron drops the environment execve(2) left on the stack, of atLeast bytes or more:
// the runtime copied it at start, and a child is about to get a copy too.
func releaseKernelEnviron(atLeast uint64) {
	size := uint64(0)
	for _, kv := range syscall.Environ() {
		size += uint64(len(kv)) + 1
	}
	if size < atLeast {
		return
	}
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return
	}
	// proc_pid_stat(5): env_start and env_end, fields 50 and 51; the third follows the command's ")".
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 51-2 {
		return
	}
	start, err1 := strconv.ParseUint(f[50-3], 10, 64)
	end, err2 := strconv.ParseUint(f[51-3], 10, 64)
	page := uint64(os.Getpagesize())
	start, end = (start+page-1)&^(page-1), end&^(page-1)
	if err1 == nil && err2 == nil && start < end && end-start >= atLeast {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED)
	}
}
