#!/usr/bin/env bash
# Makes, once, the base images Dockerfile.example and examples/*/Dockerfile
# name (GO_IMAGE, BASE_IMAGE), in the real-engine suite's private podman
# storage (scripts/podman.sh). They cannot be pulled here, so each is a
# stand-in built from a debootstrapped root (test/examples/standins/ says
# what each holds and why):
#
#   localhost/gpf-base:bullseye   scripts/rootfs-bullseye.sh's root, imported
#   localhost/gpf-base:bookworm   debootstrap bookworm with gcc, make
#   GO_IMAGE, the paddle and pytorch BASE_IMAGEs   podman build of a stand-in
#
# Usage: scripts/podman-images.sh [CACHE]     CACHE defaults to scripts/cache-dir.sh's folder
#
# Roots are stamped when complete and imported only when missing, so a warm
# run costs a few cache hits. apt inside the stand-in builds uses the host's
# network (--network host); nothing is pulled from a registry (--pull=never).
set -euo pipefail

repo=$(realpath "$(dirname "$0")/..")
cache=$(realpath -m "${1:-$(bash "$repo/scripts/cache-dir.sh")}")
podman=(bash "$repo/scripts/podman.sh")
standins=$repo/test/examples/standins

if [[ $(id -u) -ne 0 ]]; then
	echo "podman-images: debootstrap and podman need root here; run as root" >&2
	exit 1
fi

# import_root NAME DIR: DIR as image NAME, unless NAME exists from this DIR
# (the root's stamp is kept in a label).
import_root() {
	local name=$1 dir=$2 stamp
	stamp=$(sha256sum <"$dir/.gpu-preflight-rootfs" | cut -c1-16)
	if [[ $("${podman[@]}" image inspect --format '{{index .Labels "gpf.root"}}' "$name" 2>/dev/null) == "$stamp" ]]; then
		return
	fi
	echo "podman-images: importing $dir as $name" >&2
	bash "$repo/scripts/log-download.sh" "podman-images: imported $name"
	tar --numeric-owner -C "$dir" --exclude=./.gpu-preflight-rootfs -c . |
		"${podman[@]}" import -q --change "LABEL gpf.root=$stamp" --change 'CMD ["/bin/bash"]' - "$name" >/dev/null
}

# The bookworm root: debootstrap once, stamped like rootfs-bullseye.sh's.
bookworm=$cache/podman/roots/bookworm
recipe="debootstrap --variant=minbase --include=gcc,libc6-dev,make,ca-certificates bookworm"
mkdir -p "$cache/podman"
exec 9>"$cache/podman/roots.lock"
flock 9
if [[ ! -f $bookworm/.gpu-preflight-rootfs || $(<"$bookworm/.gpu-preflight-rootfs") != "$recipe" ]]; then
	tmp=$bookworm.tmp
	rm -rf "$tmp" "$bookworm"
	mkdir -p "$(dirname "$bookworm")"
	echo "podman-images: $recipe (once; cached in $bookworm)" >&2
	bash "$repo/scripts/log-download.sh" "podman-images: $recipe"
	# shellcheck disable=SC2086 # the recipe is the command line
	if ! $recipe "$tmp" >"$bookworm.log" 2>&1; then
		tail -n 20 "$bookworm.log" >&2
		echo "podman-images: debootstrap failed; log in $bookworm.log" >&2
		exit 1
	fi
	# As in Docker's debian images: one deb822 source file, no sources.list
	# (scripts/sysroot.sh reads it), and no apt lists or package caches.
	rm -f "$tmp/etc/apt/sources.list"
	cp /etc/apt/sources.list.d/debian.sources "$tmp/etc/apt/sources.list.d/debian.sources"
	rm -rf "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/lib/apt/lists/*
	printf '%s' "$recipe" >"$tmp/.gpu-preflight-rootfs"
	mv "$tmp" "$bookworm"
fi
bullseye=$(bash "$repo/scripts/rootfs-bullseye.sh" "$cache/rootfs")
flock -u 9

import_root localhost/gpf-base:bookworm "$bookworm"
import_root localhost/gpf-base:bullseye "$bullseye"

# The names the Dockerfiles use, from their ARG defaults.
arg_default() { sed -n "s/^ARG $2=//p" "$repo/$1" | head -n 1; }
go_image=$(arg_default Dockerfile.example GO_IMAGE)
paddle_image=$(arg_default examples/paddle/Dockerfile BASE_IMAGE)
pytorch_image=$(arg_default examples/pytorch/Dockerfile BASE_IMAGE)
if [[ $(arg_default Dockerfile.example BASE_IMAGE) != "$paddle_image" ]]; then
	echo "podman-images: Dockerfile.example and examples/paddle/Dockerfile name different BASE_IMAGEs" >&2
	exit 1
fi

# build IMAGE ARGS...: podman build -t IMAGE ARGS, noted as a download
# when the image changed (a new storage, or a changed stand-in: its RUN
# steps fetch Debian packages), not when podman's build cache answered.
build() {
	local image=$1 before after
	shift
	before=$("${podman[@]}" image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
	after=$("${podman[@]}" build --pull=never --network host -q -t "$image" "$@")
	if [[ ${after#sha256:} != "${before#sha256:}" ]]; then
		bash "$repo/scripts/log-download.sh" "podman-images: built $image"
	fi
}
goroot=$(go env GOROOT)
build "$go_image" -f "$standins/golang.Containerfile" -v "$goroot:/host-go:ro" \
	--build-arg GO_VERSION="$(go env GOVERSION)" "$standins"
build "$paddle_image" -f "$standins/paddle.Containerfile" "$cache/rootfs/paddle-2.6-cuda11.8"
build "$pytorch_image" -f "$standins/pytorch.Containerfile" "$standins/pytorch"
echo "podman-images: $go_image, $paddle_image, $pytorch_image ready" >&2
