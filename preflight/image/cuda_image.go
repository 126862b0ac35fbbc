package image

import (
	"path"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// ImageCUDA returns the image's CUDA, what the job loads: the first source
// in facts.CUDASourceOrder that states it, the others in Others
// (docs/cuda-stack.md, "The image's CUDA"). frameworks are the judged ones,
// scanned Result.CUDASources, toolkit what preflight/container read.
func ImageCUDA(frameworks []facts.Framework, scanned []facts.CUDASource, toolkit facts.CUDAToolkit, env map[string]string) facts.CUDAToolkit {
	var all []facts.CUDASource
	for _, fw := range frameworks {
		if components(fw.CUDARuntime) >= 2 {
			all = append(all, facts.CUDASource{Kind: facts.CUDAFromRuntime, Version: majorMinor(fw.CUDARuntime),
				Full: fw.CUDARuntime, Source: frameworkName(fw) + " loads " + fw.CUDARuntimeSource})
			break
		}
	}
	if toolkit.Version != "" && toolkit.Kind != facts.CUDAFromEnv {
		all = append(all, facts.CUDASource{Kind: facts.CUDAFromToolkit, Version: toolkit.Version, Full: toolkit.Full, Source: toolkit.Source})
	}
	all = append(all, scanned...)
	if v, ok := env["CUDA_VERSION"]; ok {
		if ev := envVersion(v); components(ev) >= 2 {
			all = append(all, facts.CUDASource{Kind: facts.CUDAFromEnv, Version: majorMinor(ev), Full: ev, Source: facts.CUDAFromEnvSource})
		}
	}
	if len(all) == 0 {
		return facts.CUDAToolkit{}
	}
	w := all[0]
	return facts.CUDAToolkit{Version: w.Version, Full: w.Full, Source: w.Source, Kind: w.Kind, Others: all[1:]}
}

// frameworkName is "torch 2.5.1+cu121".
func frameworkName(fw facts.Framework) string {
	if fw.Version == "" {
		return fw.Name
	}
	return fw.Name + " " + fw.Version
}

// distCUDADirs are where Debian's libcudart12 and RHEL-like distributions
// put the CUDA runtime.
var distCUDADirs = []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64"}

var dpkgArch = map[string]string{"x86_64-linux-gnu": "amd64", "aarch64-linux-gnu": "arm64"}

// distributionCUDA fills s.res.CUDASources with the distribution's
// libcudart.so.X.Y.Z, naming the dpkg package that installed it.
func (s *scanner) distributionCUDA() {
	for _, dir := range distCUDADirs {
		best, bestName := s.newestRuntime(dir, "")
		if best == "" {
			continue
		}
		src := path.Join(dir, bestName)
		if arch, ok := dpkgArch[path.Base(dir)]; ok {
			pkg := "libcudart" + cudaMajor(best)
			if list := "/var/lib/dpkg/info/" + pkg + ":" + arch + ".list"; s.isFile(list) {
				src += " (dpkg package " + pkg + ")"
			}
		}
		s.res.CUDASources = append(s.res.CUDASources, facts.CUDASource{
			Kind: facts.CUDAFromDistribution, Version: majorMinor(best), Full: best, Source: src})
	}
}

// frameworkRuntimes sets each CUDA framework's CUDARuntime: the libcudart
// the loader model resolves, when its version says more than a major; else
// its environment's runtime wheel; else its conda package.
func (s *scanner) frameworkRuntimes() {
	for i := range s.res.Frameworks {
		fw := &s.res.Frameworks[i]
		if fw.Build != facts.BuildCUDA && fw.CUDAVersion == "" {
			continue
		}
		if v, src, ok := s.loadedRuntime(*fw); ok {
			fw.CUDARuntime, fw.CUDARuntimeSource = v, src
			continue
		}
		v := s.views[fw.Location]
		if v == nil {
			continue
		}
		if major := cudaMajor(fw.CUDAVersion); major != "" {
			if d, ok := v.dist(wheelDist("cuda_runtime", major)); ok {
				fw.CUDARuntime, fw.CUDARuntimeSource = d.Version, distPath("", d)
				continue
			}
		}
		if v.env.Kind == pyenv.KindConda {
			ver, src, ok := s.condaRuntime(v.env.Prefix)
			if !ok {
				ver, src, ok = s.prefixRuntime(v.env.Prefix, cudaMajor(fw.CUDAVersion))
			}
			if ok {
				fw.CUDARuntime, fw.CUDARuntimeSource = ver, src
			}
		}
	}
}

// newestRuntime is the newest libcudart.so.X.Y.Z in dir, of CUDA major
// when given, and its name.
func (s *scanner) newestRuntime(dir, major string) (version, name string) {
	for _, n := range s.list(dir) {
		if v, ok := sonameVersion(n, "libcudart.so"); ok && components(v) >= 3 && newer(v, version) && (major == "" || cudaMajor(v) == major) {
			version, name = v, n
		}
	}
	return version, name
}

// condaTargets are where conda-forge's CUDA 12 packages put the libraries
// they link from $PREFIX/lib (conda-forge/cuda-cudart-feedstock
// recipe/build.sh).
var condaTargets = []string{"lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib", "targets/aarch64-linux/lib"}

// prefixRuntime is the newest libcudart of CUDA major in a conda prefix.
func (s *scanner) prefixRuntime(prefix, major string) (string, string, bool) {
	for _, d := range condaTargets {
		dir := path.Join(prefix, d)
		if v, n := s.newestRuntime(dir, major); v != "" {
			return v, path.Join(dir, n), true
		}
	}
	return "", "", false
}

// loadedRuntime is the libcudart the loader model resolved for fw.
func (s *scanner) loadedRuntime(fw facts.Framework) (string, string, bool) {
	for _, l := range s.res.CUDALibraries {
		if l.FrameworkLocation != fw.Location || l.Library != "libcudart" || l.Loaded.Path == "" {
			continue
		}
		if components(l.Loaded.Version) < 2 {
			return "", "", false
		}
		src := l.Loaded.Path
		if l.Loaded.VersionSource != "" && l.Loaded.VersionSource != facts.VersionFromFileName {
			src += " (" + l.Loaded.VersionSource + ")"
		}
		return l.Loaded.Version, src, true
	}
	return "", "", false
}

// condaRuntimePackages ship or pin libcudart, best first: CUDA 12's, CUDA
// 11's, and the metapackage pinning the release.
var condaRuntimePackages = []string{"cuda-cudart", "cudatoolkit", "cuda-version"}

// condaRuntime reads the runtime package's record in prefix's conda-meta.
func (s *scanner) condaRuntime(prefix string) (string, string, bool) {
	return s.condaPackage(prefix, condaRuntimePackages)
}

// condaPackage reads the version of the first of packages (best first)
// prefix's conda-meta records, and the record.
func (s *scanner) condaPackage(prefix string, packages []string) (string, string, bool) {
	dir := path.Join(prefix, "conda-meta")
	names := s.list(dir)
	for _, want := range packages {
		for _, n := range names {
			name, ver, ok := pyenv.CondaMetaName(n)
			if !ok || name != want {
				continue
			}
			p := path.Join(dir, n)
			if rec, ok := pyenv.ParseCondaMeta(s.readMax(p, maxCondaMeta)); ok && rec.Name == want {
				ver = rec.Version
			}
			if components(ver) >= 2 {
				return ver, p, true
			}
		}
	}
	return "", "", false
}

// maxCondaMeta bounds a conda-meta record, a few MiB for big packages.
const maxCondaMeta = 16 << 20
