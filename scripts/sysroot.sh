#!/usr/bin/env bash
# Unpacks, once, a Debian bullseye sysroot for one architecture: the C
# library and kernel headers the cgo NVML probe is compiled and linked
# against. No root, no debootstrap, no chroot: apt-get download fetches the
# .deb files with apt's lists and caches under DIR, and dpkg -x unpacks them.
#
# Usage: scripts/sysroot.sh ARCH DIR      ARCH is a Debian architecture: amd64, arm64
#
# Why bullseye: a cgo binary needs the glibc symbol versions of the libc it
# was linked against. Linked against bookworm's glibc 2.36 the probe needs
# GLIBC_2.34 and does not start in Ubuntu 20.04 or UBI 8 images; linked
# against bullseye's glibc 2.31 it needs at most GLIBC_2.3.3 on amd64 and
# GLIBC_2.17 (the first aarch64 glibc) on arm64. scripts/probe-build.sh
# checks the highest version it got (docs/BUILDING.md).
#
# The apt source is derived from the host's (/etc/apt/sources.list.d/
# debian.sources): its first mirror and keyring, suite bullseye. DIR/.ready marks a complete
# sysroot, so an interrupted run is redone, never half-used.
set -euo pipefail

arch=${1:?usage: sysroot.sh ARCH DIR}
dir=$(realpath -m "${2:?usage: sysroot.sh ARCH DIR}")
suite=bullseye
# libc6-dev brings crt*.o, libc.so and the headers; libgcc-s1 the
# libgcc_s.so.1 that gcc's libgcc_s.so link script names.
packages=(libc6 libc6-dev linux-libc-dev libgcc-s1 libcrypt1 libcrypt-dev)

if [[ -f $dir/.ready ]]; then
	exit 0
fi
mkdir -p "$(dirname "$dir")"
# Parallel makes wait for one download instead of racing on $dir.tmp.
exec 9>"$dir.lock"
flock 9
if [[ -f $dir/.ready ]]; then
	exit 0
fi

src=/etc/apt/sources.list.d/debian.sources
if [[ ! -r $src ]]; then
	echo "sysroot: $src is missing; this script derives its bullseye source from the host's Debian source" >&2
	exit 1
fi
for tool in apt-get dpkg-deb; do
	command -v "$tool" >/dev/null || {
		echo "sysroot: $tool is missing; the sysroot is unpacked from Debian packages with apt-get download and dpkg -x" >&2
		exit 1
	}
done

work=$dir.tmp
rm -rf "$work"
mkdir -p "$work/apt/sources" "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/debs" "$work/root"
# The first stanza's mirror and keyring, with bullseye's main suite only:
# bullseye had its last point release, so these packages no longer change
# and two builds months apart link against the same bytes (make dist is
# reproducible). The security archive is left out for the same reason; a
# sysroot is only linked against, never run.
uris=$(sed -n 's/^URIs:[[:space:]]*//p' "$src" | head -n 1)
signed_by=$(sed -n 's/^Signed-By:[[:space:]]*//p' "$src" | head -n 1)
if [[ -z $uris ]]; then
	echo "sysroot: no URIs line in $src to derive the $suite source from" >&2
	exit 1
fi
{
	echo "Types: deb"
	echo "URIs: $uris"
	echo "Suites: $suite"
	echo "Components: main"
	[[ -z $signed_by ]] || echo "Signed-By: $signed_by"
} >"$work/apt/sources/debian.sources"

apt_opts=(
	-o "Dir::Etc::SourceParts=$work/apt/sources"
	-o Dir::Etc::SourceList=/dev/null
	-o "Dir::State::Lists=$work/apt/lists"
	-o "Dir::Cache=$work/apt/cache"
	-o "Dir::State::status=/dev/null"
	-o "APT::Architecture=$arch"
	-o "APT::Architectures=$arch"
	-o Debug::NoLocking=1
	-o APT::Sandbox::User="$(id -un)"
)
echo "sysroot: apt-get download ${packages[*]} ($suite, $arch; once)" >&2
apt-get "${apt_opts[@]}" -qq update >&2
(cd "$work/debs" && apt-get "${apt_opts[@]}" -qq download "${packages[@]/%/:$arch}") >&2
for deb in "$work"/debs/*.deb; do
	dpkg-deb -x "$deb" "$work/root"
	# shellcheck disable=SC2016 # dpkg-deb's own ${Field} syntax
	dpkg-deb --show --showformat='${Package} ${Version} ${Architecture}\n' "$deb" >>"$work/packages"
done
# Absolute symbolic links (libc6-dev's lib*.so point at /lib/...) would
# leave the sysroot for the host's libraries; make them relative.
while IFS= read -r link; do
	target=$(readlink "$link")
	[[ $target == /* ]] || continue
	ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$work/root$target")" "$link"
done < <(find "$work/root" -type l)
sort -o "$work/packages" "$work/packages"
rm -rf "$work/apt" "$work/debs"
touch "$work/.ready"
rm -rf "$dir"
mv "$work" "$dir"
echo "sysroot: ready at $dir/root" >&2
