#!/usr/bin/env bash
# Notes in the download cache (scripts/cache-dir.sh) that something is
# being fetched into it, or built into it from what was fetched: one line a
# fetch, "TIME WHAT". Every script that goes to the network for the cache
# calls it just before it does, and only then, so a run that found
# everything cached adds no line. make test compares the log before and
# after each step (scripts/test-steps.sh): a step that downloaded is not
# held to the suite times README.md quotes, which are for a warm cache.
#
# Usage: scripts/log-download.sh WHAT...
set -euo pipefail
(($#)) || {
	echo "usage: log-download.sh WHAT..." >&2
	exit 2
}
cache=$(bash "$(dirname "$0")/cache-dir.sh")
mkdir -p "$cache"
# One short line per write, appended: parallel writers do not interleave
# within a line (O_APPEND, a write under PIPE_BUF).
printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >>"$cache/downloads.log"
