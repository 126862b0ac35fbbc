#!/bin/bash
# What NGC-style container entrypoints do before the command: print the
# driver version from procfs, query nvidia-smi, check the size of /dev/shm,
# then exec the command. bench/startup times it next to gpu-preflight.
# Written for the benchmark; it only mirrors the work such scripts do.
if [[ -r /proc/driver/nvidia/version ]]; then
	driver=$(sed -n 's/.*Kernel Module  *\([0-9.]*\).*/\1/p' /proc/driver/nvidia/version)
	echo "NVIDIA driver ${driver:-unknown}"
else
	echo "WARNING: the NVIDIA driver was not detected."
fi
if command -v nvidia-smi >/dev/null; then
	nvidia-smi --query-gpu=index,name,driver_version,memory.total,compute_cap --format=csv,noheader ||
		echo "WARNING: nvidia-smi failed."
	nvidia-smi -L >/dev/null 2>&1 || true
fi
shm_kb=$(df -k --output=size /dev/shm 2>/dev/null | tail -n 1)
if [[ -n $shm_kb && $shm_kb -lt 1048576 ]]; then
	echo "NOTE: /dev/shm is ${shm_kb} KiB; multi-process data loading may need more (--shm-size=1g)."
fi
exec "$@"
