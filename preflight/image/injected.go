package image

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"slices"
	"strings"
)

// injectedPrefixes are the file-name prefixes of what the NVIDIA Container
// Toolkit mounts from the host into a container on a GPU node: the host's
// files, which must not make a baked manifest stale. Source: NVIDIA
// libnvidia-container src/nvc_info.c, by its list names below.
var injectedPrefixes = []string{
	// utility_bins, compute_bins
	"nvidia-smi", "nvidia-debugdump", "nvidia-persistenced", "nv-fabricmanager",
	"nvidia-cuda-mps-control", "nvidia-cuda-mps-server",
	// utility_libs
	"libnvidia-ml.so", "libnvidia-cfg.so", "libnvidia-nscq.so",
	// compute_libs
	"libcuda.so", "libcudadebugger.so", "libnvidia-opencl.so", "libnvidia-gpucomp.so",
	"libnvidia-ptxjitcompiler.so", "libnvidia-fatbinaryloader.so", "libnvidia-allocator.so",
	"libnvidia-compiler.so", "libnvidia-pkcs11.so", "libnvidia-pkcs11-openssl3.so",
	"libnvidia-nvvm.so", "libnvidia-tileiras.so",
	// video_libs
	"libvdpau_nvidia.so", "libnvidia-encode.so", "libnvidia-opticalflow.so", "libnvcuvid.so",
	// graphics_libs, graphics_libs_glvnd
	"libnvidia-eglcore.so", "libnvidia-glcore.so", "libnvidia-tls.so", "libnvidia-glsi.so",
	"libnvidia-fbc.so", "libnvidia-ifr.so", "libnvidia-rtcore.so", "libnvoptix.so",
	"libGLX_nvidia.so", "libEGL_nvidia.so", "libGLESv2_nvidia.so", "libGLESv1_CM_nvidia.so",
	"libnvidia-glvkspirv.so", "libnvidia-cbl.so",
	// graphics_libs_compat (mounted only when NVIDIA's own)
	"libGL.so", "libEGL.so", "libGLESv1_CM.so", "libGLESv2.so",
	// ngx_libs, dxcore_libs
	"libnvidia-ngx.so", "libdxcore.so",
}

// injectedDirs are the directories the toolkit creates for what it mounts
// (the GSP firmware, libvdpau_nvidia), by parent and name.
var injectedDirs = []struct{ dir, name string }{
	{"/lib", "firmware"},
	{"/usr/lib", "firmware"},
	{"/usr/lib/x86_64-linux-gnu", "vdpau"},
	{"/usr/lib/aarch64-linux-gnu", "vdpau"},
}

// injected reports whether entry name in directory dir may have been put
// there from the host by the container runtime.
func injected(dir, name string) bool {
	for _, p := range injectedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	dir = path.Clean(dir)
	for _, d := range injectedDirs {
		if d.dir == dir && d.name == name {
			return true
		}
	}
	return false
}

// listingDigest is the SHA-256 of the sorted names in entries that are the
// image's, one per line: what a directory's stamp compares.
func listingDigest(dir string, entries []string) string {
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !injected(dir, e) {
			names = append(names, e)
		}
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}
