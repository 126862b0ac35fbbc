#!/usr/bin/env bash
# Runs a command as root in a chroot of an overlay, inside a private mount
# namespace, so every mount ends with the command (test/fresh).
#
#   test/fresh/enter.sh LOWERS UPPER SRC CMD
#
# LOWERS is overlayfs's lowerdir (colon-separated, top first), UPPER an
# empty folder that keeps what CMD changes. Inside: /proc, /dev and /sys;
# the host's resolv.conf; the host's Go tree read-only at its own path, the
# host's module cache at /root/go/pkg/mod (so modules are not downloaded
# again), GOCACHE_DIR (a build cache kept per root) at /root/.cache/go-build,
# and SRC, a clone, at /src, where CMD runs under bash.
#
# For scripts/fresh-make-test.sh, which runs make test there: FRESH_CACHE
# names a download cache (scripts/cache-dir.sh) bound at its own path, so
# the suites find what was downloaded; FRESH_GOPROXY replaces GOPROXY=off
# (staticcheck, run by version, asks the proxy about its module); /tmp and
# /run are tmpfs, as on a booted machine; and the host's SSL_CERT_FILE, when
# set, is the root's too (a host behind a TLS-inspecting proxy trusts a CA
# the root's ca-certificates lacks).
set -euo pipefail
lowers=${1:?usage: enter.sh LOWERS UPPER SRC CMD}
upper=${2:?usage: enter.sh LOWERS UPPER SRC CMD}
src=${3:?usage: enter.sh LOWERS UPPER SRC CMD}
cmd=${4:?usage: enter.sh LOWERS UPPER SRC CMD}
goroot=$(go env GOROOT)
modcache=$(go env GOMODCACHE)
gocache=${GOCACHE_DIR:?GOCACHE_DIR: a build cache folder for this root}

if [[ -z ${FRESH_IN_NAMESPACE:-} ]]; then
	exec env FRESH_IN_NAMESPACE=1 unshare --mount --propagation private "$0" "$@"
fi
work=$upper.work
root=$upper.root
mkdir -p "$upper" "$work" "$root" "$gocache"
mount -t overlay overlay -o "lowerdir=$lowers,upperdir=$upper,workdir=$work" "$root"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --rbind /sys "$root/sys"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root$goroot" "$root/root/go/pkg/mod" "$root/root/.cache/go-build" "$root/src"
mount --bind -o ro "$goroot" "$root$goroot"
mount --bind "$modcache" "$root/root/go/pkg/mod"
mount --bind "$gocache" "$root/root/.cache/go-build"
mount --bind "$src" "$root/src"
certs=()
if [[ -n ${FRESH_CACHE:-} ]]; then
	mkdir -p "$root$FRESH_CACHE"
	mount --bind "$FRESH_CACHE" "$root$FRESH_CACHE"
	mount -t tmpfs tmpfs "$root/tmp"
	mkdir -p "$root/run" && mount -t tmpfs tmpfs "$root/run"
	if [[ -n ${SSL_CERT_FILE:-} ]]; then
		cp "$SSL_CERT_FILE" "$root/etc/host-ca.pem"
		certs=(SSL_CERT_FILE=/etc/host-ca.pem GIT_SSL_CAINFO=/etc/host-ca.pem)
	fi
fi
# A login's environment, not the test's: what a user on that machine has,
# plus Go on PATH. The module cache is complete, so nothing is fetched
# unless FRESH_GOPROXY says where from.
status=0
chroot "$root" /usr/bin/env -i HOME=/root PATH="$goroot/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
	LANG=C.UTF-8 TERM=dumb GOPROXY="${FRESH_GOPROXY:-off}" GOTOOLCHAIN=local CI="${CI:-}" "${certs[@]}" \
	/bin/bash -c "cd /src && $cmd" || status=$?
# The overlay's work folder is overlayfs's own; the mount point is empty.
umount -R "$root" 2>/dev/null || umount -lR "$root"
rm -rf "$work"
rmdir "$root"
exit "$status"
