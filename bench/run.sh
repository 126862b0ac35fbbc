#!/usr/bin/env bash
# make bench: the start-up table (bench/startup: bare exec, tini, dumb-init,
# an NGC-style bash entrypoint with Debian's nvidia-smi, a Go exec-only
# program, and gpu-preflight with provenance on and off, without NVML and
# with the fake libnvidia-ml.so.1 playing 1 and 8 GPUs), the binary sizes,
# and the Go benchmarks that back the other bars (docs/sources.md, "What gpu-preflight is held to").
# docs/PERFORMANCE.md quotes its output.
#
#   bash bench/run.sh [RUNS]      (after make deps and make build)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-300}
for tool in tini dumb-init /usr/bin/time gcc; do
	command -v "$tool" >/dev/null || { echo "bench: $tool is missing (run make deps)" >&2; exit 1; }
done
[[ -x bin/gpu-preflight ]] || { echo "bench: bin/gpu-preflight is missing (run make build)" >&2; exit 1; }

nvml=$(bash scripts/nvidia-libs.sh) # also unpacks nvidia-smi beside it
smi=$(bash scripts/cache-dir.sh)/nvidia/root/usr/lib/nvidia/current

echo "## Start-up"
echo
go run ./bench/startup -runs "$runs" -nvidia-smi "$smi" -real-nvml "$(dirname "$nvml")"
echo
echo "## Binaries"
echo
for b in bin/gpu-preflight bin/gpu-preflight-nvml; do
	if [[ -e $b ]]; then
		stat -c '%n %s' "$b" | awk '{ printf "%s: %.1f MiB\n", $1, $2 / 1048576 }'
	fi
done
echo
echo "## Go benchmarks"
echo
go test -run '^$' -benchmem \
	-bench 'BenchmarkScanFile1GiB|BenchmarkWrite|BenchmarkRecord|BenchmarkEvaluateRealImage|BenchmarkScan$' \
	./preflight/fatbin/ ./report/store/ ./report/logs/ ./preflight/require/ ./preflight/image/ | grep -E '^(Benchmark|ok|FAIL)'
# The record's first encoding in a fresh process (encoding/json's per-type
# set-up), one child process per round.
go test -run '^$' -bench 'BenchmarkFirstMarshal' -benchtime 300x ./report/store/ | grep -E '^(Benchmark|ok|FAIL)'
