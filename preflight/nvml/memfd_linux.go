package nvml

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// startMemfd runs the probe from a sealed anonymous memory file through
// /proc/self/fd/N: nothing touches the disk, so a read-only root or noexec
// /tmp does not matter. Where that is refused (old kernels,
// vm.memfd_noexec=2, seccomp), the error sends Probe on to a file.
func startMemfd(newCmd func(string) *exec.Cmd, image []byte) (*exec.Cmd, error) {
	const name = ProbeName
	// MFD_EXEC (Linux 6.3) asks for an executable memfd, which
	// vm.memfd_noexec=1 would deny; older kernels reject the flag.
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) {
		fd, err = unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	// Closing after Start is safe: the child has exec'd by then.
	defer f.Close()
	if _, err := f.Write(image); err != nil {
		return nil, fmt.Errorf("writing the probe to a memfd: %w", err)
	}
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		return nil, fmt.Errorf("sealing the probe memfd: %w", err)
	}
	cmd := newCmd(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the probe from its memfd: %w", err)
	}
	return cmd, nil
}
