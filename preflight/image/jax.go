package image

import (
	"path"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/releases"
)

// jaxModules: jaxlib's extensions, the PJRT plugin, the jax_cuda*_plugin
// kernels, and older jaxlib's own CUDA modules.
var jaxModules = []string{
	"jaxlib/*.so", "jax_plugins/xla_cuda*/*.so", "jax_cuda*_plugin/*.so", "jaxlib/cuda/*.so",
}

func (s *scanner) jax(v *view) (facts.Framework, bool) {
	lib, hasLib := v.dist("jaxlib")
	var plugin distInfo
	var pluginMajor, rocm string
	for _, major := range []string{"13", "12", "11"} {
		if p, ok := v.firstDist("jax_cuda"+major+"_plugin", "jax_cuda"+major+"_pjrt"); ok {
			plugin, pluginMajor = p, major
			break
		}
	}
	if pluginMajor == "" {
		// jax_rocm{version}_plugin and _pjrt (jax's build_gpu_*_wheel.py).
		if d, r, ok := v.distMatching(rocmPluginVersion); ok {
			plugin, rocm = d, r
		}
	}
	if !hasLib && pluginMajor == "" && rocm == "" {
		return facts.Framework{}, false
	}
	var sp string
	switch {
	case pluginMajor != "" || rocm != "":
		d, ok := v.pkg("jax_plugins")
		sp, _ = home(d, ok, plugin, true)
	default:
		d, ok := v.pkg("jaxlib")
		sp, _ = home(d, ok, lib, true)
	}
	f := facts.Framework{Name: "jax", Location: path.Join(sp, "jaxlib")}
	if hasLib {
		f.Version, f.Source = lib.Version, distPath(sp, lib)
		if t, ok := parseJaxlibVersion(lib.Version); ok {
			f.CUDAVersion, f.CuDNNVersion = t.CUDA, t.CuDNN
		}
	}
	if pluginMajor != "" || rocm != "" {
		if f.Version == "" {
			f.Version = plugin.Version
		}
		f.Source = distPath(sp, plugin)
		f.Location = path.Join(sp, "jax_plugins")
	}
	s.jaxImportability(&f, sp, lib, hasLib, plugin, pluginMajor, rocm)
	if rocm != "" {
		f.Build, f.CUDAVersion = facts.BuildROCm, ""
		return f, true
	}
	if pluginMajor != "" && f.CUDAVersion == "" {
		// The plugin's build CUDA; the runtime wheel beside it may be newer
		// and is the CUDARuntime.
		if cuda, _, ok := releases.JAXPluginCUDA(plugin.Version); ok {
			f.CUDAVersion = cuda
		} else {
			f.CUDAVersion = pluginMajor
		}
	}
	switch {
	case f.CUDAVersion != "":
		f.Build = facts.BuildCUDA
	case hasLib:
		// Since 0.4.26 jaxlib is CPU-only; CUDA comes from the plugins.
		f.Build = facts.BuildCPU
	}
	if major := cudaMajor(f.CUDAVersion); major != "" && f.CuDNNVersion == "" {
		if c, ok := v.dist(wheelDist("cudnn", major)); ok {
			f.CuDNNVersion = c.Version
		}
	}
	s.kernels(&f, sp, jaxModules, nil)
	return f, true
}

// jaxImportability checks the package jax imports the plugin from
// (jax_plugins/xla_cuda12, jax_plugins/xla_rocm60: jax's plugin discovery
// walks the jax_plugins namespace package), else jaxlib.
func (s *scanner) jaxImportability(f *facts.Framework, sp string, lib distInfo, hasLib bool, plugin distInfo, major, rocm string) {
	switch {
	case major != "":
		s.importability(f, path.Join(sp, "jax_plugins", "xla_cuda"+major), nil, plugin, true)
	case rocm != "":
		s.importability(f, path.Join(sp, "jax_plugins", "xla_rocm"+strings.ReplaceAll(rocm, ".", "")), nil, plugin, true)
	default:
		s.importability(f, path.Join(sp, "jaxlib"), []string{"version.py"}, lib, hasLib)
	}
}

// rocmPluginVersion reads the ROCm version of a jax ROCm plugin's
// distribution name: "jax_rocm60_plugin" -> "6.0", "jax_rocm7_pjrt" -> "7".
func rocmPluginVersion(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "jax_rocm")
	if !ok {
		return "", false
	}
	n, ok := strings.CutSuffix(rest, "_plugin")
	if !ok {
		if n, ok = strings.CutSuffix(rest, "_pjrt"); !ok {
			return "", false
		}
	}
	if !digitsOnly(n) {
		return "", false
	}
	if len(n) == 1 {
		return n, true
	}
	return n[:1] + "." + n[1:], true
}

// jaxlibTag is the build in an older jaxlib's local version tag: CUDA "12"
// for "+cuda12" or "11.1" for "+cuda111", CuDNN "8.9" for "cudnn89".
type jaxlibTag struct{ CUDA, CuDNN string }

// parseJaxlibVersion reads "0.4.28+cuda12.cudnn89"; ok is false without a
// cuda tag.
func parseJaxlibVersion(version string) (jaxlibTag, bool) {
	_, local, found := strings.Cut(version, "+")
	if !found {
		return jaxlibTag{}, false
	}
	var t jaxlibTag
	for _, part := range strings.Split(local, ".") {
		switch {
		case strings.HasPrefix(part, "cudnn"):
			n := part[len("cudnn"):]
			if digitsOnly(n) && len(n) >= 2 {
				t.CuDNN = n[:1] + "." + n[1:2]
				if len(n) > 2 {
					t.CuDNN += "." + n[2:]
				}
			}
		case strings.HasPrefix(part, "cuda"):
			n := part[len("cuda"):]
			switch {
			case !digitsOnly(n):
			case len(n) <= 2:
				t.CUDA = strings.TrimLeft(n, "0")
			default:
				t.CUDA = cudaFromDigits(n)
			}
		}
	}
	return t, t.CUDA != ""
}
