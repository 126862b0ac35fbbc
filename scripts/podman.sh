#!/usr/bin/env bash
# Runs Debian's podman with gpu-preflight's private configuration and
# storage, so the real-engine suite (mk/podman.mk) never touches the
# machine's images, and so it works on this kind of host at all:
#
#   scripts/podman.sh images            any podman command line
#   scripts/podman.sh --print-env       the variables it sets, for a shell
#
# Everything lives under $PODMAN_DIR (default: podman in scripts/cache-dir.sh's
# folder, so a fresh clone keeps the base images): containers.conf, storage.conf, registries.conf, the graph root, the run root and buildah's
# temporary files (its RUN --mount=type=cache directories among them).
# docs/CONTAINERS.md says why each setting is needed here.
set -euo pipefail

repo=$(realpath "$(dirname "$0")/..")
dir=$(realpath -m "${PODMAN_DIR:-$(bash "$repo/scripts/cache-dir.sh")/podman}")
mkdir -p "$dir/storage" "$dir/run" "$dir/tmp" "$dir/libpod-tmp"

# Rewritten on every call (it is cheap), so a change here applies at once.
cat >"$dir/containers.conf.tmp" <<EOF
[containers]
# podman's default nofile of 1048576 is above this host's hard limit: runc
# then fails with "error setting rlimit type 7: operation not permitted".
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
# What podman run --init starts as PID 1.
init_path = "/usr/bin/catatonit"

[engine]
# crun fails on this host's hybrid cgroup hierarchy; runc works.
runtime = "runc"
cgroup_manager = "cgroupfs"
# No systemd journal here.
events_logger = "file"
events_logfile_path = "$dir/events.log"
tmp_dir = "$dir/libpod-tmp"
EOF
mv "$dir/containers.conf.tmp" "$dir/containers.conf"

cat >"$dir/storage.conf.tmp" <<EOF
[storage]
driver = "overlay"
graphroot = "$dir/storage"
runroot = "$dir/run"
EOF
mv "$dir/storage.conf.tmp" "$dir/storage.conf"

# Nothing is ever pulled: base images are imported under the names the
# Dockerfiles use (scripts/podman-images.sh), and a short name must resolve
# to them, never to a registry.
cat >"$dir/registries.conf.tmp" <<EOF
unqualified-search-registries = []
short-name-mode = "permissive"
EOF
mv "$dir/registries.conf.tmp" "$dir/registries.conf"

export CONTAINERS_CONF=$dir/containers.conf
export CONTAINERS_STORAGE_CONF=$dir/storage.conf
export CONTAINERS_REGISTRIES_CONF=$dir/registries.conf
# buildah keeps RUN --mount=type=cache directories under TMPDIR.
export TMPDIR=$dir/tmp

if [[ ${1:-} == --print-env ]]; then
	for v in CONTAINERS_CONF CONTAINERS_STORAGE_CONF CONTAINERS_REGISTRIES_CONF TMPDIR; do
		printf '%s=%s\n' "$v" "${!v}"
	done
	exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "podman.sh: the real-engine suite runs podman as root (runc, overlay storage, device nodes); run it as root" >&2
	exit 1
fi
command -v podman >/dev/null || {
	echo "podman.sh: podman is not installed (run 'make deps' as root)" >&2
	exit 1
}
exec podman "$@"
