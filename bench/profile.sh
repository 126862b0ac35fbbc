#!/usr/bin/env bash
# Where gpu-preflight's start-up CPU time goes, next to a Go program that
# only execs: perf samples many starts of each (GPU-less root, provenance
# off, the configuration of the start-up bar in docs/sources.md) and bench/phases
# gives each sample to a phase. docs/PERFORMANCE.md quotes the output.
#
#   bash bench/profile.sh [STARTS]      (needs perf: apt-get install linux-perf)
set -euo pipefail
cd "$(dirname "$0")/.."
starts=${1:-300}
command -v perf >/dev/null || { echo "profile: perf is missing (apt-get install linux-perf)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/empty"

# Symbols kept (no -s -w), the same tags as make build.
tags=
[[ -f preflight/nvml/gpu-preflight-nvml-$(go env GOARCH).bin ]] && tags=embedprobe
CGO_ENABLED=0 go build -trimpath -tags "$tags" -o "$tmp/gpu-preflight" ./cmd/gpu-preflight
CGO_ENABLED=0 go build -trimpath -o "$tmp/go-exec-only" ./bench/noop

profile() { # name, command...
	local name=$1
	shift
	perf stat -x, -e task-clock -r "$starts" -o "$tmp/stat" "$@" >/dev/null 2>&1
	local ms
	ms=$(awk -F, '$3 == "task-clock" { print $1 }' "$tmp/stat")
	# shellcheck disable=SC2016 # the inner bash expands $0 and $@
	perf record -q -F 20000 -e cpu-clock -g -o "$tmp/perf.data" -- \
		bash -c 'for ((i = 0; i < $0; i++)); do "$@" >/dev/null 2>&1; done' "$starts" "$@" >/dev/null 2>&1
	echo "### $name: $ms CPU ms per start (perf stat task-clock, $starts starts)"
	echo
	perf script -i "$tmp/perf.data" -F comm,ip,sym 2>/dev/null | go run ./bench/phases -comm "$name" -task-clock-ms "$ms"
	echo
}

profile go-exec-only "$tmp/go-exec-only" /bin/true
profile gpu-preflight "$tmp/gpu-preflight" --termination-log="$tmp/termination-log" --provenance-dir=off \
	--root="$tmp/empty" --host-root="$tmp/empty" -- /bin/true
