#!/usr/bin/env bash
# Builds, once, a fresh Debian root for the fresh-machine suite (test/fresh):
# `debootstrap --variant=minbase SUITE`, nothing else installed, the apt
# sources debootstrap writes (a one-line /etc/apt/sources.list, as a Debian
# installed by its installer or by debootstrap has).
#
#   scripts/fresh-root.sh SUITE DIR      prints DIR when it is ready
#
# The mirror is the host's own Debian mirror (scripts/apt-sources.sh), else
# debootstrap's default. DIR/.gpu-preflight-fresh holds the recipe, so a
# changed recipe rebuilds the root; a flock serialises parallel callers.
# The suite never changes DIR: it runs in an overlay above it.
set -euo pipefail

suite=${1:?usage: fresh-root.sh SUITE DIR}
dir=$(realpath -m "${2:?usage: fresh-root.sh SUITE DIR}")
if [[ $(id -u) -ne 0 ]]; then
	echo "fresh-root: debootstrap needs root" >&2
	exit 1
fi
command -v debootstrap >/dev/null || {
	echo "fresh-root: debootstrap is not installed (run 'make deps' as root)" >&2
	exit 1
}
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9

# shellcheck source=scripts/apt-sources.sh
source "$(dirname "$0")/apt-sources.sh"
mirror=
if host_debian_source; then
	mirror=$debian_uri
fi
recipe="debootstrap --variant=minbase $suite"
if [[ ! -f $dir/.gpu-preflight-fresh || $(<"$dir/.gpu-preflight-fresh") != "$recipe" ]]; then
	tmp=$dir.tmp
	rm -rf "$tmp" "$dir"
	echo "fresh-root: $recipe ${mirror:-with the default mirror of debootstrap} (once; cached in $dir)" >&2
	bash "$(dirname "$0")/log-download.sh" "fresh-root: $recipe"
	start=$SECONDS
	# shellcheck disable=SC2086 # an empty mirror is no argument
	if ! debootstrap --variant=minbase "$suite" "$tmp" $mirror >"$dir.log" 2>&1; then
		echo "fresh-root: debootstrap failed; last lines of $dir.log:" >&2
		tail -n 20 "$dir.log" >&2
		exit 1
	fi
	rm -rf "$tmp"/var/cache/apt/archives/*.deb
	printf '%s' "$recipe" >"$tmp/.gpu-preflight-fresh"
	mv "$tmp" "$dir"
	echo "fresh-root: $suite ready in $((SECONDS - start)) s" >&2
fi
echo "$dir"
