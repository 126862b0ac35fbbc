#!/usr/bin/env bash
# Unpacks, once, a Debian bullseye sysroot for one architecture: the C
# library and kernel headers the cgo NVML probe is compiled and linked
# against. No root, no debootstrap, no chroot, no apt lists: apt's own
# download helper fetches the exact .deb files scripts/sysroot-bullseye.lock
# names, checks each against the SHA-256 pinned there, and dpkg-deb -x
# unpacks them.
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
# Where from: SYSROOT_MIRROR, a Debian mirror's base URL, when set; else the
# host's own Debian mirror, read from its apt sources in either format
# (scripts/apt-sources.sh); else, on a host whose apt knows no Debian mirror
# (Ubuntu's archive has no Debian bullseye), Debian's redirector
# default_mirror below. It says which it used. The pinned hashes make the
# mirror's trust irrelevant: any mirror gives these bytes or fails.
# DIR/.ready marks a complete sysroot (and holds the pins it was made from),
# so an interrupted run is redone, never half-used.
set -euo pipefail

arch=${1:?usage: sysroot.sh ARCH DIR}
dir=$(realpath -m "${2:?usage: sysroot.sh ARCH DIR}")
here=$(dirname "$0")
lock=$here/sysroot-bullseye.lock
# Debian's documented mirror redirector (https://deb.debian.org/).
default_mirror=http://deb.debian.org/debian

mapfile -t pins < <(awk -v a="$arch" '$1 == a' "$lock")
if ((${#pins[@]} == 0)); then
	echo "sysroot: $lock pins no package for architecture $arch (it has: $(awk '!/^#/ && NF {print $1}' "$lock" | sort -u | paste -sd' '))" >&2
	exit 1
fi
# DIR/.ready holds the pins it was made from: a changed lock file remakes it.
ready() { [[ -f $dir/.ready && $(<"$dir/.ready") == "$(printf '%s\n' "${pins[@]}")" ]]; }
if ready; then
	exit 0
fi
mkdir -p "$(dirname "$dir")"
# Parallel makes wait for one download instead of racing on $dir.tmp.
exec 9>"$dir.lock"
flock 9
if ready; then
	exit 0
fi

helper=/usr/lib/apt/apt-helper
for tool in "$helper" dpkg-deb; do
	command -v "$tool" >/dev/null || {
		echo "sysroot: $tool is missing; the sysroot is fetched with apt's download helper and unpacked with dpkg-deb (packages apt, dpkg)" >&2
		exit 1
	}
done

# shellcheck source=scripts/apt-sources.sh
source "$here/apt-sources.sh"
if [[ -n ${SYSROOT_MIRROR:-} ]]; then
	mirror=${SYSROOT_MIRROR%/} from="SYSROOT_MIRROR"
elif host_debian_source; then
	mirror=$debian_uri from="the host's Debian source in $debian_source_file"
else
	mirror=$default_mirror from="the default: the host's apt sources name no Debian mirror (set SYSROOT_MIRROR to choose one)"
fi

work=$dir.tmp
rm -rf "$work"
mkdir -p "$work/debs" "$work/root"
echo "sysroot: bullseye $arch packages from $mirror ($from); once" >&2
bash "$here/log-download.sh" "sysroot: ${#pins[@]} bullseye $arch packages"
for pin in "${pins[@]}"; do
	read -r _ pkg version path sha <<<"$pin"
	deb=$work/debs/${path##*/}
	# The sandbox user is this user: apt's default (_apt) cannot write into
	# a folder another user owns.
	if ! "$helper" -o APT::Sandbox::User="$(id -un)" download-file "$mirror/$path" "$deb" "SHA256:$sha" >"$work/download.log" 2>&1; then
		echo "sysroot: fetching $pkg $version ($arch) from $mirror/$path failed:" >&2
		sed 's/^/  /' "$work/download.log" >&2
		echo "sysroot: set SYSROOT_MIRROR to a Debian mirror that still serves bullseye (an archive mirror once bullseye is archived)" >&2
		exit 1
	fi
	dpkg-deb -x "$deb" "$work/root"
	echo "$pkg $version $arch" >>"$work/packages"
done
# Absolute symbolic links (libc6-dev's lib*.so point at /lib/...) would
# leave the sysroot for the host's libraries; make them relative.
while IFS= read -r link; do
	target=$(readlink "$link")
	[[ $target == /* ]] || continue
	ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$work/root$target")" "$link"
done < <(find "$work/root" -type l)
LC_ALL=C sort -o "$work/packages" "$work/packages"
rm -rf "$work/debs" "$work/download.log"
printf '%s\n' "${pins[@]}" >"$work/.ready"
rm -rf "$dir"
mv "$work" "$dir"
echo "sysroot: ready at $dir/root" >&2
