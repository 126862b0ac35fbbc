#!/usr/bin/env bash
# Measures gpu-preflight's added start-up latency against tini's, in one
# hyperfine run so that every case sees the same machine load (SPEC section
# 8: the shim's added latency against tini's, provenance off, GPU-less host).
#
#   bash scripts/bench-startup.sh [RUNS]
#
# "added" = median(wrapper -- /bin/true) - median(/bin/true). Cases:
#   go-noop        a static Go program that only execs: the floor for any Go wrapper;
#   shim-host      the real root of this machine (its driver evidence, if any,
#                  starts the NVML probe);
#   shim-nodriver  --root at an empty tree: no driver evidence, so no probe:
#                  the GPU-less path;
#   shim-record    like shim-nodriver, with the provenance record written and fsynced.
# The shim is configured with flags, not env(1), whose own exec would count.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-300}
shim=bin/gpu-preflight
[[ -x $shim ]] || { echo "bench-startup: build first (make build)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "bench-startup: hyperfine missing (make deps)" >&2; exit 1; }
command -v tini >/dev/null || { echo "bench-startup: tini missing (make deps)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/empty" "$tmp/prov"
cat >"$tmp/noop.go" <<'GO'
package main

import (
	"os"
	"syscall"
)

func main() { syscall.Exec("/bin/true", []string{"true"}, os.Environ()) }
GO
(cd "$tmp" && CGO_ENABLED=0 go build -o noop noop.go)

quiet="--log-level=disabled --termination-log=$tmp/term"
hyperfine -N --warmup 30 --runs "$runs" --export-json "$tmp/out.json" \
	-n bare '/bin/true' \
	-n tini 'tini -s -- /bin/true' \
	-n go-noop "$tmp/noop" \
	-n shim-host "$shim $quiet --provenance-dir=off -- /bin/true" \
	-n shim-nodriver "$shim $quiet --provenance-dir=off --root=$tmp/empty -- /bin/true" \
	-n shim-record "$shim $quiet --provenance-dir=$tmp/prov --root=$tmp/empty -- /bin/true" \
	>/dev/null
python3 - "$tmp/out.json" <<'PY'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
med = {k: v["median"] * 1000 for k, v in res.items()}
bare = med["bare"]
print("median ms:", ", ".join(f"{k} {v:.2f}" for k, v in med.items()))
added = {k: med[k] - bare for k in med if k != "bare"}
t = added["tini"]
for k in ("go-noop", "shim-host", "shim-nodriver", "shim-record"):
    print(f"{k}: added {added[k]:.2f} ms = {added[k] / t:.2f}x tini's added {t:.2f} ms")
print(f"durable record write costs {med['shim-record'] - med['shim-nodriver']:.2f} ms")
PY
