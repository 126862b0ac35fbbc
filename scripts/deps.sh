#!/usr/bin/env bash
# Installs what the test suites need on a fresh Debian machine. As root it
# installs missing Debian packages; otherwise it names them and fails, since
# a suite without its tools would prove nothing.
set -euo pipefail

packages=(runc debootstrap busybox-static tini dumb-init time shellcheck file binutils gcc libc6-dev python3-minimal)
# The Python environments' proof against the real interpreter
# (preflight/pyenv): venv, pip and setuptools write the layouts it reads.
packages+=(python3-venv python3-pip python3-setuptools)
# linux/arm64: Debian's cross compiler for the probe (its own sysroot is
# unpacked without root, scripts/sysroot.sh) and qemu to run what it built.
packages+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static)
# The real-engine suite (mk/podman.mk): podman and buildah with runc, and
# catatonit, which `podman run --init` needs.
packages+=(podman buildah catatonit fuse-overlayfs uidmap slirp4netns conmon containers-storage)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# The examples suite runs Grafana's LogQL grammar with Node.js and installs
# it with npm (scripts/logql-grammar.sh). Any Node.js on PATH will do, so
# Debian's packages are installed only when there is none: a machine may
# carry another build whose nodejs package conflicts with Debian's npm.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
	if [[ $(id -u) -ne 0 ]]; then
		echo "deps: missing Debian packages: ${missing[*]} (run 'make deps' as root)" >&2
		exit 1
	fi
	echo "deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
go mod download
