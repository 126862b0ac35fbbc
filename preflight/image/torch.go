package image

import (
	"path"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// torchModules are where torch's load closure starts (kernels.go):
// torch/__init__.py loads lib/libtorch_global_deps.so with RTLD_GLOBAL
// before it imports torch._C; 1.10-1.12 split libtorch_cuda into _cu and
// _cpp (pytorch#69646).
var torchModules = []string{
	"torch/lib/libtorch_global_deps.so", "torch/_C*.so",
	"torch/lib/libtorch_cuda.so", "torch/lib/libtorch_cuda_cu.so",
	"torch/lib/libtorch_cuda_cpp.so", "torch/lib/libc10_cuda.so",
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
		// A PyPI version without +cuNNN leaves the build unknown.
		f.Version, f.CUDAVersion, f.Source = d.Version, localCUDA(d.Version), distPath(sp, d)
		f.Build = localBuild(d.Version)
	}
	if f.Version == "" {
		return facts.Framework{}, false
	}
	s.importability(&f, f.Location, []string{"version.py"}, d, hasDist)
	s.kernels(&f, sp, torchModules, nil)
	return f, true
}

// torchVersion is what torch/version.py records: __version__, cuda (None
// for a CPU or ROCm build) and hip.
type torchVersion struct{ Version, CUDA, HIP string }

// parseTorchVersion reads torch/version.py as
// tools/generate_torch_version.py writes it.
func parseTorchVersion(src []byte) (torchVersion, error) {
	f := pyenv.ModuleAssignments(src)
	var v torchVersion
	var err error
	if v.Version, err = versionString(f, "__version__", "torch version.py"); err != nil {
		return torchVersion{}, err
	}
	v.CUDA, _ = f["cuda"].Str()
	v.HIP, _ = f["hip"].Str()
	return v, nil
}
