#!/usr/bin/env bash
# Regenerates the truth the debiancuda suite compares the fatbin scanner
# and gpu-arch with: for every library with a .nv_fatbin section in the
# root scripts/debian-cuda.sh builds, what NVIDIA's own cuobjdump (CUDA 12.4,
# Debian trixie's nvidia-cuda-toolkit, fetched by scripts/cuda-toolkit.sh)
# lists in it with --list-elf --list-ptx, counted per kind and target.
#
# Usage: scripts/debian-cuda-listings.sh [OUTDIR]
# OUTDIR defaults to test/debiancuda/testdata/listings; one file per
# library, named after its file, holding:
#   # path <path in the root>
#   # package <Debian package>=<version>
#   # cuobjdump <the tool's release line>
#   cubin sm_80 12        (entries cuobjdump lists for that target)
#   ptx compute_90 3
# cuobjdump names the PTX "<lib>.<n>.sm_90.ptx"; it is written compute_90
# here, as nvcc and gpu-preflight spell a PTX target.
#
# The downloads land where the two fetch scripts put them (CACHE, see
# scripts/debian-cuda.sh); nothing is installed on this machine.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "${1:-$here/../test/debiancuda/testdata/listings}")
root=$(bash "$here/debian-cuda.sh")
toolkit_dir=${CACHE:+$CACHE/cuda-toolkit}
toolkit=$(bash "$here/cuda-toolkit.sh" trixie ${toolkit_dir:+"$toolkit_dir"})
cuobjdump=$toolkit/usr/bin/cuobjdump
release=$("$cuobjdump" --version | sed -n 's/^Cuda compilation tools, //p')
debs=$(dirname "$root")/debs

mkdir -p "$out"
rm -f "$out"/*.txt
# Which package ships each file: one listing per .deb.
declare -A package_of
for deb in "$debs"/*.deb; do
	pkg=$(dpkg-deb -f "$deb" Package)=$(dpkg-deb -f "$deb" Version)
	while read -r f; do
		package_of[$f]=$pkg
	done < <(dpkg-deb -c "$deb" | awk '$1 ~ /^-/ && $NF ~ /\.so/ {sub(/^\.\//, "", $NF); print $NF}')
done

n=0
while read -r lib; do
	rel=${lib#"$root"/}
	readelf -SW "$lib" 2>/dev/null | grep -q ' \.nv_fatbin ' || continue
	listing=$("$cuobjdump" --list-elf --list-ptx "$lib" 2>/dev/null || true)
	{
		echo "# path /$rel"
		echo "# package ${package_of[$rel]:-unknown}"
		echo "# cuobjdump $release --list-elf --list-ptx"
		# "ELF file    1: libx.so.1.sm_80.cubin", "PTX file    1: libx.so.1.sm_90.ptx"
		awk '$1 == "ELF" || $1 == "PTX" {
			name = $NF
			n = split(name, part, ".")
			target = part[n-1]
			if (part[n] == "ptx") { sub(/^sm_/, "compute_", target); print "ptx", target }
			else print "cubin", target
		}' <<<"$listing" | sort | uniq -c | sort -k2,2 -k3,3V | awk '{print $2, $3, $1}'
	} >"$out/$(basename "$lib").txt"
	n=$((n + 1))
done < <(find "$root" -type f -name '*.so*' | sort)
echo "debian-cuda-listings: $n libraries listed into $out with cuobjdump $release" >&2
