package image

import (
	"slices"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// sitePackageDirs returns the sys.path directories of the image's Python
// environments for command, in search order, each once.
func sitePackageDirs(root fsroot.Root, env map[string]string, command []string) []string {
	return sysPathDirs(root, pyenv.Find(root, envSubset(env), command...).Environments)
}

// sysPathDirs are the distinct directories of envs' sys.paths, in order.
func sysPathDirs(root fsroot.Root, envs []pyenv.Environment) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range envs {
		for _, en := range e.Path {
			real := root.RealPath(en.Dir)
			if seen[real] {
				continue
			}
			seen[real] = true
			out = append(out, en.Dir)
		}
	}
	return out
}

// environments finds the Python environments, stamping what pyenv read.
func (s *scanner) environments() {
	for _, k := range []string{"PATH", "PYTHONPATH"} {
		if _, w := searchPath(s.env, k); w != "" {
			s.warnings = append(s.warnings, w)
		}
	}
	found := pyenv.Find(s.root, s.env, s.command...)
	for _, p := range found.Inputs {
		// A directory is stamped by its names (injected files aside).
		if s.root.IsDir(p) {
			s.list(p)
		} else {
			s.stamp(p)
		}
	}
	s.warnings = append(s.warnings, found.Warnings...)
	s.res.Environments = found.Environments
	s.res.SitePackages = sysPathDirs(s.root, found.Environments)
}

// sitePackages lists each sys.path directory once for every pass.
func (s *scanner) sitePackages() {
	for _, sp := range s.res.SitePackages {
		s.list(sp)
	}
}

// view is one environment as its interpreter's import system sees it.
type view struct {
	s   *scanner
	env pyenv.Environment
}

func (s *scanner) view(e pyenv.Environment) *view { return &view{s: s, env: e} }

// dist returns distribution name as importlib.metadata finds it: from the
// first sys.path entry holding its metadata, an editable finder's aside.
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
// from.
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
