#!/usr/bin/env bash
# Runs make test's steps one after another, each timed, and writes what it
# measured to TIMES for test/figures/suitetimes, which holds it to the suite
# times README.md quotes ("Testing"). The first failing step stops the run,
# as a failing prerequisite would.
#
# Usage: MAKE=make scripts/test-steps.sh TIMES STEP...
#
# TIMES gets one line per step as it ends, tab-separated: the step, its
# wall seconds, its CPU seconds (user and system time of every process of
# the step that was waited for: make, the compilers, the tests and their
# children), the 1-minute load average at its end, and what it downloaded
# ("-" for nothing). CPU time is what the step costs; wall time is that
# and the machine's load. A step downloaded when it added lines to a
# downloads.log (scripts/log-download.sh: every script that fetches into
# the download cache writes one) or files to a Go module cache; such a step
# is excused from the quoted times, which are for a warm cache. Lines
# starting with # are notes the check prints.
set -euo pipefail

times=${1:?usage: test-steps.sh TIMES STEP...}
shift
make=${MAKE:-make}
cache=$(bash "$(dirname "$0")/cache-dir.sh")
modcache=$(go env GOMODCACHE)

# state prints, one a line, "COUNT PATH" for what downloads grow: every
# downloads.log in the download cache (its own, and those of the caches
# nested in it, such as test-dist's for nobody: three levels deep at most,
# so the walk stays out of the root filesystems), and every Go module
# cache (this user's, and those in the download cache, named gomodcache).
state() {
	local f
	while IFS= read -r f; do
		echo "$(wc -l <"$f") $f"
	done < <(find "$cache" -maxdepth 3 -name downloads.log -type f 2>/dev/null | sort)
	while IFS= read -r f; do
		echo "$(find "$f/cache/download" \( -name '*.zip' -o -name '*.mod' \) 2>/dev/null | wc -l) $f"
	done < <({ echo "$modcache"; find "$cache" -maxdepth 2 -name gomodcache -type d 2>/dev/null; } | sort -u)
}

# downloaded BEFORE AFTER prints what grew between two states, "; "
# between items, or "-".
downloaded() {
	local what=() count path old
	declare -A was=()
	while read -r count path; do
		was[$path]=$count
	done <<<"$1"
	while read -r count path; do
		[[ -n $path ]] || continue
		old=${was[$path]:-0}
		((count > old)) || continue
		if [[ $path == */downloads.log ]]; then
			# The new lines, without their time stamps.
			mapfile -t -O "${#what[@]}" what < <(tail -n "$((count - old))" "$path" | cut -d' ' -f2-)
		else
			what+=("$((count - old)) new files in the Go module cache $path")
		fi
	done <<<"$2"
	if ((${#what[@]} == 0)); then
		echo -
		return
	fi
	local out
	out=$(printf '%s; ' "${what[@]}")
	echo "${out%; }" | tr '\t' ' '

}

# cpu_ticks prints the user and system time, in clock ticks, of this
# shell's children that have been waited for (cutime and cstime of
# proc(5)'s stat; the fields after the command's name).
cpu_ticks() {
	local stat
	stat=$(</proc/$$/stat)
	read -r -a f <<<"${stat##*) }"
	echo $((f[13] + f[14]))
}
hz=$(getconf CLK_TCK)

mkdir -p "$(dirname "$times")"
{
	echo "# make test at $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null || echo 'no commit'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
} >"$times"
for step in "$@"; do
	before=$(state)
	start=$(date +%s.%N)
	cpu=$(cpu_ticks)
	if ! "$make" --no-print-directory "$step"; then
		echo "make test: $step failed" >&2
		exit 1
	fi
	cpu=$(($(cpu_ticks) - cpu))
	end=$(date +%s.%N)
	printf '%s\t%s\t%s\t%s\t%s\n' "$step" "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')" \
		"$(awk -v t="$cpu" -v hz="$hz" 'BEGIN { printf "%.1f", t / hz }')" \
		"$(cut -d' ' -f1 /proc/loadavg)" "$(downloaded "$before" "$(state)")" >>"$times"
done
