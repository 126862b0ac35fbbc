#!/usr/bin/env bash
# Builds the cgo NVML probe inside the Debian bullseye root, so that it links
# against glibc 2.31 and needs no symbol version newer than GLIBC_2.3.3 (a
# build on this bookworm host would need GLIBC_2.34 and fail to start in
# Ubuntu 18.04 / UBI 8 images). SPEC sections 5 and 9.
#
# Usage: scripts/probe-build.sh ROOT OUT
#
# The host's Go tree, module cache and this checkout are bind-mounted into
# ROOT at their own paths, with /proc; a trap unmounts them whatever happens.
# Modules come from the mounted cache only (GOPROXY=off): the chroot needs no
# network.
set -euo pipefail

root=$(realpath "${1:?usage: probe-build.sh ROOT OUT}")
out=$(realpath -m "${2:?usage: probe-build.sh ROOT OUT}")
repo=$(realpath "$(dirname "$0")/..")

if [[ ! -f $root/.ready ]]; then
	echo "probe-build: $root is not a finished bullseye root; run scripts/probe-root.sh $root" >&2
	exit 1
fi
goroot=$(go env GOROOT)
modcache=$(go env GOMODCACHE)
gocache=$repo/.cache/probe-gocache
mkdir -p "$gocache" "$(dirname "$out")"

# One build at a time per root: a second one would stack mounts.
exec 9>"$root.lock"
flock 9

mounted=()
cleanup() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" || true
	done
}
trap cleanup EXIT

bind() {
	mkdir -p "$root$1"
	mount --bind "$1" "$root$1"
	mounted+=("$root$1")
}
mount -t proc proc "$root/proc"
mounted+=("$root/proc")
bind "$goroot"
bind "$modcache"
bind "$repo"

outdir=$(dirname "$out")
case $outdir/ in
"$repo"/*) ;;
*)
	echo "probe-build: OUT must be inside $repo (the only output path mounted)" >&2
	exit 1
	;;
esac

# The inner script gets the paths as $1 and $2, expanded by the chroot's sh.
# shellcheck disable=SC2016
chroot "$root" /usr/bin/env -i \
	PATH="$goroot/bin:/usr/sbin:/usr/bin:/sbin:/bin" HOME=/root \
	GOROOT="$goroot" GOMODCACHE="$modcache" GOCACHE="$gocache" GOPATH=/root/go \
	GOTELEMETRY=off GOTOOLCHAIN=local GOPROXY=off GOFLAGS="-mod=readonly -buildvcs=false" \
	CGO_ENABLED=1 CGO_CFLAGS="-O2 -g -Wno-deprecated-declarations" \
	/bin/sh -c 'cd "$1" && go build -trimpath -ldflags "-s -w" -o "$2" ./cmd/gpu-preflight-nvml' \
	sh "$repo" "$out"
echo "probe-build: built $out in $(basename "$root")" >&2
