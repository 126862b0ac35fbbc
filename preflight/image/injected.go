package image

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"slices"
	"strings"
)

// What the NVIDIA Container Toolkit puts into a container when it starts
// on a GPU node: the host driver's libraries, bind-mounted into the
// image's library directory (with their driver-version file names and the
// .so.1 links ldconfig or the CDI hooks create), its utilities, and the
// GSP firmware. They are the host's, not the image's: a baked manifest
// must not go stale because they appeared, which changes the mtime and the
// listing of /usr/lib/x86_64-linux-gnu on every GPU run.
//
// Source: NVIDIA libnvidia-container src/nvc_info.c (utility_bins,
// compute_bins, utility_libs, compute_libs, video_libs, graphics_libs,
// graphics_libs_glvnd, graphics_libs_compat, ngx_libs, dxcore_libs, and
// lookup_firmwares' /lib/firmware/nvidia/<version>); the CDI spec nvidia-ctk
// generates from the same lists. Each entry is a file-name prefix, as
// libnvidia-container matches them ("libcuda.so" covers libcuda.so.1 and
// libcuda.so.550.54.15).
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

// injectedDirs are directories the toolkit creates to hold what it mounts,
// by the name they get in their parent: /lib/firmware (/usr/lib/firmware
// under a merged /usr) for the GSP firmware, vdpau/ in the multiarch
// library directory for libvdpau_nvidia.
var injectedDirs = []struct{ dir, name string }{
	{"/lib", "firmware"},
	{"/usr/lib", "firmware"},
	{"/usr/lib/x86_64-linux-gnu", "vdpau"},
	{"/usr/lib/aarch64-linux-gnu", "vdpau"},
}

// injected reports whether the entry name in directory dir (a path inside
// the root) may be something the container runtime put there from the host.
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

// listingDigest is the SHA-256 of the sorted names in entries that belong
// to the image (not injected), one per line: what a directory's stamp
// compares, since the scan reads only names from a listing.
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
