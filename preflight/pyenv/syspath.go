package pyenv

import (
	"path"
	"slices"
	"strings"
)

// siteDirs are getsitepackages' directories for prefix and lib (the
// environment's LibName): lib/pythonX.Y[t]/site-packages, after lib64's
// where lib64 is a directory of its own; Debian's /usr has its
// dist-packages instead (its site.py patch).
func (f *finder) siteDirs(prefix, lib string) []string {
	if f.debian(prefix) {
		var out []string
		if lib != "python" {
			out = append(out, "/usr/local/lib/"+lib+"/dist-packages")
		}
		out = append(out, "/usr/lib/python3/dist-packages")
		if lib != "python" {
			out = append(out, "/usr/lib/"+lib+"/dist-packages")
		}
		return out
	}
	if lib == "python" {
		return nil
	}
	site := path.Join(prefix, "lib", lib, "site-packages")
	if fi, err := f.root.Lstat(path.Join(prefix, "lib64")); err != nil || !fi.IsDir() {
		return []string{site}
	}
	return []string{path.Join(prefix, "lib64", lib, "site-packages"), site}
}

// userBase is site.py's USER_BASE: PYTHONUSERBASE, else root's ~/.local
// (HOME comes from the runtime, not the image); other homes' are
// environments of their own.
func (f *finder) userBase() string {
	if b := f.env["PYTHONUSERBASE"]; strings.HasPrefix(b, "/") {
		return path.Clean(b)
	}
	return "/root/.local"
}

// userSiteEnabled is site.py's ENABLE_USER_SITE outside a venv.
func (f *finder) userSiteEnabled() bool { return f.env["PYTHONNOUSERSITE"] == "" }

// buildPath fills e.Path in site.py's order: PYTHONPATH, a venv's own
// site-packages, the user site (unless a venv excludes the system site),
// then the prefix's or the venv base's site-packages, each directory's .pth
// files as it is added.
func (f *finder) buildPath(e *Environment) {
	b := &pathBuilder{f: f, env: e, known: map[string]bool{}}
	for _, d := range absList(f.env["PYTHONPATH"], MaxPathEntries) {
		if f.root.IsDir(d) {
			b.append(Entry{Dir: d, From: FromPythonPath})
		}
	}
	if e.Kind == KindVenv {
		for _, d := range f.siteDirs(e.Prefix, e.LibName()) {
			b.siteDir(d, FromSite)
		}
		if !e.IncludeSystemSite {
			b.finish()
			return
		}
	}
	if f.userSiteEnabled() && e.Version != "" {
		b.siteDir(path.Join(f.userBase(), "lib", e.LibName(), "site-packages"), FromUserSite)
	}
	if e.Kind == KindVenv {
		if e.Base != "" {
			for _, d := range f.siteDirs(e.Base, e.LibName()) {
				b.siteDir(d, FromBaseSite)
			}
		}
	} else {
		for _, d := range f.siteDirs(e.Prefix, e.LibName()) {
			b.siteDir(d, FromSite)
		}
	}
	b.finish()
}

// addUserSite adds home's ~/.local user sites as an environment: no
// interpreter owns them, every one the user runs reads them.
func (f *finder) addUserSite(home string) {
	base := path.Join(home, ".local")
	var dirs []string
	for _, d := range f.pythonDirs(path.Join(base, "lib"), "site-packages") {
		dirs = append(dirs, path.Join(d, "site-packages"))
	}
	if len(dirs) == 0 {
		return
	}
	e := Environment{Prefix: base, Kind: KindUser, Via: "home " + home}
	b := &pathBuilder{f: f, env: &e, known: map[string]bool{}}
	for _, d := range dirs {
		b.siteDir(d, FromUserSite)
	}
	b.finish()
	f.add(e)
}

// pathBuilder accumulates one environment's sys.path.
type pathBuilder struct {
	f     *finder
	env   *Environment
	known map[string]bool
	// front are what easy-install.pth's sys.__egginsert moves first.
	front []Entry
	full  bool
}

func (b *pathBuilder) append(e Entry) {
	if b.known[e.Dir] && e.Only == nil {
		return
	}
	if len(b.env.Path)+len(b.front) >= MaxPathEntries {
		if !b.full {
			b.full = true
			b.f.warnf("%s: sys.path has more than %d entries; the rest were left out (MaxPathEntries)", b.env.Prefix, MaxPathEntries)
		}
		return
	}
	if e.Only == nil {
		b.known[e.Dir] = true
	}
	b.env.Path = append(b.env.Path, e)
}

// finish puts the easy-install entries first and the editable finders
// last: a finder appends itself to sys.meta_path after the PathFinder.
func (b *pathBuilder) finish() {
	var plain, finders []Entry
	for _, e := range b.env.Path {
		if e.Only != nil {
			finders = append(finders, e)
		} else {
			plain = append(plain, e)
		}
	}
	b.env.Path = append(append(b.front, plain...), finders...)
	b.front = nil
}

// siteDir is site.py's addsitedir: the directory, then its .pth files.
func (b *pathBuilder) siteDir(dir, from string) {
	if !b.f.root.IsDir(dir) {
		return
	}
	b.append(Entry{Dir: dir, From: from})
	pths, links := b.f.siteFiles(dir)
	for _, name := range pths {
		b.pth(dir, name)
	}
	for _, name := range links {
		p := path.Join(dir, name)
		if target := ParseEggLink(b.f.readFile(p)); target != "" {
			b.env.EggLinks = append(b.env.EggLinks, Mapping{Name: p, Dir: target})
		}
	}
}

func (b *pathBuilder) pth(sitedir, name string) {
	file := path.Join(sitedir, name)
	lines, truncated := ParsePth(b.f.readFile(file), sitedir)
	if truncated {
		b.f.warnf("%s has more than %d lines; the rest were not read (MaxPthLines)", file, MaxPthLines)
	}
	egginsert := slices.ContainsFunc(lines, func(l PthLine) bool { return strings.Contains(l.Import, "__egginsert") })
	for _, l := range lines {
		switch {
		case l.Finder != "":
			b.finder(sitedir, l.Finder)
		case l.Dir != "" && !b.known[l.Dir] && b.f.root.Exists(l.Dir):
			e := Entry{Dir: l.Dir, From: FromPth, File: file}
			if egginsert {
				b.known[l.Dir] = true
				b.front = append(b.front, e)
				continue
			}
			b.append(e)
		}
	}
}

// finder applies a setuptools editable finder: each package of its
// MAPPING, an entry holding only that package.
func (b *pathBuilder) finder(sitedir, module string) {
	file := path.Join(sitedir, module+".py")
	maps, ok := ParseFinderMapping(b.f.readFile(file))
	if !ok {
		b.f.warnf("%s: no MAPPING could be read; the editable install it serves is not modelled", file)
		return
	}
	for _, m := range maps {
		if !b.f.root.Exists(m.Dir) {
			continue
		}
		base := strings.TrimSuffix(path.Base(m.Dir), ".py")
		if base != m.Name {
			b.f.warnf("%s maps %s to %s, whose name differs; it is not modelled", file, m.Name, m.Dir)
			continue
		}
		b.append(Entry{Dir: path.Dir(m.Dir), From: FromEditable, File: file, Only: []string{m.Name}})
	}
}

// siteFiles lists dir's .pth and .egg-link files, sorted as site.py does,
// at most MaxPthFiles of each.
func (f *finder) siteFiles(dir string) (pths, links []string) {
	names := f.listNames(dir, func(n string) bool {
		return strings.HasSuffix(n, ".pth") || strings.HasSuffix(n, ".egg-link")
	})
	for _, n := range names {
		if strings.HasSuffix(n, ".pth") {
			if len(pths) < MaxPthFiles {
				pths = append(pths, n)
			}
		} else if len(links) < MaxPthFiles {
			links = append(links, n)
		}
	}
	if len(pths) == MaxPthFiles || len(links) == MaxPthFiles {
		f.warnf("%s: more than %d .pth or .egg-link files; the rest were not read (MaxPthFiles)", dir, MaxPthFiles)
	}
	return pths, links
}
