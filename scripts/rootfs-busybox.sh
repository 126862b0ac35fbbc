#!/usr/bin/env bash
# Builds, once, a root filesystem that holds only Debian's busybox-static:
# /bin/busybox and its applet links. No libc, no dynamic loader: the shape of a
# scratch/distroless-static image, where only a static gpu-preflight can run
# and the glibc NVML probe cannot.
#
#   scripts/rootfs-busybox.sh CACHE_DIR    (prints CACHE_DIR/busybox)
#
# Serialised by flock on CACHE_DIR/.busybox.lock; complete only once its
# stamp exists.
set -euo pipefail

cache=${1:?usage: rootfs-busybox.sh CACHE_DIR}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
exec 9>"$cache/.busybox.lock"
flock 9

# The busybox binary comes from the installed busybox-static package, so the
# root is exactly what Debian ships.
bin=$(dpkg -L busybox-static 2>/dev/null | grep -m1 -x '.*/bin/busybox' || true)
if [[ -z $bin || ! -x $bin ]]; then
	echo "rootfs-busybox: busybox-static is not installed (run 'make deps' as root)" >&2
	exit 1
fi
if ! file -b "$bin" | grep -q 'statically linked'; then
	echo "rootfs-busybox: $bin is not statically linked; the root must hold no libc" >&2
	exit 1
fi

root=$cache/busybox
recipe="busybox-static $(dpkg-query -W -f='${Version}' busybox-static) $(sha256sum "$bin" | cut -d' ' -f1)"
if [[ -f $root/.gpu-preflight-rootfs && $(<"$root/.gpu-preflight-rootfs") == "$recipe" ]]; then
	echo "$root"
	exit 0
fi

tmp=$cache/.busybox.tmp
rm -rf "$tmp" "$root"
mkdir -p "$tmp"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,dev,proc,sys,tmp,etc,root,work}
chmod 1777 "$tmp/tmp"
install -m 0755 "$bin" "$tmp/bin/busybox"
# One relative link per applet at the path busybox itself names.
"$bin" --list-full | while read -r applet; do
	[[ $applet == bin/busybox ]] && continue
	ln -sfr "$tmp/bin/busybox" "$tmp/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\ntrainer:x:1000:1000:trainer:/work:/bin/sh\n' >"$tmp/etc/passwd"
printf 'root:x:0:\ntrainer:x:1000:\n' >"$tmp/etc/group"
printf '%s' "$recipe" >"$tmp/.gpu-preflight-rootfs"
mv "$tmp" "$root"
echo "$root"
