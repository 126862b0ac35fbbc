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
		// AMD's tensorflow-rocm wheel (ROCm/tensorflow-upstream's
		// build_pip_package names the project tensorflow_rocm).
		f.Build = facts.BuildROCm
	}
	s.kernels(&f, sp, tensorflowModules, archs)
	return f, true
}

// tfBuildInfo is what tensorflow/python/platform/build_info.py records.
type tfBuildInfo struct {
	// CUDA is cuda_version, "12.1"; empty for a CPU build.
	CUDA string
	// CuDNN is cudnn_version, the major only: "8".
	CuDNN string
	// Archs is cuda_compute_capabilities: "sm_80", "compute_90".
	Archs []string
	// CUDABuild is is_cuda_build; ROCmBuild is is_rocm_build.
	CUDABuild, ROCmBuild bool
}

// parseTFBuildInfo reads the module tensorflow/tools/build_info/
// gen_build_info.py writes:
//
//	build_info = collections.OrderedDict([('cpu_compiler', '/usr/bin/gcc'),
//	  ('cuda_compute_capabilities', ['sm_35', 'sm_50', 'compute_80']),
//	  ('cuda_version', '11.2'), ('cudnn_version', '8'),
//	  ('is_cuda_build', True), ('is_rocm_build', False), ...])
//
// Module-level assignments of the same keys are read too.
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
	// A CPU build records cuda_version as '' or leaves it out; Windows
	// builds write '64_112'. Only a dotted version is a CUDA version.
	if !dotted(v.CUDA) {
		v.CUDA = ""
	}
	return v, nil
}

// buildInfoFields merges a build-info module's two spellings: module-level
// assignments, and the pairs of a mapping assigned to a name
// (build_info = collections.OrderedDict([(key, value), ...])).
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
