package image

import (
	"path"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// paddleModules: fluid/ up to 2.5, base/ from 2.6, the 3.x libs/libphi*.so.
var paddleModules = []string{"paddle/base/libpaddle.so", "paddle/fluid/libpaddle.so", "paddle/fluid/core_*.so", "paddle/libs/libphi*.so"}

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

// paddleVersion is what paddle/version/__init__.py (paddle/version.py
// before 2.5) records.
type paddleVersion struct {
	// Version is full_version, "2.6.0".
	Version string
	// CUDA is cuda_version, "11.8"; empty for a CPU build, which writes
	// the string 'False'. Releases before 2.2 do not record it.
	CUDA string
	// CUDARecorded is true when the file records cuda_version at all, so
	// that an empty CUDA means a CPU build rather than an old release.
	CUDARecorded bool
	// CuDNN is cudnn_version, "8.6.0".
	CuDNN string
	// Archs is compiled_cuda_archs (3.x) as targets, [86] -> ["sm_86"].
	Archs []string
}

// parsePaddleVersion reads the module Paddle's setup.py generates
// (write_version_py): full_version = '2.6.0', cuda_version = '11.8',
// cudnn_version = '8.6.0', and from 3.x compiled_cuda_archs = [86].
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

// paddleFlag returns a version field Paddle writes as a string, where a
// build without the component writes 'False' (or 'OFF').
func paddleFlag(v pyenv.Literal) string {
	s, _ := v.Scalar()
	switch strings.ToLower(s) {
	case "false", "off", "none", "0":
		return ""
	}
	return s
}

// paddlePostCUDA returns the CUDA version of a PaddlePaddle 2.x wheel's
// ".postNNN" release ("2.6.0.post118" -> "11.8", ".post120" -> "12.0").
// Releases before 2.0 used the tag for CUDA and cuDNN together
// (".post107" = CUDA 10.0 + cuDNN 7), so a result is accepted only when it
// is a CUDA toolkit release the compatibility tables know.
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
