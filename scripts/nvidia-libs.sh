#!/usr/bin/env bash
# Fetches the real NVIDIA user-space NVML library, Debian's non-free
# libnvidia-ml1 (535 series in bookworm), and nvidia-smi (which the
# benchmark's NGC-style entrypoint runs), and unpacks them under DIR
# (default .cache/nvidia). On a machine without an NVIDIA kernel driver it loads and
# nvmlInit answers "Driver Not Loaded" (SPEC section 9), which is what the
# end-to-end tests check the probe and the shim against.
#
# Usage: scripts/nvidia-libs.sh [DIR [ARCH]]
# ARCH is a Debian architecture (default: this machine's); for another one
# (arm64 on amd64) only libnvidia-ml1 is fetched, for the tests under qemu.
# Prints the path of libnvidia-ml.so.1 on success.
#
# Nothing is installed on this machine: the host's own Debian source
# (/etc/apt/sources.list.d/debian.sources) is copied under DIR with its
# Components line widened to non-free, and apt runs with its lists and
# caches under DIR too. The package is unpacked with dpkg -x.
set -euo pipefail

dir=$(realpath -m "${1:-$(dirname "$0")/../.cache/nvidia}")
arch=${2:-$(dpkg --print-architecture)}
packages=(libnvidia-ml1:"$arch" nvidia-smi:"$arch")
ready=$dir/.ready-smi
if [[ $arch != "$(dpkg --print-architecture)" ]]; then
	packages=(libnvidia-ml1:"$arch")
	ready=$dir/.ready
fi
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9

find_lib() {
	find "$dir/root" -name 'libnvidia-ml.so.1' \( -type f -o -type l \) -print -quit
}

# .ready-smi: a cache from before nvidia-smi was fetched lacks it.
if [[ -f $ready ]]; then
	find_lib
	exit 0
fi

rm -rf "$dir/debs" "$dir/root"
mkdir -p "$dir/debs" "$dir/root"
# shellcheck source=scripts/apt-nonfree.sh
source "$(dirname "$0")/apt-nonfree.sh"
apt_nonfree "$dir"
apt_opts+=(-o "APT::Architectures=$arch")
echo "nvidia-libs: apt-get update (non-free lists under $dir/apt)" >&2
apt-get "${apt_opts[@]}" -qq update >&2
(cd "$dir/debs" && apt-get "${apt_opts[@]}" -qq download "${packages[@]}") >&2
for deb in "$dir"/debs/*.deb; do
	dpkg -x "$deb" "$dir/root"
done
lib=$(find_lib)
if [[ -z $lib ]]; then
	echo "nvidia-libs: libnvidia-ml1 unpacked, but no libnvidia-ml.so.1 in it (see $dir/root)" >&2
	exit 1
fi
dpkg-deb -f "$dir"/debs/libnvidia-ml1_*.deb Version >"$dir/version"
if [[ $ready == */.ready-smi && ! -x $dir/root/usr/lib/nvidia/current/nvidia-smi ]]; then
	echo "nvidia-libs: nvidia-smi unpacked, but not at usr/lib/nvidia/current/nvidia-smi (see $dir/root)" >&2
	exit 1
fi
touch "$ready"
echo "$lib"
