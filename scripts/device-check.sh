#!/usr/bin/env bash
# Runs the built binaries on a machine with a real NVIDIA GPU and driver and
# prints what they saw: the probe's raw JSON document, its CUDA smoke test
# in init and kernel mode, then the provenance record of `gpu-preflight
# check --json` with PREFLIGHT_CUDA_CHECK=kernel (and nvidia-smi's view,
# when it is installed, to compare by eye). Build here with `make build
# probe`, copy bin/ and this script there, run it; or `make device-check`
# on the machine.
#
# Usage: scripts/device-check.sh [OUTDIR]
# With OUTDIR, the outputs are also written there (probe.json,
# cuda-init.json, cuda-kernel.json, check.json, check.log, nvidia-smi.txt),
# ready to commit under testdata/real/ as a fixture (preflight/cudaprobe's
# TestRealFixtures parses every one).
#
# Exit status: 0 when the probe printed its document and the shim its
# record, whatever they found (a host the image does not suit is still a
# good check); 1 when either binary failed to produce its JSON.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
shim=${GPU_PREFLIGHT_BIN:-$here/../bin/gpu-preflight}
probe=${GPU_PREFLIGHT_NVML_BIN:-$here/../bin/gpu-preflight-nvml}
out=${1:-}

for b in "$shim" "$probe"; do
	if [[ ! -x $b ]]; then
		echo "device-check: $b is missing; build it with 'make build probe'" >&2
		exit 1
	fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

if command -v nvidia-smi >/dev/null; then
	nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,compute_cap,driver_version,persistence_mode,mig.mode.current,memory.total \
		--format=csv >"$tmp/nvidia-smi.txt" 2>&1
	nvidia-smi >>"$tmp/nvidia-smi.txt" 2>&1
	echo "== nvidia-smi"
	cat "$tmp/nvidia-smi.txt"
else
	echo "nvidia-smi not installed" >"$tmp/nvidia-smi.txt"
fi

echo "== $probe (raw JSON, PREFLIGHT_NVML_LIBRARY=${PREFLIGHT_NVML_LIBRARY:-libnvidia-ml.so.1})"
start=$(date +%s%N)
"$probe" >"$tmp/probe.json" 2>"$tmp/probe.err"
rc=$?
end=$(date +%s%N)
cat "$tmp/probe.json"
[[ -s $tmp/probe.err ]] && {
	echo "-- probe stderr:"
	cat "$tmp/probe.err"
}
echo "-- probe exit $rc after $(((end - start) / 1000000)) ms"
if [[ $rc -ne 0 ]] || ! grep -q '"outcome":' "$tmp/probe.json"; then
	echo "device-check: the probe gave no document" >&2
	status=1
fi

for mode in init kernel; do
	echo "== $probe cuda $mode (raw JSON, libcuda.so.1 through LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-})"
	start=$(date +%s%N)
	"$probe" cuda "$mode" >"$tmp/cuda-$mode.json" 2>>"$tmp/probe.err"
	rc=$?
	end=$(date +%s%N)
	cat "$tmp/cuda-$mode.json"
	echo "-- probe cuda $mode exit $rc after $(((end - start) / 1000000)) ms"
	if [[ $rc -ne 0 ]] || ! grep -q '"outcome":' "$tmp/cuda-$mode.json"; then
		echo "device-check: the probe's cuda $mode gave no document" >&2
		status=1
	fi
done

echo "== $shim check --json (PREFLIGHT_CUDA_CHECK=kernel)"
PREFLIGHT_CUDA_CHECK=kernel PREFLIGHT_PROVENANCE_DIR=off PREFLIGHT_LOG_FORMAT=json PREFLIGHT_TERMINATION_LOG="$tmp/termination-log" \
	"$shim" check --json >"$tmp/check.json" 2>"$tmp/check.log"
rc=$?
cat "$tmp/check.json"
echo "-- gpu-preflight check exit $rc (0 runs, 78 and 75 abort; all are answers)"
echo "-- its log:"
cat "$tmp/check.log"
if [[ $rc -ne 0 && $rc -ne 78 && $rc -ne 75 ]] || ! grep -q '"schemaVersion"' "$tmp/check.json"; then
	echo "device-check: gpu-preflight check --json printed no record" >&2
	status=1
fi

if [[ -n $out ]]; then
	mkdir -p "$out"
	cp "$tmp/probe.json" "$tmp/cuda-init.json" "$tmp/cuda-kernel.json" "$tmp/check.json" "$tmp/check.log" "$tmp/nvidia-smi.txt" "$out/"
	echo "device-check: outputs written to $out" >&2
fi
exit $status
