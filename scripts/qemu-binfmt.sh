#!/usr/bin/env bash
# Makes the kernel run linux/arm64 ELF files through Debian's
# qemu-user-static, as its package does on a systemd machine
# (systemd-binfmt reads /usr/lib/binfmt.d/qemu-aarch64.conf at boot). Without
# it the arm64 shim could be started with qemu-aarch64-static by hand, but
# its probe, which the shim execs from a memfd, could not.
#
# Idempotent; needs root when the handler is not registered yet.
set -euo pipefail

conf=/usr/lib/binfmt.d/qemu-aarch64.conf
misc=/proc/sys/fs/binfmt_misc
# The handlers are the kernel's, the mount only shows them: in a chroot or a
# container whose /proc has no binfmt_misc mounted, the host may have
# registered the handler already, and registering it again fails with
# EEXIST. So look through a mount first.
if [[ ! -f $misc/register && $(id -u) -eq 0 ]]; then
	mount -t binfmt_misc binfmt_misc "$misc"
fi
if [[ -f $misc/qemu-aarch64 ]] && grep -qx enabled "$misc/qemu-aarch64"; then
	exit 0
fi
if [[ ! -f $conf ]]; then
	echo "qemu-binfmt: $conf is missing: install qemu-user-static (make deps)" >&2
	exit 1
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "qemu-binfmt: registering the qemu-aarch64 binfmt_misc handler needs root" >&2
	exit 1
fi
# The F flag opens the interpreter now, so it also works inside containers.
cat "$conf" >"$misc/register"
grep -qx enabled "$misc/qemu-aarch64"
echo "qemu-binfmt: registered $(sed -n 's/^interpreter //p' "$misc/qemu-aarch64") for linux/arm64" >&2
