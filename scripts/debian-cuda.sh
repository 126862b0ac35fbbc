#!/usr/bin/env bash
# Builds an image root from real CUDA builds nobody here wrote: Debian
# trixie's PyTorch 2.6 built with CUDA 12.4 (python3-torch-cuda,
# libtorch-cuda-2.6, contrib) and the CUDA libraries it loads (NCCL 2.22.3,
# cuBLAS(Lt) 12.4, magma 2.9, cuFFT, cuSPARSE, cuSOLVER, cuRAND, NPP,
# nvJPEG, the 12.4 runtime; non-free), with every package they depend on,
# as `apt-get install --no-install-recommends` into an empty image would
# place them. Nothing is installed on this machine: apt resolves against an
# empty dpkg status and keeps its lists and caches under DIR (see
# scripts/apt-nonfree.sh), and each package is unpacked with dpkg -x. No
# maintainer script runs, so nvidia-cudnn (a script that downloads cuDNN)
# leaves no cuDNN behind, as in an image built without network access; what
# the others' scripts do that the dynamic loader sees is redone below
# (the BLAS and LAPACK alternatives, /etc/ld.so.cache).
#
# Usage: scripts/debian-cuda.sh [DIR]
# DIR defaults to debian-cuda in the download cache (scripts/cache-dir.sh:
# $CACHE, else /var/cache/gpu-preflight as root, else the user's cache). Prints the unpacked root. The first run downloads about
# 4 GB of .debs (docs/fatbin.md says how long that took here); later runs
# only print the root (they unpack again, from the cached .debs, when this
# script changed).
set -euo pipefail

# The packages the root is built for; apt adds what they depend on.
packages=(python3-torch-cuda libtorch-cuda-2.6 libnccl2 libcublaslt12 libcublas12
	libmagma2 libcudart12)

dir=$(realpath -m "${1:-$(bash "$(dirname "$0")/cache-dir.sh")/debian-cuda}")
root=$dir/root
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
# .ready holds the digest of the scripts that built the root: a root made by
# an older version of them (another package list, another step after the
# unpack) is made again from the cached .debs, never used as it is.
stamp=$(cat "$0" "$(dirname "$0")/apt-nonfree.sh" | sha256sum | cut -d' ' -f1)
if [[ -f $dir/.ready && $(<"$dir/.ready") == "$stamp" ]]; then
	echo "$root"
	exit 0
fi

start=$SECONDS
# shellcheck source=scripts/apt-nonfree.sh
source "$(dirname "$0")/apt-nonfree.sh"
apt_nonfree "$dir" trixie
: >"$dir/apt/status"
apt_opts+=(-o "Dir::State::status=$dir/apt/status" -o APT::Install-Recommends=false)
echo "debian-cuda: apt-get update (trixie lists under $dir/apt)" >&2
bash "$(dirname "$0")/log-download.sh" "debian-cuda: trixie apt lists"
apt-get "${apt_opts[@]}" -qq update >&2
# The simulated install into an empty system names every package and the
# version apt chose; those exact versions are downloaded.
mapfile -t wanted < <(apt-get "${apt_opts[@]}" -s install "${packages[@]}" |
	sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) .*/\1=\2/p')
if ((${#wanted[@]} == 0)); then
	echo "debian-cuda: apt resolved no packages for ${packages[*]}" >&2
	exit 1
fi
mkdir -p "$dir/debs"
missing=()
for w in "${wanted[@]}"; do
	compgen -G "$dir/debs/${w%%=*}_*.deb" >/dev/null || missing+=("$w")
done
if ((${#missing[@]} > 0)); then
	echo "debian-cuda: downloading ${#missing[@]} of ${#wanted[@]} packages into $dir/debs" >&2
	bash "$(dirname "$0")/log-download.sh" "debian-cuda: ${#missing[@]} of ${#wanted[@]} packages"
	(cd "$dir/debs" && apt-get "${apt_opts[@]}" -qq download "${missing[@]}") 2>&1 | grep -v 'unsandboxed' >&2 || true
fi
for w in "${wanted[@]}"; do
	name=${w%%=*}
	compgen -G "$dir/debs/${name}_*.deb" >/dev/null || {
		echo "debian-cuda: $name was not downloaded (see the apt output above)" >&2
		exit 1
	}
done
rm -rf "$root"
mkdir -p "$root"
for deb in "$dir"/debs/*.deb; do
	dpkg -x "$deb" "$root"
done
# What the maintainer scripts of an apt install do that the loader sees:
# libblas3's and liblapack3's postinst register their libraries with
# update-alternatives (the only alternatives of these packages that name a
# shared library), and libc-bin's trigger runs ldconfig, which writes
# /etc/ld.so.cache from the root's /etc/ld.so.conf.d.
for alt in blas lapack; do
	link=/usr/lib/x86_64-linux-gnu/lib$alt.so.3
	name=lib$alt.so.3-x86_64-linux-gnu
	mkdir -p "$root/etc/alternatives"
	ln -sfn "/usr/lib/x86_64-linux-gnu/$alt/lib$alt.so.3" "$root/etc/alternatives/$name"
	ln -sfn "/etc/alternatives/$name" "$root$link"
done
ldconfig -r "$root"
printf '%s\n' "${wanted[@]}" >"$dir/packages.txt"
echo "debian-cuda: ${#wanted[@]} packages fetched and unpacked in $((SECONDS - start)) s" >&2
echo "$stamp" >"$dir/.ready"
echo "$root"
