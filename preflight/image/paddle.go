package image

import (
	"path"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// paddleModules: fluid/ to 2.5, base/ from 2.6, 3.x's libs/libphi*.so.
var paddleModules = []string{"paddle/base/libpaddle.so", "paddle/fluid/libpaddle.so", "paddle/fluid/core_*.so", "paddle/libs/libphi*.so"}

func (s *scanner) paddle(env *view) (facts.Framework, bool) {
	d, hasDist := env.firstDist("paddlepaddle_gpu", "paddlepaddle")
	pkgDir, found := env.pkg("paddle")
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
			// The CPU wheel's files, whatever a GPU dist-info beside says.
			f.Build = facts.BuildCPU
			d, hasDist = env.firstDist("paddlepaddle", "paddlepaddle_gpu")
		}
		break
	}
	if hasDist {
		// "2.6.0.post118" says more than full_version; before 2.2 its post
		// tag is the only CUDA record.
		if f.Version == "" || strings.HasPrefix(d.Version, f.Version) {
			f.Version = d.Version
		}
		if f.CUDAVersion == "" && f.Build != facts.BuildCPU {
			f.CUDAVersion = paddlePostCUDA(d.Version)
		}
		switch {
		case f.CUDAVersion != "":
			f.Build = facts.BuildCUDA
		case d.Name == "paddlepaddle" && f.Build == "":
			// The CPU wheel; GPU builds are paddlepaddle-gpu or .postNNN.
			f.Build = facts.BuildCPU
		}
		if f.Source == "" {
			f.Source = distPath(sp, d)
		}
	}
	if f.Version == "" {
		return facts.Framework{}, false
	}
	s.importability(&f, f.Location, []string{"version", "version.py"}, d, hasDist)
	s.kernels(&f, sp, paddleModules, archs)
	return f, true
}

// paddleVersion is what paddle/version/__init__.py (version.py before 2.5)
// records: full_version, cuda_version (from 2.2; 'False' for a CPU build,
// so CUDARecorded tells it from an old release), cudnn_version and, from
// 3.x, compiled_cuda_archs as targets.
type paddleVersion struct {
	Version, CUDA, CuDNN string
	CUDARecorded         bool
	Archs                []string
}

// parsePaddleVersion reads what Paddle's setup.py write_version_py writes.
func parsePaddleVersion(src []byte) (paddleVersion, error) {
	f := pyenv.ModuleAssignments(src)
	var v paddleVersion
	var err error
	if v.Version, err = versionString(f, "full_version", "paddle version file"); err != nil {
		return paddleVersion{}, err
	}
	v.CUDA = paddleFlag(f["cuda_version"])
	_, v.CUDARecorded = f["cuda_version"]
	v.CuDNN = paddleFlag(f["cudnn_version"])
	v.Archs = archList(f["compiled_cuda_archs"])
	return v, nil
}

// paddleFlag reads a version field, which a build without the component
// writes as 'False' or 'OFF'.
func paddleFlag(v pyenv.Literal) string {
	s, _ := v.Scalar()
	switch strings.ToLower(s) {
	case "false", "off", "none", "0":
		return ""
	}
	return s
}

// paddlePostCUDA returns the CUDA of a 2.x wheel's ".postNNN" release
// ("2.6.0.post118" -> "11.8"); before 2.0 the tag held cuDNN too
// (".post107"), so only a release the compat tables know counts.
func paddlePostCUDA(version string) string {
	i := strings.LastIndex(version, ".post")
	if i < 0 {
		return ""
	}
	n := version[i+len(".post"):]
	if !digitsOnly(n) {
		return ""
	}
	cuda := cudaFromDigits(n)
	if _, known := compat.MinDriver(cuda); !known {
		return ""
	}
	return cuda
}
