package image

import (
	"errors"
	"path"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// tensorflowModules: the module every other _pywrap_* links, and the two
// libraries beside it.
var tensorflowModules = []string{
	"tensorflow/python/_pywrap_tensorflow_internal.so",
	"tensorflow/libtensorflow_cc.so.2", "tensorflow/libtensorflow_framework.so.2",
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
		// AMD's wheel (ROCm/tensorflow-upstream's build_pip_package).
		f.Build = facts.BuildROCm
	}
	s.importability(&f, f.Location, []string{"python"}, d, hasDist)
	s.kernels(&f, sp, tensorflowModules, archs)
	return f, true
}

// tfBuildInfo is what tensorflow/python/platform/build_info.py records:
// cuda_version, cudnn_version (a major), cuda_compute_capabilities,
// is_cuda_build and is_rocm_build.
type tfBuildInfo struct {
	CUDA, CuDNN          string
	Archs                []string
	CUDABuild, ROCmBuild bool
}

// parseTFBuildInfo reads the module gen_build_info.py writes,
// build_info = collections.OrderedDict([('cuda_version', '11.2'), ...]),
// or module-level assignments of the same keys.
func parseTFBuildInfo(src []byte) (tfBuildInfo, error) {
	f := buildInfoFields(src)
	_, hasBuild := f["is_cuda_build"]
	_, hasCUDA := f["cuda_version"]
	if !hasBuild && !hasCUDA {
		return tfBuildInfo{}, errors.New("tensorflow build_info.py: neither is_cuda_build nor cuda_version is recorded")
	}
	var v tfBuildInfo
	v.CUDABuild = f["is_cuda_build"].True()
	v.ROCmBuild = f["is_rocm_build"].True()
	v.CUDA, _ = f["cuda_version"].Scalar()
	v.CuDNN, _ = f["cudnn_version"].Scalar()
	v.Archs = archList(f["cuda_compute_capabilities"])
	// Windows builds write '64_112': only a dotted version is one.
	if !dotted(v.CUDA) {
		v.CUDA = ""
	}
	return v, nil
}

// buildInfoFields merges the module's assignments and the pairs of the
// mappings it assigns.
func buildInfoFields(src []byte) map[string]pyenv.Literal {
	out := map[string]pyenv.Literal{}
	for name, v := range pyenv.ModuleAssignments(src) {
		out[name] = v
		for k, kv := range v.Pairs() {
			if _, set := out[k]; !set {
				out[k] = kv
			}
		}
	}
	return out
}
