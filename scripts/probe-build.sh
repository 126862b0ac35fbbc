#!/usr/bin/env bash
# Builds the cgo NVML probe (cmd/gpu-preflight-nvml) for one architecture,
# linked against a Debian bullseye sysroot (scripts/sysroot.sh), so that it
# needs no glibc symbol version newer than GLIBC_MAX: built against this
# bookworm host's glibc it would need GLIBC_2.34 and fail to start in Ubuntu
# 20.04 or UBI 8 images. No root, no chroot: the host's gcc (or the Debian
# cross compiler for the other architecture) is pointed at the sysroot.
#
# Usage: scripts/probe-build.sh GOARCH OUT      GOARCH: amd64 or arm64
#
# Environment: CACHE (default: scripts/cache-dir.sh) holds the sysroots; GO
# the go command.
set -euo pipefail

goarch=${1:?usage: probe-build.sh GOARCH OUT}
out=$(realpath -m "${2:?usage: probe-build.sh GOARCH OUT}")
repo=$(realpath "$(dirname "$0")/..")
cache=$(realpath -m "$(bash "$repo/scripts/cache-dir.sh")")
go=${GO:-go}

# The highest glibc symbol version the probe may need: glibc 2.28 is what
# Debian 10, RHEL/UBI 8 and Ubuntu 18.10 ship, below every supported
# framework image (docs/BUILDING.md). Bullseye links give 2.3.3 on amd64
# and 2.17 (the first aarch64 glibc) on arm64.
GLIBC_MAX=2.28

case $goarch in
amd64) triplet=x86_64-linux-gnu debarch=amd64 ;;
arm64) triplet=aarch64-linux-gnu debarch=arm64 ;;
*)
	echo "probe-build: GOARCH $goarch is not built (amd64 and arm64 are)" >&2
	exit 1
	;;
esac

# The host's own gcc builds for the host's architecture; Debian's cross
# compiler (gcc-aarch64-linux-gnu, gcc-x86-64-linux-gnu) for the other.
if [[ $("$go" env GOHOSTARCH) == "$goarch" ]]; then
	cc=gcc
else
	cc=$triplet-gcc
fi
if ! command -v "$cc" >/dev/null; then
	echo "probe-build: $cc is missing: the $goarch probe needs it (Debian package gcc-${triplet//_/-}; run 'make deps' as root)" >&2
	exit 1
fi

sysroot=$cache/sysroot-bullseye-$debarch
bash "$repo/scripts/sysroot.sh" "$debarch" "$sysroot"
root=$sysroot/root
lib=$root/usr/lib/$triplet
# --sysroot moves the headers and the system library paths; gcc's own
# library directories are not moved and hold the host's libc.so and crt1.o,
# so -B and -L put the sysroot's first. Only gcc's crtbegin/crtend and
# libgcc.a stay gcc's, which is what they are for.
#
# These go in CGO_CFLAGS and CGO_LDFLAGS, not in CC. Go's linker decides
# some of its external-link flags (-no-pie, --export-dynamic-symbol) by
# linking a trivial C program with the first word of CC and the link flags
# alone (cmd/link's linkerFlagSupported): with the sysroot in CC, that test
# link used the host's own C library for the target, and where the host had
# none (gcc-aarch64-linux-gnu without libc6-dev-arm64-cross) every test
# failed and the probe came out a PIE, 4 137 800 bytes against 3 613 480.
# With the sysroot among the link flags the test links against the sysroot
# on every host and decides the same.
sysroot_flags="--sysroot=$root"
link_flags="$sysroot_flags -B$lib/ -L$lib -L$root/lib/$triplet"

mkdir -p "$(dirname "$out")"
cd "$repo"
# -buildid= : Go's build ID hashes the build's inputs, the sysroot's path
# among them, and would make two clean builds in different folders differ
# in those bytes alone (make dist must be reproducible). -trimpath also
# keeps the CGO_* flags, and so that path, out of the embedded build
# settings. -buildmode=exe is the default, written out because the checks
# below rely on it.
GOOS=linux GOARCH=$goarch CGO_ENABLED=1 CC=$cc \
	CGO_CFLAGS="$sysroot_flags -O2 -g -Wno-deprecated-declarations" CGO_LDFLAGS="$link_flags" \
	GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local GOTELEMETRY=off \
	"$go" build -trimpath -buildmode=exe -ldflags "-s -w -buildid=" -o "$out.tmp" ./cmd/gpu-preflight-nvml

# A position-dependent executable (ELF type EXEC): a PIE (DYN) means Go's
# linker found the toolchain unable to link for the target on its own and
# fell back to the compiler's default, so the bytes now depend on this
# host's packages.
type=$(readelf -h "$out.tmp" | sed -n 's/^ *Type: *\([A-Z]*\).*/\1/p')
if [[ $type != EXEC ]]; then
	echo "probe-build: $out.tmp is ELF type ${type:-unknown}, not EXEC (a position-dependent executable): Go's linker could not test-link for $goarch against $root; run the go build above with -ldflags=-v to see the link" >&2
	exit 1
fi

# The glibc versions the probe needs, from its version-needs section
# (readelf reads every architecture's ELF; objdump -T says the same on the
# host's own).
need=$(readelf -V --wide "$out.tmp" | sed -n 's/.*Name: GLIBC_\([0-9.]*\).*/\1/p' | sort -uV | tail -n 1)
if [[ -z $need ]]; then
	echo "probe-build: $out.tmp needs no GLIBC version at all; that is not a dynamically linked cgo probe" >&2
	exit 1
fi
if [[ $(printf '%s\n' "$need" "$GLIBC_MAX" | sort -V | tail -n 1) != "$GLIBC_MAX" ]]; then
	echo "probe-build: $out.tmp needs GLIBC_$need, above GLIBC_$GLIBC_MAX: it linked against something other than $root" >&2
	exit 1
fi
mv "$out.tmp" "$out"
# The C compiler is part of the probe's bytes (its code, and its version in
# .comment): make dist's BUILDINFO names it, so two hosts that disagree on
# the bytes can see whether they disagree on the toolchain.
echo "cc linux/$goarch: $("$cc" --version | head -n 1)" >"$out.toolchain"
echo "probe-build: built $out for linux/$goarch against bullseye, needs GLIBC_$need at most" >&2
