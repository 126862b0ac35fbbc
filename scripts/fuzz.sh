#!/usr/bin/env bash
# Runs every fuzz target of every Go module in the repository (the root
# module and nested ones such as test/examples) for FUZZTIME each.
# `make test` runs it as a short smoke (mk/fuzz.mk), `make fuzz` for long.
#
#   scripts/fuzz.sh [FUZZTIME]      FUZZTIME as go test -fuzztime takes it
#                                   (default 60s; "500x" counts executions)
#
# Environment:
#   GO=path           the go command (default: go on PATH)
#   FUZZ_PARALLEL=N   run N fuzz workers per target (-test.parallel N)
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
	parallel=(-test.parallel "$FUZZ_PARALLEL")
fi
fuzzcache=$("$go" env GOCACHE)/fuzz

tmpdir=$(mktemp -d)
out=$tmpdir/out
trap 'rm -rf "$tmpdir"' EXIT

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
# Packages with fuzz targets: directories whose tests declare a Fuzz
# function, outside hidden directories (.cache holds downloaded trees) and
# testdata.
mapfile -t pkgdirs < <(find . \( -path './.*' -o -path '*/.*/*' -o -name testdata \) -prune -o \
	-name '*_test.go' -exec grep -l -E '^func Fuzz[A-Z0-9_]' {} + | sed 's|/[^/]*$||' | sort -u)
for dir in "${pkgdirs[@]}"; do
	# The package's module: the nearest go.mod above it.
	mod=$dir
	while [[ ! -f $mod/go.mod ]]; do mod=$(dirname "$mod"); done
	pkg=./${dir#"$mod"/}
	[[ $dir == "$mod" ]] && pkg=.
	# One instrumented test binary per package (go test -c -fuzz builds
	# with the coverage instrumentation fuzzing needs), then every target
	# from it: linking once instead of once per target.
	bin=$tmpdir/$(printf '%s' "$dir" | tr -c 'A-Za-z0-9' _).test
	if ! (cd "$mod" && "$go" test -c -fuzz=. -o "$bin" "$pkg") >"$out" 2>&1; then
		cat "$out" >&2
		echo "fuzz: building the fuzz test binary of $dir failed" >&2
		failed+=("$dir: build failed")
		continue
	fi
	[[ -x $bin ]] || continue # a package whose fuzz tests are behind a build tag
	importpath=$(cd "$dir" && "$go" list -f '{{.ImportPath}}' .)
	mapfile -t targets < <(cd "$dir" && "$bin" -test.list '^Fuzz')
	for target in "${targets[@]}"; do
		t0=$(date +%s.%N)
		note=
		# Run in the package directory, as go test does, so the binary finds
		# testdata/fuzz/<target> and writes a crasher there; the generated
		# corpus goes where go test -fuzz keeps it, so runs build on each other.
		if (cd "$dir" && "$bin" -test.run '^$' -test.fuzz "^${target}\$" -test.fuzztime "$fuzztime" \
			-test.fuzzcachedir "$fuzzcache/$importpath" "${parallel[@]}") >"$out" 2>&1; then
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
		printf '%-4s %6ss  %s %s%s\n' "$status" "$secs" "$importpath" "$target" "$note"
		if [[ $status == FAIL ]]; then
			cat "$out"
			crasher=$(sed -n 's/.*Failing input written to \(testdata\/fuzz\/[^ ]*\).*/\1/p' "$out" | head -n 1)
			if [[ -n $crasher ]]; then
				where="crasher ${dir#./}/$crasher"
			else
				where="no crasher written (seed failure: see the output above)"
			fi
			echo "fuzz: FAIL $importpath $target: $where" >&2
			failed+=("$importpath $target: $where")
		fi
	done
done

echo "fuzz: $ran targets run for $fuzztime each in $((SECONDS - start))s, ${#failed[@]} failed, $races stopped by the deadline race"
if ((${#failed[@]} > 0)); then
	printf 'fuzz: FAIL %s\n' "${failed[@]}" >&2
	exit 1
fi
