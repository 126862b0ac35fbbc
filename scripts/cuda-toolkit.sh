#!/usr/bin/env bash
# Fetches NVIDIA's CUDA toolkit as Debian ships it in non-free (bookworm:
# CUDA 11.8 with gcc-11 as its host compiler; trixie: CUDA 12.4, whose host
# compiler is this machine's g++-12) and unpacks it under DIR/SUITE/root
# without installing anything. Only scripts/nvcc-fixtures.sh needs it: the
# test suites read the fixtures it built and committed, never the toolkit.
#
# Usage: scripts/cuda-toolkit.sh bookworm|trixie [DIR]
# DIR defaults to /var/cache/gpu-preflight-cuda, so that a rerun (or another
# checkout) does not download 1 GB again. Prints the unpacked root.
#
# Two fixes make the unpacked nvcc run (both measured on this machine):
#   - nvcc reads nvcc.profile next to itself, which Debian links to a
#     missing /etc/nvcc.profile: one is written with TOP at the unpacked
#     tree, so nvcc finds cicc, libdevice, the headers and libcudadevrt
#     there, and nothing under /usr;
#   - g++-11's libstdc++.so is a relative link to a libstdc++.so.6 that is
#     not in the unpacked tree: it is pointed at the system's.
set -euo pipefail

suite=${1:?usage: cuda-toolkit.sh bookworm|trixie [DIR]}
case $suite in
bookworm) packages=(nvidia-cuda-toolkit nvidia-cuda-dev libnvvm4 libcudart11.0
	gcc-11 g++-11 cpp-11 gcc-11-base libgcc-11-dev libstdc++-11-dev) ;;
trixie) packages=(nvidia-cuda-toolkit nvidia-cuda-dev libnvvm4 libcudart12) ;;
*)
	echo "cuda-toolkit: unknown suite $suite (bookworm: CUDA 11.8, trixie: CUDA 12.4)" >&2
	exit 64
	;;
esac
dir=$(realpath -m "${2:-/var/cache/gpu-preflight-cuda}")/$suite
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9

root=$dir/root
if [[ -f $dir/.ready ]]; then
	echo "$root"
	exit 0
fi

rm -rf "$dir/debs" "$root"
mkdir -p "$dir/debs" "$root"
# shellcheck source=scripts/apt-nonfree.sh
source "$(dirname "$0")/apt-nonfree.sh"
apt_nonfree "$dir" "$suite"
echo "cuda-toolkit: apt-get update ($suite non-free lists under $dir/apt)" >&2
apt-get "${apt_opts[@]}" -qq update >&2
echo "cuda-toolkit: downloading ${packages[*]} (about 1 GB)" >&2
(cd "$dir/debs" && apt-get "${apt_opts[@]}" -qq download "${packages[@]}") 2>&1 | grep -v 'unsandboxed' >&2 || true
for p in "${packages[@]}"; do
	compgen -G "$dir/debs/${p}_*.deb" >/dev/null || {
		echo "cuda-toolkit: $p was not downloaded (see the apt output above)" >&2
		exit 1
	}
done
for deb in "$dir"/debs/*.deb; do
	dpkg -x "$deb" "$root"
done

bin=$root/usr/lib/nvidia-cuda-toolkit/bin
rm -f "$bin/nvcc.profile"
cat >"$bin/nvcc.profile" <<EOF
TOP = $root/usr
NVVMIR_LIBRARY_DIR = \$(TOP)/lib/nvidia-cuda-toolkit/libdevice
PATH += \$(TOP)/lib/nvidia-cuda-toolkit/bin:\$(TOP)/bin:
INCLUDES += -I\$(TOP)/include \$(_SPACE_)
LIBRARIES =+ \$(_SPACE_) -L\$(TOP)/lib/x86_64-linux-gnu/stubs -L\$(TOP)/lib/x86_64-linux-gnu
CICC_PATH = \$(TOP)/lib/nvidia-cuda-toolkit/bin
EOF
if [[ -e $root/usr/lib/gcc/x86_64-linux-gnu/11/libstdc++.so || -L $root/usr/lib/gcc/x86_64-linux-gnu/11/libstdc++.so ]]; then
	ln -sfn /usr/lib/x86_64-linux-gnu/libstdc++.so.6 "$root/usr/lib/gcc/x86_64-linux-gnu/11/libstdc++.so"
fi
"$bin/nvcc" --version | tail -n2 >&2
touch "$dir/.ready"
echo "$root"
