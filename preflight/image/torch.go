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

// torchVersion is what torch/version.py records.
type torchVersion struct {
	// Version is __version__, "2.1.0+cu118".
	Version string
	// CUDA is the CUDA the wheel was built with, "11.8"; empty for a CPU
	// or ROCm build (cuda = None).
	CUDA string
	// HIP is the ROCm HIP version of a ROCm build.
	HIP string
}

// parseTorchVersion reads torch/version.py, which
// tools/generate_torch_version.py writes as
//
//	__version__ = '2.1.0+cu118'
//	debug = False
//	cuda: Optional[str] = '11.8'
//	git_version = '<sha>'
//	hip: Optional[str] = None
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
