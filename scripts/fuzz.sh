#!/usr/bin/env bash
# Runs every fuzz target of every Go module in the repository (the root
# module and nested ones such as test/examples) for FUZZTIME each.
#
#   scripts/fuzz.sh [FUZZTIME]      FUZZTIME as go test -fuzztime takes it
#                                   (default 60s; "500x" counts executions)
#
# Environment:
#   GO=path           the go command (default: go on PATH)
#   FUZZ_PARALLEL=N   run N fuzz workers per target (go test -parallel N)
#                     instead of one per CPU; use 1 on a shared machine.
#
# Each target runs alone (go test -fuzz takes one target at a time), after
# its checked-in corpus (testdata/fuzz/<Target>/) and f.Add seeds. One line
# per target gives its wall time. When a target fails, its output is printed
# with the path of the input the fuzzer wrote, the remaining targets still
# run, and the script exits 1: commit that input under testdata/fuzz once the
# bug is fixed, so plain `go test` keeps proving the fix.
set -euo pipefail

fuzztime=${1:-60s}
go=${GO:-go}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

parallel=()
if [[ -n ${FUZZ_PARALLEL:-} ]]; then
	parallel=(-parallel "$FUZZ_PARALLEL")
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT

# Modules: every go.mod outside hidden directories (.cache holds downloaded
# trees) and testdata.
mapfile -t modules < <(find . -name go.mod \
	-not -path '*/.*/*' -not -path '*/testdata/*' -printf '%h\n' | sort)

# deadline_race reports whether a failed run's only failure is Go 1.26's
# fuzzing-coordinator race (golang/go#75804, fixed in Go 1.27): when the
# -fuzztime deadline fires, the coordinator can return the deadline itself as
# an error, printed as a bare "context deadline exceeded" under the target's
# FAIL line, with no input written and no seed failing. A failing input
# always writes "Failing input written to", a failing seed a second FAIL line.
deadline_race() {
	! grep -q 'Failing input written to' "$1" &&
		[[ $(grep -c -- '--- FAIL:' "$1") -eq 1 ]] &&
		grep -qx '    context deadline exceeded' "$1"
}

ran=0
races=0
failed=()
start=$SECONDS
for mod in "${modules[@]}"; do
	# go test -list prints a package's matching names, then one
	# "ok <import path> <time>" line; collect "<import path> <target>" pairs.
	if ! (cd "$mod" && "$go" test -list '^Fuzz' ./...) >"$out" 2>&1; then
		cat "$out" >&2
		echo "fuzz: listing the fuzz targets of module $mod failed" >&2
		exit 1
	fi
	mapfile -t targets < <(awk '
		/^Fuzz/ { names[n++] = $1; next }
		/^ok[ \t]/ { for (i = 0; i < n; i++) print $2, names[i]; n = 0 }
	' "$out")

	for pt in "${targets[@]}"; do
		pkg=${pt% *}
		target=${pt#* }
		t0=$(date +%s.%N)
		note=
		if (cd "$mod" && "$go" test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "${parallel[@]}" "$pkg") >"$out" 2>&1; then
			status=ok
		elif deadline_race "$out"; then
			status=ok
			note="  (Go's -fuzztime deadline race, golang/go#75804: no input failed)"
			races=$((races + 1))
		else
			status=FAIL
		fi
		secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
		ran=$((ran + 1))
		printf '%-4s %6ss  %s %s%s\n' "$status" "$secs" "$pkg" "$target" "$note"
		if [[ $status == FAIL ]]; then
			cat "$out"
			dir=$(cd "$mod" && "$go" list -f '{{.Dir}}' "$pkg")
			crasher=$(sed -n 's/.*Failing input written to \(testdata\/fuzz\/[^ ]*\).*/\1/p' "$out" | head -n 1)
			if [[ -n $crasher ]]; then
				where="crasher ${dir#"$root"/}/$crasher"
			else
				where="no crasher written (build or seed failure: see the output above)"
			fi
			echo "fuzz: FAIL $pkg $target: $where" >&2
			failed+=("$pkg $target: $where")
		fi
	done
done

echo "fuzz: $ran targets run for $fuzztime each in $((SECONDS - start))s, ${#failed[@]} failed, $races stopped by the deadline race"
if ((${#failed[@]} > 0)); then
	printf 'fuzz: FAIL %s\n' "${failed[@]}" >&2
	exit 1
fi
