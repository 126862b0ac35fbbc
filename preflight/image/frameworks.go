package image

import (
	"cmp"
	"path"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
	"github.com/gpu-preflight/gpu-preflight/preflight/releases"
)

// Where each framework's load closure starts (kernels.go): the extension
// modules Python imports, in the order it imports them, and the kernel
// libraries of the framework's own wheel layout, which the closure from the
// modules normally reaches anyway (docs/sources.md, "Framework build info
// on disk").
var (
	// torch/__init__.py loads lib/libtorch_global_deps.so (RTLD_GLOBAL)
	// before it imports torch._C. PyTorch 2.x ships libtorch_cuda.so;
	// 1.10-1.12 split it into _cu and _cpp (pytorch#69646). Its linalg
	// library (the MAGMA/cuSOLVER kernels) is loaded on first use: see
	// dlopenLists.
	torchModules = []string{
		"torch/lib/libtorch_global_deps.so", "torch/_C*.so",
		"torch/lib/libtorch_cuda.so", "torch/lib/libtorch_cuda_cu.so",
		"torch/lib/libtorch_cuda_cpp.so", "torch/lib/libc10_cuda.so",
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

// frameworks fills s.res.Frameworks: in each environment, in search
// order, each framework as its interpreter imports it (the package from
// the first sys.path entry that holds it, the metadata from the first
// that has its dist-info). A framework two environments reach (a venv
// over the system site) is listed once, for the first.
func (s *scanner) frameworks() {
	seen := map[string]bool{}
	for _, e := range s.res.Environments {
		v := s.view(e)
		for _, detect := range []func(*view) (facts.Framework, bool){s.paddle, s.torch, s.tensorflow, s.jax} {
			f, ok := detect(v)
			if !ok {
				continue
			}
			key := s.root.RealPath(f.Location)
			if seen[key] {
				continue
			}
			seen[key] = true
			f.Environment, f.EnvironmentKind = e.Prefix, e.Kind
			f.PathEntry = path.Dir(f.Location)
			f.PathFrom = v.from(f.PathEntry)
			s.views[f.Location] = v
			s.res.Frameworks = append(s.res.Frameworks, f)
		}
	}
}

// view is one environment as its interpreter's import system sees it.
type view struct {
	s   *scanner
	env pyenv.Environment
}

func (s *scanner) view(e pyenv.Environment) *view { return &view{s: s, env: e} }

// dist returns distribution name as importlib.metadata finds it: from the
// first sys.path entry holding its metadata. An editable finder's
// directory is not on sys.path (its metadata is the dist-info in
// site-packages). Each directory's distributions are listed once
// (scanner.distInfos), and nothing is copied per environment.
func (v *view) dist(name string) (distInfo, bool) {
	for _, en := range v.env.Path {
		if en.Only != nil {
			continue
		}
		if d, ok := v.s.distInfos(en.Dir)[name]; ok {
			return d, true
		}
	}
	return distInfo{}, false
}

// firstDist returns the first of names installed.
func (v *view) firstDist(names ...string) (distInfo, bool) {
	for _, n := range names {
		if d, ok := v.dist(n); ok {
			return d, true
		}
	}
	return distInfo{}, false
}

// distMatching returns the installed distribution with the smallest name
// that match accepts, and what match said of it.
func (v *view) distMatching(match func(name string) (string, bool)) (distInfo, string, bool) {
	var best distInfo
	var bestVal string
	found := false
	for _, en := range v.env.Path {
		if en.Only != nil {
			continue
		}
		for name, d := range v.s.distInfos(en.Dir) {
			if val, ok := match(name); ok && (!found || name < best.Name) {
				best, bestVal, found = d, val, true
			}
		}
		if found {
			return best, bestVal, true
		}
	}
	return distInfo{}, "", false
}

// pkg returns the sys.path directory top-level package name is imported
// from: the first entry that holds a directory of that name.
func (v *view) pkg(name string) (string, bool) {
	for _, en := range v.env.Path {
		if en.Only != nil && !slices.Contains(en.Only, name) {
			continue
		}
		if _, ok := slices.BinarySearch(v.s.list(en.Dir), name); ok {
			return en.Dir, true
		}
	}
	return "", false
}

// dirs are the view's sys.path directories, in order.
func (v *view) dirs() []string {
	var out []string
	for _, en := range v.env.Path {
		out = append(out, en.Dir)
	}
	return out
}

// from says how dir got on the sys.path: "site-packages", ".pth <file>".
func (v *view) from(dir string) string {
	for _, en := range v.env.Path {
		if en.Dir == dir {
			if en.File != "" {
				return en.From + " " + en.File
			}
			return en.From
		}
	}
	return ""
}

// home is where a framework's package lives: the directory pkg found, or
// else the one its distribution's metadata is in.
func home(pkgDir string, found bool, d distInfo, hasDist bool) (string, bool) {
	switch {
	case found:
		return pkgDir, true
	case hasDist && d.dir() != "":
		return path.Dir(d.dir()), true
	}
	return "", false
}

func distPath(sp string, d distInfo) string {
	if dir := d.dir(); dir != "" {
		return dir
	}
	return path.Join(sp, d.Name+"-"+d.Version+".dist-info")
}

func (s *scanner) torch(v *view) (facts.Framework, bool) {
	d, hasDist := v.dist("torch")
	pkgDir, found := v.pkg("torch")
	sp, ok := home(pkgDir, found, d, hasDist)
	if !ok {
		return facts.Framework{}, false
	}
	f := facts.Framework{Name: "torch", Location: path.Join(sp, "torch")}
	vf := path.Join(sp, "torch/version.py")
	if b := s.read(vf); b != nil {
		if v, err := parseTorchVersion(b); err == nil {
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
		f.Version, f.CUDAVersion, f.Source = d.Version, localCUDA(d.Version), distPath(sp, d)
		f.Build = localBuild(d.Version)
	}
	if f.Version == "" {
		return facts.Framework{}, false
	}
	s.kernels(&f, sp, torchModules, nil)
	return f, true
}

func (s *scanner) paddle(v *view) (facts.Framework, bool) {
	d, hasDist := v.firstDist("paddlepaddle_gpu", "paddlepaddle")
	pkgDir, found := v.pkg("paddle")
	sp, ok := home(pkgDir, found, d, hasDist)
	if !ok {
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
		v, err := parsePaddleVersion(b)
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
			f.CUDAVersion = paddlePostCUDA(d.Version)
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

func (s *scanner) tensorflow(v *view) (facts.Framework, bool) {
	d, hasDist := v.firstDist("tensorflow", "tensorflow_gpu", "tensorflow_cpu", "tensorflow_rocm", "tf_nightly", "tf_nightly_gpu")
	pkgDir, found := v.pkg("tensorflow")
	sp, ok := home(pkgDir, found, d, hasDist)
	if !ok {
		return facts.Framework{}, false
	}
	f := facts.Framework{Name: "tensorflow", Location: path.Join(sp, "tensorflow")}
	if hasDist {
		f.Version, f.Source = d.Version, distPath(sp, d)
	}
	var archs []string
	bf := path.Join(sp, "tensorflow/python/platform/build_info.py")
	if b := s.read(bf); b != nil {
		if bi, err := parseTFBuildInfo(b); err == nil {
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
	switch {
	case f.Build == "" && hasDist && d.Name == "tensorflow_cpu":
		f.Build = facts.BuildCPU
	case hasDist && d.Name == "tensorflow_rocm" && f.Build != facts.BuildCUDA:
		// AMD's tensorflow-rocm wheel (ROCm/tensorflow-upstream's
		// build_pip_package names the project tensorflow_rocm).
		f.Build = facts.BuildROCm
	}
	s.kernels(&f, sp, tensorflowModules, archs)
	return f, true
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
		// The ROCm builds: jax-rocm60-plugin / jax-rocm60-pjrt (jax's
		// build_gpu_kernels_wheel.py and build_gpu_plugin_wheel.py name
		// them jax_rocm{version}_plugin and _pjrt).
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
	if rocm != "" {
		f.Build, f.CUDAVersion = facts.BuildROCm, ""
		return f, true
	}
	if pluginMajor != "" && f.CUDAVersion == "" {
		// The CUDA the plugin was built with is the framework's CUDA; the
		// runtime wheel pip resolved beside it can be newer (it is only
		// held to the plugin's floor), and is the framework's CUDARuntime.
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
		// Since jax 0.4.26 jaxlib is CPU-only and CUDA comes from the
		// jax-cuda*-plugin wheels; a jaxlib with neither a CUDA tag nor a
		// plugin runs on the CPU.
		f.Build = facts.BuildCPU
	}
	if major := cudaMajor(f.CUDAVersion); major != "" && f.CuDNNVersion == "" {
		if c, ok := v.dist("nvidia_cudnn_cu" + major); ok {
			f.CuDNNVersion = c.Version
		}
	}
	s.kernels(&f, sp, jaxModules, nil)
	return f, true
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

// localBuild reads the build from a wheel's local version tag: "+cu121"
// CUDA, "+cpu" CPU, "+rocm6.1" ROCm; "" when there is none.
func localBuild(version string) string {
	_, local, ok := strings.Cut(version, "+")
	switch {
	case !ok:
		return ""
	case localCUDA(version) != "":
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
	sortArchs(out)
	return slices.Compact(out)
}

// sortArchs sorts targets by compute capability, a cubin before the PTX of
// the same capability, plain before 'a' and 'f' variants; names that are
// not targets go last, alphabetically.
func sortArchs(archs []string) {
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
