#!/usr/bin/env bash
# make lint's duplicates step: fails on a pair of places in the shim's own
# code (app, cmd, internal, preflight, report; no tests, no test helpers) that
# share six or more identical lines, unless the pair of files is in
# duplicates.allow with the reason the two stay apart. Lines alike only in
# shape (the same form with other names: struct fields, table rows) are
# left to review, not lint. Tests, examples and scripts repeat their set-up
# on purpose and are not checked.
#
# duplicates is a local tool, not a Debian package: without it the step
# says so and passes on a workstation, and fails under CI=true unless
# DUPLICATES=off says the CI machine knowingly goes without it.
set -euo pipefail
cd "$(dirname "$0")/../.."
allow=test/lint/duplicates.allow

if ! command -v duplicates >/dev/null; then
	if [[ ${DUPLICATES:-} == off ]]; then
		echo "lint: duplicates skipped (DUPLICATES=off)"
		exit 0
	fi
	if [[ ${CI:-} == true ]]; then
		echo "lint: duplicates is not on PATH; install it, or set DUPLICATES=off to run CI without it" >&2
		exit 1
	fi
	echo "lint: duplicates is not on PATH, its step is skipped here (CI=true fails without it)"
	exit 0
fi

# A row: "D1 a.go:10-24 ~ b.go:40-54 [shape] [boilerplate] [(+N more runs)]".
production='^(app|cmd|internal|preflight|report)/([^/]+/)*[^/]+\.go$'
bad=0
while read -r row; do
	read -r _ a _ b rest <<<"$row"
	a=${a%%:*} b=${b%%:*}
	[[ $rest == *boilerplate* || $rest == *shape* ]] && continue
	[[ $a =~ $production && $b =~ $production ]] || continue
	[[ $a == *_test.go || $b == *_test.go || $a == */*test/* || $b == */*test/* ]] && continue
	if ! grep -qxF -e "$a ~ $b" -e "$b ~ $a" <(sed -e 's/[[:space:]]*#.*//' -e '/^$/d' "$allow"); then
		echo "lint: shared lines in the shim's code: $row" >&2
		echo "      share the code, or add \"$a ~ $b  # why\" to $allow" >&2
		bad=1
	fi
done < <(duplicates --most 200 --seconds 60 | grep -E '^D[0-9]+ ')
exit $bad
