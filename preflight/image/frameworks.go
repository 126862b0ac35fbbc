package image

import (
	"cmp"
	"path"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
)

// Where each framework's load closure starts (kernels.go): the extension
// modules Python imports, in the order it imports them, and the kernel
// libraries of the framework's own wheel layout, which the closure from the
// modules normally reaches anyway (docs/sources.md, "Framework build info
// on disk").
var (
	// torch/__init__.py loads lib/libtorch_global_deps.so (RTLD_GLOBAL)
	// before it imports torch._C. PyTorch 2.x ships libtorch_cuda.so;
	// 1.10-1.12 split it into _cu and _cpp (pytorch#69646); linalg holds
	// the MAGMA/cuSOLVER kernels.
	torchModules = []string{
		"torch/lib/libtorch_global_deps.so", "torch/_C*.so",
		"torch/lib/libtorch_cuda.so", "torch/lib/libtorch_cuda_cu.so",
		"torch/lib/libtorch_cuda_cpp.so", "torch/lib/libc10_cuda.so",
		"torch/lib/libtorch_cuda_linalg.so",
	}
	// Paddle: fluid/core_*.so and fluid/libpaddle.so up to 2.5,
	// base/libpaddle.so from 2.6, and the 3.x libs/libphi*.so split.
	paddleModules = []string{"paddle/base/libpaddle.so", "paddle/fluid/libpaddle.so", "paddle/fluid/core_*.so", "paddle/libs/libphi*.so"}
	// TensorFlow: python/_pywrap_tensorflow_internal.so (the module every
	// other _pywrap_* links), libtensorflow_cc.so.2 and
	// libtensorflow_framework.so.2.
	tensorflowModules = []string{
		"tensorflow/python/_pywrap_tensorflow_internal.so",
		"tensorflow/libtensorflow_cc.so.2", "tensorflow/libtensorflow_framework.so.2",
	}
	// JAX: jaxlib's extension modules, the PJRT plugin
	// (jax_plugins/xla_cuda12/xla_cuda_plugin.so), the jax_cuda12_plugin
	// kernels, and older jaxlib's own CUDA modules.
	jaxModules = []string{
		"jaxlib/*.so", "jax_plugins/xla_cuda*/*.so", "jax_cuda*_plugin/*.so", "jaxlib/cuda/*.so",
	}
)

// frameworks fills s.res.Frameworks from every site-packages directory.
func (s *scanner) frameworks() {
	for _, sp := range s.res.SitePackages {
		names := s.list(sp)
		dists := s.distInfos(sp)
		has := func(n string) bool { _, ok := slices.BinarySearch(names, n); return ok }
		for _, fw := range []func(string, func(string) bool, map[string]DistInfo) (facts.Framework, bool){
			s.paddle, s.torch, s.tensorflow, s.jax,
		} {
			if f, ok := fw(sp, has, dists); ok {
				s.res.Frameworks = append(s.res.Frameworks, f)
			}
		}
	}
}

func distPath(sp string, d DistInfo) string {
	return path.Join(sp, d.Name+"-"+d.Version+".dist-info")
}

func (s *scanner) torch(sp string, has func(string) bool, dists map[string]DistInfo) (facts.Framework, bool) {
	d, hasDist := dists["torch"]
	if !has("torch") && !hasDist {
		return facts.Framework{}, false
	}
	f := facts.Framework{Name: "torch", Location: path.Join(sp, "torch")}
	vf := path.Join(sp, "torch/version.py")
	if b := s.read(vf); b != nil {
		if v, err := ParseTorchVersion(b); err == nil {
			f.Version, f.CUDAVersion, f.Source = v.Version, v.CUDA, vf
			// version.py records cuda = None and hip = None for a CPU wheel.
			switch {
			case v.CUDA != "":
				f.Build = facts.BuildCUDA
			case v.HIP != "":
				f.Build = facts.BuildROCm
			default:
				f.Build = facts.BuildCPU
			}
		} else {
			s.warnf("image: %s: %v", vf, err)
		}
	}
	if f.Version == "" && hasDist {
		// Only download.pytorch.org wheels carry +cuNNN; a plain PyPI
		// version leaves the CUDA build unknown.
		f.Version, f.CUDAVersion, f.Source = d.Version, LocalCUDA(d.Version), distPath(sp, d)
		f.Build = localBuild(d.Version)
	}
	if f.Version == "" {
		return facts.Framework{}, false
	}
	s.kernels(&f, sp, torchModules, nil)
	return f, true
}

func (s *scanner) paddle(sp string, has func(string) bool, dists map[string]DistInfo) (facts.Framework, bool) {
	d, hasDist := firstDist(dists, "paddlepaddle_gpu", "paddlepaddle")
	if !has("paddle") && !hasDist {
		return facts.Framework{}, false
	}
	f := facts.Framework{Name: "paddlepaddle", Location: path.Join(sp, "paddle")}
	var archs []string
	for _, vf := range []string{"paddle/version/__init__.py", "paddle/version.py"} {
		vf = path.Join(sp, vf)
		b := s.read(vf)
		if b == nil {
			continue
		}
		v, err := ParsePaddleVersion(b)
		if err != nil {
			s.warnf("image: %s: %v", vf, err)
			continue
		}
		f.Version, f.CUDAVersion, f.CuDNNVersion, f.Source = v.Version, v.CUDA, v.CuDNN, vf
		archs = v.Archs
		if v.CUDA != "" {
			f.Build = facts.BuildCUDA
		} else if v.CUDARecorded {
			f.Build = facts.BuildCPU
		}
		break
	}
	if hasDist {
		// The wheel's release ("2.6.0.post118") says more than full_version
		// ("2.6.0"); before 2.2 its post tag is the only CUDA record.
		if f.Version == "" || strings.HasPrefix(d.Version, f.Version) {
			f.Version = d.Version
		}
		if f.CUDAVersion == "" {
			f.CUDAVersion = PaddlePostCUDA(d.Version)
		}
		switch {
		case f.CUDAVersion != "":
			f.Build = facts.BuildCUDA
		case d.Name == "paddlepaddle" && f.Build == "":
			// The CPU wheel is "paddlepaddle"; GPU builds are
			// "paddlepaddle-gpu" (or carry a .postNNN CUDA tag).
			f.Build = facts.BuildCPU
		}
		if f.Source == "" {
			f.Source = distPath(sp, d)
		}
	}
	if f.Version == "" {
		return facts.Framework{}, false
	}
	s.kernels(&f, sp, paddleModules, archs)
	return f, true
}

func (s *scanner) tensorflow(sp string, has func(string) bool, dists map[string]DistInfo) (facts.Framework, bool) {
	d, hasDist := firstDist(dists, "tensorflow", "tensorflow_gpu", "tensorflow_cpu", "tf_nightly", "tf_nightly_gpu")
	if !has("tensorflow") && !hasDist {
		return facts.Framework{}, false
	}
	f := facts.Framework{Name: "tensorflow", Location: path.Join(sp, "tensorflow")}
	if hasDist {
		f.Version, f.Source = d.Version, distPath(sp, d)
	}
	var archs []string
	bf := path.Join(sp, "tensorflow/python/platform/build_info.py")
	if b := s.read(bf); b != nil {
		if bi, err := ParseTFBuildInfo(b); err == nil {
			switch {
			case bi.CUDABuild || bi.CUDA != "":
				f.CUDAVersion, f.CuDNNVersion = bi.CUDA, bi.CuDNN
				archs = bi.Archs
				f.Build = facts.BuildCUDA
			case bi.ROCmBuild:
				f.Build = facts.BuildROCm
			default:
				f.Build = facts.BuildCPU
			}
			f.Source = bf
		} else {
			s.warnf("image: %s: %v", bf, err)
		}
	}
	if f.Version == "" && f.Source == "" {
		return facts.Framework{}, false
	}
	if f.Build == "" && hasDist && d.Name == "tensorflow_cpu" {
		f.Build = facts.BuildCPU
	}
	s.kernels(&f, sp, tensorflowModules, archs)
	return f, true
}

func (s *scanner) jax(sp string, has func(string) bool, dists map[string]DistInfo) (facts.Framework, bool) {
	lib, hasLib := dists["jaxlib"]
	var plugin DistInfo
	var pluginMajor string
	for _, major := range []string{"13", "12", "11"} {
		if p, ok := firstDist(dists, "jax_cuda"+major+"_plugin", "jax_cuda"+major+"_pjrt"); ok {
			plugin, pluginMajor = p, major
			break
		}
	}
	if !hasLib && pluginMajor == "" {
		return facts.Framework{}, false
	}
	f := facts.Framework{Name: "jax", Location: path.Join(sp, "jaxlib")}
	if hasLib {
		f.Version, f.Source = lib.Version, distPath(sp, lib)
		if t, ok := ParseJaxlibVersion(lib.Version); ok {
			f.CUDAVersion, f.CuDNNVersion = t.CUDA, t.CuDNN
		}
	}
	if pluginMajor != "" {
		if f.Version == "" {
			f.Version = plugin.Version
		}
		if f.CUDAVersion == "" {
			f.CUDAVersion = pluginMajor
		}
		f.Source = distPath(sp, plugin)
		f.Location = path.Join(sp, "jax_plugins")
	}
	switch {
	case f.CUDAVersion != "":
		f.Build = facts.BuildCUDA
	case hasLib:
		// Since jax 0.4.26 jaxlib is CPU-only and CUDA comes from the
		// jax-cuda*-plugin wheels; a jaxlib with neither a CUDA tag nor a
		// plugin runs on the CPU.
		f.Build = facts.BuildCPU
	}
	// The CUDA 12+ plugins run on the CUDA runtime wheel they depend on:
	// its release refines a major-only "12" to "12.4".
	if major := f.CUDAVersion; major != "" && !strings.Contains(major, ".") {
		if rt, ok := dists["nvidia_cuda_runtime_cu"+major]; ok && strings.HasPrefix(rt.Version, major+".") {
			f.CUDAVersion = majorMinor(rt.Version)
		}
		if f.CuDNNVersion == "" {
			if c, ok := dists["nvidia_cudnn_cu"+major]; ok {
				f.CuDNNVersion = c.Version
			}
		}
	}
	s.kernels(&f, sp, jaxModules, nil)
	return f, true
}

// localBuild reads the build from a wheel's local version tag: "+cu121"
// CUDA, "+cpu" CPU, "+rocm6.1" ROCm; "" when there is none.
func localBuild(version string) string {
	_, local, ok := strings.Cut(version, "+")
	switch {
	case !ok:
		return ""
	case LocalCUDA(version) != "":
		return facts.BuildCUDA
	case strings.HasPrefix(local, "cpu"):
		return facts.BuildCPU
	case strings.HasPrefix(local, "rocm"):
		return facts.BuildROCm
	}
	return ""
}

// mergeArchs returns the distinct targets of recorded and of the
// libraries' images, in architecture order.
func mergeArchs(recorded []string, libs []facts.KernelLibrary) []string {
	var out []string
	out = append(out, recorded...)
	for _, l := range libs {
		for _, im := range l.Images {
			out = append(out, im.Arch)
		}
	}
	if len(out) == 0 {
		return nil
	}
	SortArchs(out)
	return slices.Compact(out)
}

// SortArchs sorts targets by compute capability, a cubin before the PTX of
// the same capability, plain before 'a' and 'f' variants; names that are
// not targets go last, alphabetically.
func SortArchs(archs []string) {
	slices.SortFunc(archs, func(a, b string) int {
		x, errA := gpuarch.Parse(a)
		y, errB := gpuarch.Parse(b)
		switch {
		case errA != nil && errB != nil:
			return strings.Compare(a, b)
		case errA != nil:
			return 1
		case errB != nil:
			return -1
		}
		if c := cmp.Compare(x.Major, y.Major); c != 0 {
			return c
		}
		if c := cmp.Compare(x.Minor, y.Minor); c != 0 {
			return c
		}
		if x.PTX != y.PTX {
			if x.PTX {
				return 1
			}
			return -1
		}
		if c := cmp.Compare(x.Suffix, y.Suffix); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
}
