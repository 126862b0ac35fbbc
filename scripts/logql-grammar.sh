#!/usr/bin/env bash
# Installs Grafana's LogQL grammar (@grafana/lezer-logql and the Lezer
# runtime it needs, at the versions test/examples/logql/package-lock.json
# pins) into test/examples/logql/node_modules, where the examples suite's
# LogQL test runs it with Node.js (make deps installs Node.js and npm).
# npm's download cache is kept under npm in scripts/cache-dir.sh's folder.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
for tool in node npm; do
	if ! command -v "$tool" >/dev/null; then
		echo "logql-grammar: $tool is not installed; run 'make deps' (as root)" >&2
		exit 1
	fi
done
cd "$root/test/examples/logql"
# From npm's cache alone when it holds the pinned packages; else fetched,
# and noted (scripts/log-download.sh).
npm_ci=(npm ci --no-audit --no-fund --loglevel=error --cache "$(bash "$root/scripts/cache-dir.sh")/npm")
if ! "${npm_ci[@]}" --offline 2>/dev/null; then
	bash "$root/scripts/log-download.sh" "logql-grammar: npm ci"
	"${npm_ci[@]}"
fi
