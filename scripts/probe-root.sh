#!/usr/bin/env bash
# Makes, once, the Debian bullseye root the NVML probe is built in.
#
# Usage: scripts/probe-root.sh DIR
#
# Why bullseye: a cgo binary needs the glibc symbol versions of the libc it
# was linked against. Built on bookworm the probe needs GLIBC_2.34 and would
# not start in Ubuntu 18.04 or UBI 8 images; linked against bullseye's glibc
# 2.31 it needs only GLIBC_2.3.3 (SPEC section 9). The root is made with
# debootstrap's default mirror, gets gcc and libc6-dev, and is marked ready
# only once complete, so an interrupted run is redone, never half-used.
set -euo pipefail

root=${1:?usage: probe-root.sh DIR}
if [[ -f $root/.ready ]]; then
	exit 0
fi
mkdir -p "$(dirname "$root")"
# Parallel makes wait for one debootstrap instead of racing on $root.tmp.
exec 9>"$root.lock"
flock 9
if [[ -f $root/.ready ]]; then
	exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "probe-root: debootstrap and chroot need root; run make as root" >&2
	exit 1
fi
command -v debootstrap >/dev/null || {
	echo "probe-root: debootstrap is missing; run 'make deps'" >&2
	exit 1
}

work=$root.tmp
proc_mounted=
cleanup() {
	if [[ -n $proc_mounted ]]; then
		umount "$work/proc" || umount -l "$work/proc" || true
	fi
}
trap cleanup EXIT

rm -rf "$work"
echo "probe-root: debootstrap --variant=minbase bullseye $work (a few minutes, once)" >&2
debootstrap --variant=minbase bullseye "$work" >"$work.log" 2>&1 || {
	tail -n 30 "$work.log" >&2
	echo "probe-root: debootstrap failed; full log in $work.log" >&2
	exit 1
}
cp /etc/resolv.conf "$work/etc/resolv.conf" 2>/dev/null || true
mount -t proc proc "$work/proc"
proc_mounted=1
export DEBIAN_FRONTEND=noninteractive
chroot "$work" apt-get update -qq
chroot "$work" apt-get install -y -qq --no-install-recommends gcc libc6-dev >/dev/null
chroot "$work" apt-get clean
umount "$work/proc"
proc_mounted=
touch "$work/.ready"
rm -rf "$root"
mv "$work" "$root"
rm -f "$work.log"
echo "probe-root: ready at $root" >&2
