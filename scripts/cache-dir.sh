#!/usr/bin/env bash
# Prints the folder downloads are cached in (sysroots, root filesystems,
# Debian's NVIDIA packages, podman's base images, npm's cache), outside the
# clone so that a fresh clone on the same machine downloads nothing again:
#
#   CACHE, when set                         (the Makefile passes its own)
#   /var/cache/gpu-preflight                as root (the FHS place for a
#                                           program's cached data)
#   ${XDG_CACHE_HOME:-$HOME/.cache}/gpu-preflight   as another user (XDG Base
#                                           Directory specification)
#
# Build outputs (bin/, dist/, make run's provenance record) stay in the
# clone. Delete the folder to download everything again.
set -euo pipefail
if [[ -n ${CACHE:-} ]]; then
	echo "$CACHE"
elif [[ $(id -u) -eq 0 ]]; then
	echo /var/cache/gpu-preflight
else
	echo "${XDG_CACHE_HOME:-${HOME:?HOME is unset: set CACHE to a folder for downloads}/.cache}/gpu-preflight"
fi
