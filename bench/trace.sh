#!/usr/bin/env bash
# The scale of `gpu-preflight trace` (docs/PERFORMANCE.md, "trace"): a
# generated fleet of RECORDS provenance records (bench/tracefleet, about
# 4 KiB each, so 1 000 000 make about 4 GB of JSON lines) written to a
# temporary directory, read by trace in one pass (standard input) from the
# first quarter, half and all of it, with the wall time and peak RSS of
# each (GNU time). Exit 1 is trace's: the fleet has ranks that drift.
# The file is deleted when the script ends, however it ends.
#
#   bash bench/trace.sh [RECORDS]     (default 1000000; TMPDIR picks the disk)
set -euo pipefail
cd "$(dirname "$0")/.."
records=${1:-1000000}
command -v /usr/bin/time >/dev/null || { echo "bench: GNU time is missing (run make deps)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-preflight-trace-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$work/gpu-preflight" ./cmd/gpu-preflight
go build -o "$work/tracefleet" ./bench/tracefleet
start=$(date +%s)
"$work/tracefleet" -records "$records" >"$work/fleet.jsonl"
echo "generated $records records, $(stat -c %s "$work/fleet.jsonl") bytes, in $(($(date +%s) - start)) s"
echo
echo "| records | bytes | wall s | peak RSS MiB | exit |"
echo "|---:|---:|---:|---:|---:|"
for n in $((records / 4)) $((records / 2)) "$records"; do
	# The first n lines through a pipe: no second copy on disk.
	set +e
	head -n "$n" "$work/fleet.jsonl" |
		/usr/bin/time -f '%e %M' -o "$work/time" "$work/gpu-preflight" trace --json - >"$work/out.json"
	code=${PIPESTATUS[1]}
	set -e
	bytes=$(head -n "$n" "$work/fleet.jsonl" | wc -c)
	# GNU time writes "Command exited with non-zero status N" first when N > 0.
	read -r wall rss < <(tail -n 1 "$work/time")
	awk -v n="$n" -v b="$bytes" -v w="$wall" -v r="$rss" -v c="$code" \
		'BEGIN { printf "| %d | %.0f | %.1f | %.1f | %d |\n", n, b, w, r / 1024, c }'
done
echo
echo "answers for all $records records:"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("records", r["totals"]["records"], "multi-rank jobs", r["multiRankJobs"], "jobs with drift", len(r["jobs"]), "histories with boundaries", len(r["regressions"]), "nodes", len(r["nodes"]), "drain", r["drain"])' "$work/out.json"
