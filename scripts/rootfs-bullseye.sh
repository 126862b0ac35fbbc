#!/usr/bin/env bash
# Builds, once, the Debian bullseye root filesystem the container suite runs
# gpu-preflight in, and the small "image layer" that sits on top of it.
#
#   scripts/rootfs-bullseye.sh CACHE_DIR
#
# Leaves two directories in CACHE_DIR (normally rootfs in scripts/cache-dir.sh's folder):
#   bullseye/           debootstrap --variant=minbase bullseye: glibc 2.31, the
#                       glibc of the Ubuntu 20.04 PaddlePaddle 2.6 images.
#   paddle-2.6-cuda11.8/  only the files a PaddlePaddle 2.6.0 post118 wheel
#                       leaves that gpu-preflight reads (version module and
#                       dist-info METADATA), under python3.8's dist-packages as
#                       in paddlepaddle/paddle:2.6.0-gpu-cuda11.8-cudnn8.6-trt8.5.
# The suite stacks them with overlayfs (layer over base), like image layers.
#
# Parallel callers are serialised by flock on CACHE_DIR/.bullseye.lock; a root
# is complete only when its stamp file exists, so an interrupted build is
# redone rather than used.
set -euo pipefail

cache=${1:?usage: rootfs-bullseye.sh CACHE_DIR}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
exec 9>"$cache/.bullseye.lock"
flock 9

if [[ $(id -u) -ne 0 ]]; then
	echo "rootfs-bullseye: debootstrap needs root" >&2
	exit 1
fi
command -v debootstrap >/dev/null || {
	echo "rootfs-bullseye: debootstrap is not installed (run 'make deps' as root)" >&2
	exit 1
}

base=$cache/bullseye
# The stamp names what was built, so changing the recipe rebuilds the root.
base_recipe="debootstrap --variant=minbase bullseye"
if [[ ! -f $base/.gpu-preflight-rootfs || $(<"$base/.gpu-preflight-rootfs") != "$base_recipe" ]]; then
	tmp=$cache/.bullseye.tmp
	rm -rf "$tmp" "$base"
	echo "rootfs-bullseye: $base_recipe (once; cached in $base)" >&2
	bash "$(dirname "$0")/log-download.sh" "rootfs-bullseye: $base_recipe"
	if ! debootstrap --variant=minbase bullseye "$tmp" >"$cache/bullseye.log" 2>&1; then
		echo "rootfs-bullseye: debootstrap failed; last lines of $cache/bullseye.log:" >&2
		tail -n 20 "$cache/bullseye.log" >&2
		exit 1
	fi
	# apt's caches are not needed in a root that never installs anything.
	rm -rf "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/lib/apt/lists/*
	printf '%s' "$base_recipe" >"$tmp/.gpu-preflight-rootfs"
	mv "$tmp" "$base"
fi

# The PaddlePaddle layer is tiny, so it is rewritten whenever this script
# changes (the stamp holds the script's hash).
layer=$cache/paddle-2.6-cuda11.8
layer_recipe=$(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)
if [[ ! -f $layer/.gpu-preflight-rootfs || $(<"$layer/.gpu-preflight-rootfs") != "$layer_recipe" ]]; then
	tmp=$cache/.paddle.tmp
	rm -rf "$tmp" "$layer"
	site=$tmp/usr/local/lib/python3.8/dist-packages
	mkdir -p "$site/paddle/version" "$site/paddlepaddle_gpu-2.6.0.post118.dist-info"
	# Field names and order follow the file Paddle 2.6's setup.py generates
	# (docs/sources.md, "Framework build info on disk": 2.2 adds cuda_version and
	# cudnn_version, 2.5 adds xpu_version, xpu_xccl_version, cinn_version).
	# Versions are those of the post118 wheel; the commit is a placeholder
	# (40 hex digits, like the real field), not Paddle's.
	cat >"$site/paddle/version/__init__.py" <<'PY'
# THIS FILE IS GENERATED FROM PADDLEPADDLE SETUP.PY
#
full_version    = '2.6.0'
major           = '2'
minor           = '6'
patch           = '0'
rc              = '0'
cuda_version    = '11.8'
cudnn_version   = '8.9'
xpu_version     = 'False'
xpu_xccl_version = 'False'
istaged         = True
commit          = '0000000000000000000000000000000000000000'
with_mkl        = 'ON'
cinn_version    = 'False'

def cuda():
    return cuda_version

def cudnn():
    return cudnn_version
PY
	: >"$site/paddle/__init__.py"
	cat >"$site/paddlepaddle_gpu-2.6.0.post118.dist-info/METADATA" <<'META'
Metadata-Version: 2.1
Name: paddlepaddle-gpu
Version: 2.6.0.post118
Summary: Parallel Distributed Deep Learning
Author: PaddlePaddle Author
License: Apache Software License
Keywords: paddle paddlepaddle
Classifier: Programming Language :: Python :: 3.8
Requires-Python: >=3.8
Requires-Dist: httpx
Requires-Dist: numpy (>=1.13)
Requires-Dist: Pillow
Requires-Dist: decorator
Requires-Dist: astor
Requires-Dist: opt-einsum (==3.3.0)
Requires-Dist: protobuf (>=3.20.2)

PaddlePaddle: an industrial deep learning platform.
META
	printf 'pip\n' >"$site/paddlepaddle_gpu-2.6.0.post118.dist-info/INSTALLER"
	printf 'paddle\n' >"$site/paddlepaddle_gpu-2.6.0.post118.dist-info/top_level.txt"
	printf '%s' "$layer_recipe" >"$tmp/.gpu-preflight-rootfs"
	mv "$tmp" "$layer"
fi
echo "$base"
