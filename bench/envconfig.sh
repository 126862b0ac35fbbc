#!/usr/bin/env bash
# What reading the configuration costs at start-up: envconfig's package
# initialisation (its two regexps, from the runtime's GODEBUG=inittrace=1
# line, median of RUNS starts), then app.Load (a Go benchmark).
# docs/PERFORMANCE.md quotes it.
#
#   bash bench/envconfig.sh [RUNS]      (after make build)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-101}
[[ -x bin/gpu-preflight ]] || { echo "bench: bin/gpu-preflight is missing (run make build)" >&2; exit 1; }
echo "## envconfig package init (ms, median of $runs starts)"
for _ in $(seq "$runs"); do
	GODEBUG=inittrace=1 bin/gpu-preflight version 2>&1 >/dev/null | awk '/init github.com\/kelseyhightower\/envconfig /{print $5}'
done | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'
echo
echo "## app.Load"
go test -run '^$' -bench 'BenchmarkLoadConfig' -benchmem -count 5 ./app/ | grep -E '^Benchmark'
