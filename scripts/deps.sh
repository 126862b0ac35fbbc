#!/usr/bin/env bash
# Installs what the build and the test suites need on a fresh Debian
# machine; `deps.sh build` only what make dist and make release need (the
# release workflow); `deps.sh --list` names every package it may install.
# As root it installs missing Debian packages; otherwise it names them and
# fails, since a suite without its tools would prove nothing.
set -euo pipefail

# Every package is named: apt-get installs with --no-install-recommends, so
# nothing a suite needs may arrive only as a recommendation (as
# libc6-dev-arm64-cross once did). test/fresh runs this in a debootstrap
# --variant=minbase root where nothing else was installed.
# The build itself: make, git (the version is git describe), gcc and the C
# library headers for the probe, apt's download helper and dpkg-deb for its
# sysroot, CA certificates for the Go module proxy.
packages=(make git ca-certificates apt dpkg gcc libc6-dev binutils gcc-aarch64-linux-gnu)
only_build=false
list=false
case ${1:-} in
build) only_build=true ;;
--list) list=true ;;
'') ;;
*)
	echo "usage: deps.sh [build|--list]" >&2
	exit 2
	;;
esac
if ! $only_build; then
	# The suites: runc and the roots it runs, the init programs the start-up
	# table compares with, GNU time, shellcheck, file, python3.
	packages+=(runc debootstrap busybox-static tini dumb-init time shellcheck file python3-minimal)
	# The Python environments' proof against the real interpreter
	# (preflight/pyenv): venv, pip, setuptools and wheel write the layouts it reads.
	packages+=(python3-venv python3-pip python3-setuptools python3-wheel)
	# linux/arm64 (the build's cross compiler is above; the probe's sysroot is
	# unpacked without root, scripts/sysroot.sh): the cross C library the fake
	# NVML is built against and runs on (test-dist), and qemu to run it all.
	packages+=(libc6-dev-arm64-cross qemu-user-static)
	# The real-engine suite (mk/podman.mk): podman and buildah with runc, and
	# catatonit, which `podman run --init` needs.
	packages+=(podman buildah catatonit fuse-overlayfs uidmap slirp4netns conmon containers-storage)
	# The journal suite (mk/journald.mk): systemd-journal-remote writes a
	# journal file from an export stream, systemd's journalctl prints it.
	packages+=(systemd systemd-journal-remote)
fi
if $list; then
	# Every package it may install, one a line (test/fresh keys its cache
	# on this list).
	printf '%s\n' "${packages[@]}" nodejs npm
	exit 0
fi
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# The examples suite runs Grafana's LogQL grammar with Node.js and installs
# it with npm (scripts/logql-grammar.sh). Any Node.js on PATH will do, so
# Debian's packages are installed only when there is none: a machine may
# carry another build whose nodejs package conflicts with Debian's npm.
if ! $only_build; then
	command -v node >/dev/null || missing+=(nodejs)
	command -v npm >/dev/null || missing+=(npm)
fi
if ((${#missing[@]})); then
	if [[ $(id -u) -ne 0 ]]; then
		echo "deps: missing Debian packages: ${missing[*]} (run 'make deps' as root)" >&2
		exit 1
	fi
	echo "deps: installing ${missing[*]}"
	bash "$(dirname "$0")/log-download.sh" "deps: apt-get install ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
go mod download
