#!/usr/bin/env bash
# Fetches the real NVIDIA user-space NVML library, Debian's non-free
# libnvidia-ml1 (535 series in bookworm), and nvidia-smi (which the
# benchmark's NGC-style entrypoint runs), and unpacks them under DIR
# (default: nvidia under scripts/cache-dir.sh's folder). On a machine without an NVIDIA kernel driver it loads and
# nvmlInit answers "Driver Not Loaded" (docs/sources.md, "NVML"), which is what the
# end-to-end tests check the probe and the shim against. With the set
# "cuda" it fetches the CUDA driver library libcuda1 and the PTX JIT
# compiler it loads (libnvidia-ptxjitcompiler1) into the same root, added
# to an NVML cache that is already there; cuInit then answers
# CUDA_ERROR_NO_DEVICE.
#
# Usage: scripts/nvidia-libs.sh [DIR [ARCH [nvml|cuda]]]
# ARCH is a Debian architecture (default: this machine's); for another one
# (arm64 on amd64) only libnvidia-ml1 is fetched, for the tests under qemu.
# Prints the path of libnvidia-ml.so.1 on success, or with "cuda" the
# directory holding libcuda.so.1.
#
# Nothing is installed on this machine: the host's own Debian source
# (/etc/apt/sources.list.d/debian.sources) is copied under DIR with its
# Components line widened to non-free, and apt runs with its lists and
# caches under DIR too. The package is unpacked with dpkg -x.
set -euo pipefail

dir=$(realpath -m "${1:-$(bash "$(dirname "$0")/cache-dir.sh")/nvidia}")
arch=${2:-$(dpkg --print-architecture)}
set=${3:-nvml}
packages=(libnvidia-ml1:"$arch" nvidia-smi:"$arch")
ready=$dir/.ready-smi
if [[ $arch != "$(dpkg --print-architecture)" ]]; then
	packages=(libnvidia-ml1:"$arch")
	ready=$dir/.ready
fi
case $set in
nvml) ;;
cuda)
	# Added to whatever NVML set is there: other checkouts may be reading it.
	packages=(libcuda1:"$arch" libnvidia-ptxjitcompiler1:"$arch")
	[[ -f $ready ]] && keep=1
	ready=$dir/.ready-cuda-$arch
	;;
*)
	echo "nvidia-libs: unknown library set '$set': want nvml or cuda" >&2
	exit 2
	;;
esac
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9

find_lib() {
	find "$dir/root" -name "$1" \( -type f -o -type l \) -print -quit
}

# answer prints what was asked for.
answer() {
	if [[ $set == cuda ]]; then
		dirname "$(find_lib libcuda.so.1)"
	else
		find_lib libnvidia-ml.so.1
	fi
}

# .ready-smi: a cache from before nvidia-smi was fetched lacks it.
if [[ -f $ready ]]; then
	answer
	exit 0
fi

if [[ -z ${keep:-} ]]; then
	rm -rf "$dir/debs" "$dir/root"
fi
mkdir -p "$dir/debs" "$dir/root"
# shellcheck source=scripts/apt-nonfree.sh
source "$(dirname "$0")/apt-nonfree.sh"
apt_nonfree "$dir"
apt_opts+=(-o "APT::Architectures=$arch")
echo "nvidia-libs: apt-get update (non-free lists under $dir/apt)" >&2
bash "$(dirname "$0")/log-download.sh" "nvidia-libs: $set $arch packages"
apt-get "${apt_opts[@]}" -qq update >&2
(cd "$dir/debs" && apt-get "${apt_opts[@]}" -qq download "${packages[@]}") >&2
for p in "${packages[@]}"; do
	debs=("$dir/debs/${p%%:*}"_*.deb)
	dpkg -x "${debs[0]}" "$dir/root"
done
if [[ $set == cuda ]]; then
	if [[ -z $(find_lib libcuda.so.1) || -z $(find_lib libnvidia-ptxjitcompiler.so.1) ]]; then
		echo "nvidia-libs: libcuda1 unpacked, but no libcuda.so.1 or libnvidia-ptxjitcompiler.so.1 in it (see $dir/root)" >&2
		exit 1
	fi
	dpkg-deb -f "$dir"/debs/libcuda1_*.deb Version >"$dir/version-cuda"
	touch "$ready"
	answer
	exit 0
fi
lib=$(find_lib libnvidia-ml.so.1)
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
