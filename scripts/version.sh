#!/usr/bin/env bash
# Prints the version a build of this checkout carries (`gpu-preflight
# version`, the release file names): `git describe` against release tags
# vX.Y.Z, so a tagged commit is v1.2.3 and a later one v1.2.3-4-gabcdef012345.
# A checkout with no release tag in its history says so in the same form,
# v0.0.0-N-gHASH (N commits since the start), and a checkout with changes
# not committed ends in -dirty. Without git (an exported tarball) it is
# "unknown"; set VERSION to say otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! git rev-parse --verify -q HEAD >/dev/null 2>&1; then
	echo unknown
	exit 0
fi
if v=$(git describe --tags --match 'v[0-9]*.[0-9]*.[0-9]*' --abbrev=12 --dirty 2>/dev/null); then
	echo "$v"
	exit 0
fi
dirty=
git diff --quiet HEAD -- 2>/dev/null || dirty=-dirty
echo "v0.0.0-$(git rev-list --count HEAD)-g$(git rev-parse --short=12 HEAD)$dirty"
