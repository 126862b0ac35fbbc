#!/usr/bin/env bash
# Rebuilds the real kernel-image fixtures in preflight/fatbin/testdata/nvcc
# with NVIDIA's nvcc (Debian non-free: CUDA 11.8 from bookworm with gcc-11,
# CUDA 12.4 from trixie with this machine's g++-12, for sm_90a and
# compute_90a, which 11.8 rejects) and writes cuobjdump's listing of each
# into truth.txt, the file the tests compare the scanner with.
#
# Usage: scripts/nvcc-fixtures.sh [TOOLKIT_CACHE]
#
# The fixtures are committed: tests read them and never need the toolkit.
# Run this only to change or add a fixture; it downloads about 2 GB once
# (scripts/cuda-toolkit.sh caches it). The nvcc command of every fixture is
# below, and the same lines head each fixture's block in truth.txt.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/preflight/fatbin/testdata/nvcc
src=$out/src
cache=${1:-/var/cache/gpu-preflight-cuda}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cuda118=$(bash "$here/scripts/cuda-toolkit.sh" bookworm "$cache")
cuda124=$(bash "$here/scripts/cuda-toolkit.sh" trixie "$cache")

truth=$work/truth.txt
cat >"$truth" <<'EOF'
# What cuobjdump --list-elf --list-ptx prints for each fixture (stdout and
# stderr), written by scripts/nvcc-fixtures.sh: the truth the scanner's
# entry lists are compared with. "$" lines are the commands that built it.
EOF

# toolkit selects the nvcc, cuobjdump and host compiler of one CUDA.
toolkit() {
	case $1 in
	11.8) root=$cuda118 ccbin=$cuda118/usr/bin/g++-11 ;;
	12.4) root=$cuda124 ccbin=g++-12 ;;
	esac
	nvcc=$root/usr/lib/nvidia-cuda-toolkit/bin/nvcc
	cuobjdump=$root/usr/bin/cuobjdump
	export PATH=$root/usr/lib/nvidia-cuda-toolkit/bin:$root/usr/bin:/usr/bin:/bin
	cuda=$1
}

# nv runs nvcc in the work folder with the flags every fixture shares, and
# records the command (with the folder names taken out) for truth.txt.
nv() {
	local cmd=(nvcc -ccbin "$(basename "$ccbin")" -Xcompiler -fPIC -cudart shared "$@")
	steps+=("$ (CUDA $cuda) ${cmd[*]}")
	(cd "$work" && "$nvcc" -ccbin "$ccbin" -Xcompiler -fPIC -cudart shared "$@")
}

# fixture NAME: lists work/NAME with cuobjdump into truth.txt and copies it.
fixture() {
	local name=$1
	{
		echo
		echo "== $name"
		printf '%s\n' "${steps[@]}"
		(cd "$work" && "$cuobjdump" --list-elf --list-ptx "$name" 2>&1) | sed "s#$work/##g"
	} >>"$truth"
	cp "$work/$name" "$out/$name"
	steps=()
}

cp "$src"/*.cu "$work"
steps=()

toolkit 11.8
# One cubin.
nv -shared -gencode arch=compute_70,code=sm_70 scale.cu -o sm70.so
fixture sm70.so
# PTX only: the device link adds libcudadevrt's relocatable images to
# __nv_relfatbin, which the runtime never loads.
nv -shared -gencode arch=compute_80,code=compute_80 scale.cu -o ptx80.so
fixture ptx80.so
# Cubins for two targets and PTX for the newer (nvcc compresses the PTX).
nv -shared -gencode arch=compute_70,code=sm_70 -gencode arch=compute_80,code='[sm_80,compute_80]' scale.cu -o mix.so
fixture mix.so
# Every entry compressed, cubins included.
nv -shared -Xfatbin -compress-all -gencode arch=compute_75,code=sm_75 -gencode arch=compute_86,code='[sm_86,compute_86]' scale.cu -o compressed.so
fixture compressed.so
# Relocatable device code across two units: the linked kernel is in the
# device-link fatbin.
nv -rdc=true -c -gencode arch=compute_80,code=sm_80 rdc_main.cu rdc_helper.cu
nv -shared -rdc=true -gencode arch=compute_80,code=sm_80 rdc_main.o rdc_helper.o -o rdc.so
fixture rdc.so
# A static library of kernels linked into a shared library.
nv -lib -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 scale.cu -o libscale.a
fixture libscale.a
nv -shared uses_static.cu libscale.a -o static.so
fixture static.so
# Two units with disjoint targets: one fatbin has only sm_75, the other only
# sm_86, so no GPU runs both kernels.
nv -c -gencode arch=compute_75,code=sm_75 scale.cu -o scale75.o
nv -c -gencode arch=compute_86,code=sm_86 shift.cu -o shift86.o
nv -shared scale75.o shift86.o -o split.so
fixture split.so

toolkit 12.4
# Arch-specific cubin and PTX next to the portable ones.
nv -shared -gencode arch=compute_90,code='[sm_90,compute_90]' -gencode arch=compute_90a,code='[sm_90a,compute_90a]' scale.cu -o sm90-90a.so
fixture sm90-90a.so
# Arch-specific PTX only: compressed, so its suffix is in the entry flags.
nv -shared -gencode arch=compute_90a,code=compute_90a scale.cu -o ptx90a.so
fixture ptx90a.so
# Arch-specific, every entry compressed.
nv -shared -Xfatbin -compress-all -gencode arch=compute_90a,code='[sm_90a,compute_90a]' scale.cu -o compressed90a.so
fixture compressed90a.so
# A CUDA 12.4 build for sm_80 with PTX ISA 8.4.
nv -shared -gencode arch=compute_80,code='[sm_80,compute_80]' scale.cu -o cuda124-sm80.so
fixture cuda124-sm80.so

cp "$truth" "$out/truth.txt"
echo "nvcc-fixtures: wrote $(find "$out" -maxdepth 1 -name '*.so' -o -maxdepth 1 -name '*.a' | wc -l) fixtures and truth.txt to $out" >&2
