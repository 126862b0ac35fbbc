package image

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// frameworks fills s.res.Frameworks: in each environment, in search
// order, each framework as its interpreter imports it; one two
// environments reach is listed for the first whose Python loads it.
func (s *scanner) frameworks() {
	seen := map[string]int{}
	var envOf []pyenv.Environment
	for _, e := range s.res.Environments {
		v := s.view(e)
		for _, detect := range []func(*view) (facts.Framework, bool){s.paddle, s.torch, s.tensorflow, s.jax} {
			f, ok := detect(v)
			if !ok {
				continue
			}
			key := s.root.RealPath(f.Location)
			if i, dup := seen[key]; dup {
				if !abiLoads(f.ABI, envOf[i]) && abiLoads(f.ABI, e) {
					s.res.Frameworks[i] = s.foundIn(s.res.Frameworks[i], v)
					envOf[i] = e
				}
				continue
			}
			seen[key] = len(s.res.Frameworks)
			envOf = append(envOf, e)
			s.res.Frameworks = append(s.res.Frameworks, s.foundIn(f, v))
		}
	}
}

// foundIn records fw as found in view v's environment.
func (s *scanner) foundIn(f facts.Framework, v *view) facts.Framework {
	f.Environment, f.EnvironmentKind = v.env.Prefix, v.env.Kind
	f.PathEntry = path.Dir(f.Location)
	f.PathFrom = v.from(f.PathEntry)
	s.views[f.Location] = v
	return f
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

// versionString returns the non-empty string assigned to name, or an error
// naming the file as what.
func versionString(f map[string]pyenv.Literal, name, what string) (string, error) {
	if s, ok := f[name].Str(); ok && s != "" {
		return s, nil
	}
	return "", fmt.Errorf("%s: no %s string", what, name)
}

// archList reads a list of GPU targets, [80, 86] or ['sm_70'], as arch
// names, skipping what is not one.
func archList(a pyenv.Literal) []string {
	var out []string
	for _, it := range a.Items() {
		s, ok := it.Scalar()
		if !ok {
			continue
		}
		if arch, err := gpuarch.Parse(s); err == nil {
			out = append(out, arch.String())
		}
	}
	return out
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
