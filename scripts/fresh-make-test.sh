#!/usr/bin/env bash
# The README's two commands as the first ones on a fresh machine: in a
# `debootstrap --variant=minbase` root of RELEASE (scripts/fresh-root.sh),
# with nothing installed but what a clone needs (make, git, ca-certificates),
# `make test` as root from a clone of HEAD, then, in the root it left,
# `make run` as a new user.
#
#   scripts/fresh-make-test.sh [RELEASE]     default bookworm; needs root
#
# Not part of make test, which it runs (7 min on the 2-core VM with a cold Go
# build cache): run it by hand before saying a fresh machine works. The Go
# build cache starts empty, as on a fresh machine; downloads come from the
# host's download cache (scripts/cache-dir.sh), bound into the root, so only
# what is not cached yet is fetched. Go modules come through the host's
# GOPROXY. The user's own downloads start empty.
#
# A chroot cannot create user namespaces (the kernel refuses CLONE_NEWUSER
# to a process whose root is not its mount namespace's), which the unit
# tests of a full disk and a read-only directory need as another user: so
# the user runs make run here, and make test only as root, as the README
# says.
set -euo pipefail
cd "$(dirname "$0")/.."
release=${1:-bookworm}
if [[ $(id -u) -ne 0 ]]; then
	echo "fresh-make-test: debootstrap, chroot and mount namespaces need root" >&2
	exit 1
fi
if [[ -n $(git status --porcelain --untracked-files=no) ]]; then
	echo "fresh-make-test: the worktree has uncommitted changes; this tests HEAD, $(git rev-parse --short HEAD), without them" >&2
fi
cache=$(bash scripts/cache-dir.sh)
root=$(bash scripts/fresh-root.sh "$release" "$cache/fresh/$release")
work=$(mktemp -d /tmp/fresh-make-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
git clone -q . "$work/src"
git -C "$work/src" checkout -q "$(git rev-parse HEAD)"

enter() {
	FRESH_CACHE=$cache FRESH_GOPROXY=$(go env GOPROXY) GOCACHE_DIR=$work/gocache CI='' \
		bash test/fresh/enter.sh "$@"
}

start=$SECONDS
enter "$root" "$work/upper" "$work/src" \
	"export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq --no-install-recommends make git ca-certificates >/dev/null &&
	git config --global --add safe.directory /src && make test"
echo "fresh-make-test: make test as root in a fresh $release root passed in $((SECONDS - start)) s" >&2

start=$SECONDS
enter "$work/upper:$root" "$work/upper-user" "$work/src" \
	"useradd -m dev && runuser -u dev -- env HOME=/home/dev bash -c 'git config --global --add safe.directory \"*\" &&
	git clone -q /src ~/gpu-preflight && cd ~/gpu-preflight && make run'"
echo "fresh-make-test: make run as a new user in that root passed in $((SECONDS - start)) s" >&2
