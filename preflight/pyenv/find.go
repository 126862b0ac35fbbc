// Package pyenv finds an image's Python environments as its interpreters
// find them, without running Python: which interpreters the container can
// run (PATH, VIRTUAL_ENV, CONDA_PREFIX, pyenv, the conda installers'
// default prefixes, the system's), and for each the ordered directories of
// its sys.path that site.py builds (site-packages, pyvenv.cfg's
// include-system-site-packages, the user site, .pth files, eggs and
// editable installs, PYTHONPATH).
//
// The rules and their upstream sources are in docs/python-environments.md.
// Everything is read under an fsroot.Root and bounded: files per
// directory, bytes per file, lines per .pth file, environments.
package pyenv

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// Kinds of environments.
const (
	KindVenv   = "venv"   // a prefix with pyvenv.cfg (python -m venv, virtualenv, uv)
	KindConda  = "conda"  // a prefix with conda-meta/
	KindPyenv  = "pyenv"  // $PYENV_ROOT/versions/<version>
	KindSystem = "system" // /usr, /usr/local and other plain prefixes
	KindUser   = "user"   // a home's ~/.local user site, which no interpreter owns
	KindNone   = "none"   // PYTHONPATH's directories when no interpreter was found
)

// Where each sys.path entry came from (Entry.From).
const (
	FromPythonPath = "PYTHONPATH"
	FromSite       = "site-packages"
	FromUserSite   = "user site"
	FromBaseSite   = "base site-packages" // a venv's base interpreter's, with include-system-site-packages = true
	FromPth        = ".pth"               // a path line of a .pth file (Entry.File names it)
	FromEditable   = "editable finder"    // a setuptools editable finder's MAPPING (Entry.File names it)
)

// Entry is one directory of an environment's sys.path.
type Entry struct {
	Dir string `json:"dir"`
	// From says how the directory got on sys.path (From* constants), and
	// File the .pth file or finder module that put it there.
	From string `json:"from"`
	File string `json:"file,omitempty"`
	// Only, when set, are the only top-level packages imported from Dir:
	// an editable finder maps each name to its own directory.
	Only []string `json:"only,omitempty"`
}

// Environment is one Python environment.
type Environment struct {
	// Prefix is sys.prefix, inside the root: "/opt/venv", "/usr".
	Prefix string `json:"prefix"`
	Kind   string `json:"kind"`
	// Interpreter is the bin/python3 it was found by; "" for a user site.
	Interpreter string `json:"interpreter,omitempty"`
	// Version is the interpreter's X.Y, "3.11"; "" when no lib/pythonX.Y
	// says it.
	Version string `json:"version,omitempty"`
	// Via says how it was found: "PATH /opt/venv/bin", "VIRTUAL_ENV",
	// "CONDA_PREFIX", "pyenv", "conda default prefix", "system prefix",
	// "home".
	Via string `json:"via"`
	// Base is a venv's base prefix (from pyvenv.cfg's home), and
	// IncludeSystemSite its include-system-site-packages.
	Base              string `json:"base,omitempty"`
	IncludeSystemSite bool   `json:"includeSystemSite,omitempty"`
	// Path is sys.path's directories after site.py ran, in import order,
	// the standard library left out.
	Path []Entry `json:"path"`
	// EggLinks are the .egg-link files (setup.py develop) in its site
	// directories and the directory each names; a project so installed is
	// importable through the easy-install.pth line develop also writes.
	EggLinks []Mapping `json:"eggLinks,omitempty"`
}

// Limits. A real image has a handful of environments, a few .pth files
// per site directory and a few lines in each.
const (
	MaxEnvironments = 64
	// MaxDirEntries is how many entries of one directory are looked at
	// for .pth and .egg-link files; a site-packages of 10 000
	// distributions has about 20 000.
	MaxDirEntries = 1 << 17
	// MaxPthFiles bounds the .pth (and .egg-link) files read per site
	// directory.
	MaxPthFiles = 256
	// MaxFileBytes bounds a .pth, pyvenv.cfg, egg-link or finder module
	// read (real ones are under a few KiB; a finder holds its template).
	MaxFileBytes = 1 << 20
	// MaxPathEntries bounds one environment's sys.path, and the PATH and
	// PYTHONPATH entries looked at (CUDA images set a handful; each entry
	// costs a listing). The caller warns about a longer PATH or
	// PYTHONPATH, which it has in hand.
	MaxPathEntries = 256
)

// DefaultPATH is the search path when the environment sets none: what
// Docker and containerd give a container (and what execvp would use).
const DefaultPATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// condaDefaults are the prefixes the conda installers install to by
// default: Miniconda and Anaconda ~/miniconda3 and ~/anaconda3 (root's
// home when run as root), Miniforge ~/miniforge3 (and the older
// ~/mambaforge), and /opt/conda where the continuumio and pytorch/pytorch
// images put it; /opt/<installer> is the other common -p choice.
var condaDefaults = []string{
	"/opt/conda",
	"/root/miniconda3", "/root/miniforge3", "/root/anaconda3", "/root/mambaforge",
	"/opt/miniconda3", "/opt/miniforge3", "/opt/anaconda3", "/opt/mambaforge",
	"/home/*/miniconda3", "/home/*/miniforge3", "/home/*/anaconda3",
}

// Result is what Find found.
type Result struct {
	// Environments in search order: VIRTUAL_ENV, CONDA_PREFIX, PATH's
	// interpreters, pyenv's versions, conda's default prefixes and their
	// envs, the system prefixes, then the homes' user sites.
	Environments []Environment
	// Inputs are the files read and directories listed, inside the root,
	// so that a manifest can tell when they change.
	Inputs []string
	// Warnings say what was left out and why.
	Warnings []string
}

type finder struct {
	root fsroot.Root
	env  map[string]string
	res  Result
	seen map[string]bool // prefixes, resolved
	read map[string]bool // inputs recorded
	// homePyenv caches the default pyenv roots, pyNames the python3.Y
	// names of each lib directory listed, subdirs the directories in each
	// directory listed (/home is globbed for conda, pyenv and user sites).
	homePyenv []string
	pyNames   map[string][]string
	subdirs   map[string][]string
}

// Find returns the Python environments under root; env is the container's
// environment (PATH, VIRTUAL_ENV, CONDA_PREFIX, PYENV_ROOT, PYENV_VERSION,
// PYTHONPATH, PYTHONUSERBASE, PYTHONNOUSERSITE).
func Find(root fsroot.Root, env map[string]string) Result {
	f := &finder{root: root, env: env, seen: map[string]bool{}, read: map[string]bool{}}
	for _, k := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := env[k]; strings.HasPrefix(p, "/") {
			f.addPrefix(path.Clean(p), "", k)
		}
	}
	for _, dir := range f.searchPath() {
		if f.pyenvShims(dir) {
			continue
		}
		for _, name := range []string{"python3", "python"} {
			if p := path.Join(dir, name); f.root.IsFile(p) {
				f.addInterpreter(p, "PATH "+dir)
				break
			}
		}
	}
	for _, p := range []string{"/usr/local", "/usr"} {
		f.addPrefix(p, "", "system prefix")
	}
	for _, pr := range f.pyenvRoots() {
		for _, v := range f.listDirs(path.Join(pr, "versions")) {
			f.addPrefix(v, "", "pyenv")
		}
	}
	for _, pat := range condaDefaults {
		for _, p := range f.glob(pat) {
			f.addPrefix(p, "", "conda default prefix")
			for _, e := range f.listDirs(path.Join(p, "envs")) {
				f.addPrefix(e, "", "conda env of "+p)
			}
		}
	}
	for _, home := range append([]string{"/root"}, f.glob("/home/*")...) {
		f.addUserSite(home)
	}
	if len(f.res.Environments) == 0 {
		// No interpreter, but PYTHONPATH names package directories: keep
		// them, so that what they hold is still reported.
		e := Environment{Kind: KindNone, Via: "PYTHONPATH, no interpreter found"}
		f.buildPath(&e)
		if len(e.Path) > 0 {
			f.add(e)
		}
	}
	return f.res
}

func (f *finder) warnf(format string, args ...any) {
	f.res.Warnings = append(f.res.Warnings, fmt.Sprintf("python environments: "+format, args...))
}

func (f *finder) input(p string) {
	if !f.read[p] {
		f.read[p] = true
		f.res.Inputs = append(f.res.Inputs, p)
	}
}

// searchPath is PATH's absolute entries, or DefaultPATH when unset.
func (f *finder) searchPath() []string {
	v, ok := f.env["PATH"]
	if !ok {
		v = DefaultPATH
	}
	return absList(v, MaxPathEntries)
}

// absList splits a colon list into its absolute, cleaned entries, at most max.
func absList(v string, max int) []string {
	var out []string
	for d := range strings.SplitSeq(v, ":") {
		if strings.HasPrefix(d, "/") && len(out) < max {
			out = append(out, path.Clean(d))
		}
	}
	return out
}

// pyenvRoots are $PYENV_ROOT, else ~/.pyenv (pyenv's default) of root
// and of every home.
func (f *finder) pyenvRoots() []string {
	if r := f.env["PYENV_ROOT"]; strings.HasPrefix(r, "/") {
		return []string{path.Clean(r)}
	}
	if f.homePyenv == nil {
		f.homePyenv = append([]string{"/root/.pyenv"}, f.glob("/home/*/.pyenv")...)
	}
	return f.homePyenv
}

// pyenvShims handles a PATH entry that is pyenv's shims directory: its
// python runs the version PYENV_VERSION names, else the one in
// $PYENV_ROOT/version (pyenv's "global"); "system" means the next python
// on PATH. It reports whether dir was the shims directory.
func (f *finder) pyenvShims(dir string) bool {
	if path.Base(dir) != "shims" {
		return false
	}
	pr := path.Dir(dir)
	if !slices.Contains(f.pyenvRoots(), pr) && !f.root.IsDir(path.Join(pr, "versions")) {
		return false
	}
	v, _, _ := strings.Cut(f.env["PYENV_VERSION"], ":")
	via := "pyenv shim, PYENV_VERSION"
	if v == "" {
		b := f.readFile(path.Join(pr, "version"))
		first, _, _ := strings.Cut(string(b), "\n")
		v, via = strings.TrimSpace(first), "pyenv shim, "+path.Join(pr, "version")
	}
	if v == "" || v == "system" || strings.Contains(v, "/") {
		return true
	}
	f.addPrefix(path.Join(pr, "versions", v), "", via)
	return true
}

// addInterpreter adds the environment of interpreter p (found via).
func (f *finder) addInterpreter(p, via string) {
	if e, ok := f.forInterpreter(p, via); ok {
		f.add(e)
	}
}

// ForInterpreter returns the environment interpreter p (a path inside
// root) runs in, with its sys.path: the one Find listed, or a new one
// when p is outside what Find searched (a command's own interpreter).
func ForInterpreter(root fsroot.Root, env map[string]string, p string) (Environment, bool) {
	f := &finder{root: root, env: env, seen: map[string]bool{}, read: map[string]bool{}}
	return f.forInterpreter(p, "command")
}

// forInterpreter finds the prefix of interpreter p as CPython's getpath
// and site.py do: a pyvenv.cfg beside the executable or one directory
// above makes that directory above the prefix (a venv); otherwise the
// executable's real path, links followed, is <prefix>/bin/<name>.
func (f *finder) forInterpreter(p, via string) (Environment, bool) {
	bin := path.Dir(p)
	if f.root.IsFile(path.Join(bin, "pyvenv.cfg")) || f.root.IsFile(path.Join(path.Dir(bin), "pyvenv.cfg")) {
		return f.environment(path.Dir(bin), p, via)
	}
	real := f.root.RealPath(p)
	return f.environment(path.Dir(path.Dir(real)), p, via)
}

// addPrefix adds the environment at prefix, if it is one. Everything an
// environment is told by lies under its prefix, so a prefix that is no
// directory (an image without /usr/local, a stale VIRTUAL_ENV) is not
// looked into further.
func (f *finder) addPrefix(prefix, interpreter, via string) {
	if !f.root.IsDir(prefix) {
		return
	}
	if interpreter == "" {
		for _, n := range []string{"bin/python3", "bin/python"} {
			if p := path.Join(prefix, n); f.root.IsFile(p) {
				interpreter = p
				break
			}
		}
	}
	if e, ok := f.environment(prefix, interpreter, via); ok {
		f.add(e)
	}
}

func (f *finder) add(e Environment) {
	key := f.root.RealPath(e.Prefix)
	if e.Kind == KindNone {
		key = ""
	}
	if f.seen[key] {
		return
	}
	if len(f.res.Environments) >= MaxEnvironments {
		f.warnf("more than %d environments; %s and any after it were left out (MaxEnvironments)", MaxEnvironments, e.Prefix)
		return
	}
	f.seen[key] = true
	f.res.Environments = append(f.res.Environments, e)
}

// environment builds the environment at prefix, ok false when prefix
// holds no Python (no pyvenv.cfg, conda-meta or lib/python3.X).
func (f *finder) environment(prefix, interpreter, via string) (Environment, bool) {
	e := Environment{Prefix: prefix, Interpreter: interpreter, Via: via}
	var cfg PyvenvCfg
	switch {
	case f.root.IsFile(path.Join(prefix, "pyvenv.cfg")):
		e.Kind = KindVenv
		cfg = ParsePyvenvCfg(f.readFile(path.Join(prefix, "pyvenv.cfg")))
		e.IncludeSystemSite = cfg.IncludeSystemSite
		if strings.HasPrefix(cfg.Home, "/") {
			// home is the base executable's directory, <base>/bin.
			e.Base = path.Dir(f.root.RealPath(path.Clean(cfg.Home)))
		}
	case f.root.IsDir(path.Join(prefix, "conda-meta")):
		e.Kind = KindConda
	case slices.ContainsFunc(f.pyenvRoots(), func(r string) bool { return path.Dir(prefix) == path.Join(r, "versions") }):
		e.Kind = KindPyenv
	default:
		e.Kind = KindSystem
	}
	e.Version = f.version(prefix, interpreter, cfg.Version)
	if e.Version == "" && e.Base != "" {
		e.Version = f.version(e.Base, "", "")
	}
	if e.Version == "" && !f.debian(prefix) {
		return Environment{}, false
	}
	f.buildPath(&e)
	if e.Interpreter == "" && len(e.Path) == 0 {
		// A lib/python3.Y without an interpreter or a site directory
		// (/usr/local/lib/python3.11 holding only Debian's dist-packages,
		// which /usr's python reads): no environment of its own.
		return Environment{}, false
	}
	return e, true
}

// version is X.Y of the interpreter at prefix: from its file name
// (python3.11), pyvenv.cfg's version, or the one lib/python3.X that holds
// site-packages (the highest when several do).
func (f *finder) version(prefix, interpreter, cfgVersion string) string {
	if n := path.Base(f.root.RealPath(interpreter)); interpreter != "" && IsPythonName(n) && strings.HasPrefix(n, "python3.") {
		return strings.TrimSuffix(strings.TrimPrefix(n, "python"), "d")
	}
	if v := majorMinor(cfgVersion); v != "" {
		return v
	}
	var dirs []string
	for _, sub := range []string{"site-packages", "dist-packages", "os.py"} {
		dirs = append(dirs, f.pythonDirs(path.Join(prefix, "lib"), sub)...)
	}
	if f.debian(prefix) {
		dirs = append(dirs, f.pythonDirs("/usr/local/lib", "dist-packages")...)
	}
	var best string
	for _, d := range dirs {
		if v := strings.TrimPrefix(path.Base(d), "python"); best == "" || lessVersion(best, v) {
			best = v
		}
	}
	return best
}

func majorMinor(v string) string {
	parts := strings.SplitN(strings.TrimSpace(v), ".", 3)
	if len(parts) < 2 || parts[0] != "3" || parts[1] == "" || strings.Trim(parts[1], "0123456789") != "" {
		return ""
	}
	return parts[0] + "." + parts[1]
}

// lessVersion compares "3.9" and "3.11" numerically.
func lessVersion(a, b string) bool {
	_, am, _ := strings.Cut(a, ".")
	_, bm, _ := strings.Cut(b, ".")
	if len(am) != len(bm) {
		return len(am) < len(bm)
	}
	return am < bm
}

// debian reports whether prefix is Debian's (or Ubuntu's) python3 at
// /usr, whose site directories are dist-packages: /usr/lib/python3/dist-packages
// or a /usr/local/lib/python3.Y/dist-packages is there.
func (f *finder) debian(prefix string) bool {
	if prefix != "/usr" {
		return false
	}
	if f.root.IsDir("/usr/lib/python3/dist-packages") {
		return true
	}
	return len(f.pythonDirs("/usr/local/lib", "dist-packages")) > 0
}

// pythonDirs are the python3.Y directories in dir that hold sub. Names
// are filtered before anything is looked up: /usr/lib holds thousands.
func (f *finder) pythonDirs(dir, sub string) []string {
	names, ok := f.pyNames[dir]
	if !ok {
		names = f.listNames(dir, func(n string) bool { return IsPythonName(n) && strings.HasPrefix(n, "python3.") })
		if f.pyNames == nil {
			f.pyNames = map[string][]string{}
		}
		f.pyNames[dir] = names
	}
	var out []string
	for _, n := range names {
		d := path.Join(dir, n)
		if p := path.Join(d, sub); (strings.HasSuffix(sub, ".py") && f.root.IsFile(p)) || f.root.IsDir(p) {
			out = append(out, d)
		}
	}
	return out
}

// siteDirs are getsitepackages' directories for prefix and version:
// <prefix>/lib/pythonX.Y/site-packages, after lib64's where lib64 is a
// directory of its own (a distribution whose sys.platlibdir is lib64). Debian's python3 at /usr instead
// reads /usr/local/lib/python3.Y/dist-packages, /usr/lib/python3/dist-packages
// and /usr/lib/python3.Y/dist-packages (Debian's patch to site.py).
func (f *finder) siteDirs(prefix, version string) []string {
	if f.debian(prefix) {
		var out []string
		if version != "" {
			out = append(out, "/usr/local/lib/python"+version+"/dist-packages")
		}
		out = append(out, "/usr/lib/python3/dist-packages")
		if version != "" {
			out = append(out, "/usr/lib/python"+version+"/dist-packages")
		}
		return out
	}
	if version == "" {
		return nil
	}
	lib := path.Join(prefix, "lib", "python"+version, "site-packages")
	if fi, err := f.root.Lstat(path.Join(prefix, "lib64")); err != nil || !fi.IsDir() {
		// No lib64, or venv's lib64 -> lib link: one directory, and on a
		// platlibdir "lib" interpreter (Debian's, python.org's) site.py
		// does not name lib64 at all.
		return []string{lib}
	}
	return []string{path.Join(prefix, "lib64", "python"+version, "site-packages"), lib}
}

// userBase is site.py's USER_BASE: PYTHONUSERBASE, else ~/.local. The
// home taken is root's, a container's default user: HOME is set by the
// runtime from the user's passwd entry, not by the image, so it is not
// read. Every other home's ~/.local is an environment of its own.
func (f *finder) userBase() string {
	if b := f.env["PYTHONUSERBASE"]; strings.HasPrefix(b, "/") {
		return path.Clean(b)
	}
	return "/root/.local"
}

// userSiteEnabled is site.py's ENABLE_USER_SITE outside a venv that
// excludes it: off when PYTHONNOUSERSITE is set non-empty (python -s).
func (f *finder) userSiteEnabled() bool { return f.env["PYTHONNOUSERSITE"] == "" }

// buildPath fills e.Path as site.py's main() orders it: PYTHONPATH first
// (the interpreter puts it there before site runs), then for a venv its
// own site-packages; then the user site (unless a venv excludes the
// system site, which disables it too); then the prefix's, or a venv's
// base prefix's, site-packages. Each site directory's .pth files are
// processed as it is added.
func (f *finder) buildPath(e *Environment) {
	b := &pathBuilder{f: f, env: e, known: map[string]bool{}}
	for _, d := range absList(f.env["PYTHONPATH"], MaxPathEntries) {
		if f.root.IsDir(d) {
			b.append(Entry{Dir: d, From: FromPythonPath})
		}
	}
	if e.Kind == KindVenv {
		for _, d := range f.siteDirs(e.Prefix, e.Version) {
			b.siteDir(d, FromSite)
		}
		if !e.IncludeSystemSite {
			b.finish()
			return
		}
	}
	if f.userSiteEnabled() && e.Version != "" {
		b.siteDir(path.Join(f.userBase(), "lib", "python"+e.Version, "site-packages"), FromUserSite)
	}
	if e.Kind == KindVenv {
		if e.Base != "" {
			for _, d := range f.siteDirs(e.Base, e.Version) {
				b.siteDir(d, FromBaseSite)
			}
		}
	} else {
		for _, d := range f.siteDirs(e.Prefix, e.Version) {
			b.siteDir(d, FromSite)
		}
	}
	b.finish()
}

// addUserSite adds home's ~/.local user sites as an environment of their
// own: no interpreter owns them, but every interpreter run by that user
// reads them (site.py's addusersitepackages).
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
	// front are entries a setuptools easy-install.pth moves to the front
	// of sys.path (its sys.__egginsert lines).
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

// finish puts the easy-install entries first and the editable finders'
// last: setuptools' finder install() appends itself to sys.meta_path,
// after the PathFinder that walks sys.path, so a package of the same name
// on sys.path wins over the editable one.
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

// siteDir is site.py's addsitedir: the directory, if it exists, then its
// .pth files in sorted order.
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

// pth applies one .pth file.
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
				// setuptools' easy_install ends easy-install.pth with a
				// line that moves the entries it added to the front of
				// sys.path (sys.__egginsert).
				b.known[l.Dir] = true
				b.front = append(b.front, e)
				continue
			}
			b.append(e)
		}
	}
}

// finder applies a setuptools editable finder: each top-level package of
// its MAPPING is imported from its own directory. The finder is a meta
// path finder consulted after sys.path (finish); it is modelled as an
// entry holding only that package.
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
		// A package directory named as its package is importable from
		// its parent; a module (name.py) likewise.
		base := strings.TrimSuffix(path.Base(m.Dir), ".py")
		if base != m.Name {
			b.f.warnf("%s maps %s to %s, whose name differs; it is not modelled", file, m.Name, m.Dir)
			continue
		}
		b.append(Entry{Dir: path.Dir(m.Dir), From: FromEditable, File: file, Only: []string{m.Name}})
	}
}

// siteFiles lists dir's .pth and .egg-link files, sorted (site.py sorts
// the .pth names), reading at most MaxDirEntries entries and keeping at
// most MaxPthFiles of each.
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

// listNames returns the sorted names in dir that keep accepts, looking at
// no more than MaxDirEntries entries.
func (f *finder) listNames(dir string, keep func(string) bool) []string {
	names, err := f.root.ReadDirNamesFunc(dir, MaxDirEntries, keep)
	switch {
	case errors.Is(err, fsroot.ErrTooManyEntries):
		f.warnf("%s: more than %d entries; the rest were not looked at (MaxDirEntries)", dir, MaxDirEntries)
	case err != nil:
		return nil
	}
	f.input(dir)
	return names
}

// listDirs returns the directories in dir (links to directories
// included), sorted.
func (f *finder) listDirs(dir string) []string {
	if out, ok := f.subdirs[dir]; ok {
		return out
	}
	var out []string
	for _, n := range f.listNames(dir, func(string) bool { return true }) {
		if p := path.Join(dir, n); f.root.IsDir(p) {
			out = append(out, p)
		}
	}
	if f.subdirs == nil {
		f.subdirs = map[string][]string{}
	}
	f.subdirs[dir] = out
	return out
}

// glob expands a pattern whose only wildcard is a whole component
// ("/home/*/miniconda3").
func (f *finder) glob(pat string) []string {
	before, after, ok := strings.Cut(pat, "/*")
	if !ok {
		if f.root.IsDir(pat) {
			return []string{pat}
		}
		return nil
	}
	var out []string
	for _, d := range f.listDirs(before) {
		if p := d + after; f.root.IsDir(p) {
			out = append(out, p)
		}
	}
	return out
}

func (f *finder) readFile(p string) []byte {
	f.input(p)
	b, err := f.root.ReadFileMax(p, MaxFileBytes)
	if err != nil {
		if !fsroot.Missing(err) {
			f.warnf("reading %s: %v", p, err)
		}
		return nil
	}
	return b
}
