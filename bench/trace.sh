#!/usr/bin/env bash
# The throughput and memory of `gpu-preflight trace` (docs/PERFORMANCE.md,
# "trace"): a generated fleet of RECORDS supervised runs (bench/tracefleet)
# as containerd's CRI files and as logcli's jsonl hold them, plain and
# gzip'd, read by trace beside zcat (on the gzip'd file) and jq (on the
# plain one). Every round runs every command once, the order reversed each
# round, so load falls on all alike; the table holds the medians of wall
# and CPU time, MB/s of uncompressed bytes, and the peak RSS (GNU time).
# Exit 1 is trace's answer (ranks drift), not a failure. The files are
# deleted when the script ends, however it ends.
#
#   bash bench/trace.sh [RECORDS [ROUNDS]]   (default 1000000 3; TMPDIR picks
#                                            the disk: about 6 GB a million)
set -euo pipefail
cd "$(dirname "$0")/.."
records=${1:-1000000}
rounds=${2:-3}
for tool in /usr/bin/time jq zcat; do
	command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install time jq gzip)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-preflight-trace-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$work/gpu-preflight" ./cmd/gpu-preflight
go build -o "$work/tracefleet" ./bench/tracefleet

# jq's work on each form: .runId of every line, as `jq -c .runId` on a
# ledger. A CRI line is its prefix and then the JSON, so jq strips it first.
declare -A jqprog=(
	[cri]='sub("^[^ ]+ [^ ]+ [PF] "; "") | fromjson? | .runId'
	[loki]='.runId'
)
declare -A jqflags=([cri]=-cR [loki]=-c)

# run NAME CMD...: one timed run, appended to $work/NAME.times as
# "wall user sys maxrss_kib". Exit codes 0 and 1 are answers.
run() {
	local name=$1
	shift
	set +e
	/usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >/dev/null 2>"$work/stderr"
	local code=$?
	set -e
	if ((code > 1)); then
		echo "bench: $name exited $code:" >&2
		cat "$work/stderr" >&2
		exit 1
	fi
	tail -n 1 "$work/time" >>"$work/$name.times"
}

# median FILE FIELD: the median of a column of a times file.
median() { awk -v f="$2" '{print $f}' "$1" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

echo "| form | command | bytes read | wall s | MB/s | CPU s | peak RSS MiB |"
echo "|---|---|---:|---:|---:|---:|---:|"
for form in cri loki; do
	plain=$work/fleet.$form
	"$work/tracefleet" -records "$records" -form "$form" >"$plain"
	gzip -k "$plain"
	bytes=$(stat -c %s "$plain")
	gzbytes=$(stat -c %s "$plain.gz")
	names=(trace-gz zcat trace jq)
	for ((r = 0; r < rounds; r++)); do
		order=("${names[@]}")
		if ((r % 2)); then order=(jq trace zcat trace-gz); fi
		for name in "${order[@]}"; do
			case $name in
			trace-gz) run "$form-$name" "$work/gpu-preflight" trace --json "$plain.gz" ;;
			zcat) run "$form-$name" zcat "$plain.gz" ;;
			trace) run "$form-$name" "$work/gpu-preflight" trace --json "$plain" ;;
			jq) run "$form-$name" jq "${jqflags[$form]}" "${jqprog[$form]}" "$plain" ;;
			esac
		done
	done
	for name in "${names[@]}"; do
		t=$work/$form-$name.times
		wall=$(median "$t" 1)
		cpu=$(awk '{print $2 + $3}' "$t" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
		rss=$(median "$t" 4)
		read_bytes=$bytes
		[[ $name == trace-gz || $name == zcat ]] && read_bytes=$gzbytes
		awk -v f="$form" -v n="$name" -v rb="$read_bytes" -v b="$bytes" -v w="$wall" -v c="$cpu" -v m="$rss" \
			'BEGIN { printf "| %s | %s | %.0f | %.1f | %.0f | %.1f | %.1f |\n", f, n, rb, w, b / w / 1e6, c, m / 1024 }'
	done
	if [[ $form == cri ]]; then
		"$work/gpu-preflight" trace --json "$plain" >"$work/out.json" || (($? == 1))
	fi
	rm -f "$plain" "$plain.gz"
done
echo
echo "$records runs, $rounds rounds; the answer from the CRI files:"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); t=r["totals"]; print("records", t["records"], "outcomes", t["outcomes"], "multi-rank jobs", r["multiRankJobs"], "jobs with drift", len(r["jobs"]), "histories with boundaries", len(r["regressions"]), "nodes", len(r["nodes"]), "drain", r["drain"])' "$work/out.json"
