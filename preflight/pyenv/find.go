package pyenv

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// condaDefaults are the conda installers' default prefixes, root's and
// every home's, and /opt/conda of the continuumio and pytorch images.
var condaDefaults = []string{
	"/opt/conda",
	"/root/miniconda3", "/root/miniforge3", "/root/anaconda3", "/root/mambaforge",
	"/opt/miniconda3", "/opt/miniforge3", "/opt/anaconda3", "/opt/mambaforge",
	"/home/*/miniconda3", "/home/*/miniforge3", "/home/*/anaconda3",
}

type finder struct {
	root fsroot.Root
	env  map[string]string
	res  Result
	seen map[string]bool // prefixes, resolved
	full bool            // MaxEnvironments reached: nothing more is built
	// listedBins are the bin directories whose interpreters were added.
	listedBins map[string]bool
	read       map[string]bool // inputs recorded
	// Caches: the default pyenv roots, each lib directory's python3.Y
	// names, each directory's subdirectories.
	homePyenv []string
	pyNames   map[string][]string
	subdirs   map[string][]string
	heads     map[string][]byte // the first maxScript bytes of each file read
}

func newFinder(root fsroot.Root, env map[string]string) *finder {
	return &finder{root: root, env: env, seen: map[string]bool{}, read: map[string]bool{}}
}

// Find returns the Python environments under root for the container's
// environment env and command, in docs/python-environments.md's order.
func Find(root fsroot.Root, env map[string]string, command ...string) Result {
	f := newFinder(root, env)
	for _, k := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := env[k]; strings.HasPrefix(p, "/") {
			f.addPrefix(path.Clean(p), "", k)
		}
	}
	script := f.scriptActivation(command)
	f.activated(script)
	for _, dir := range f.searchPath() {
		if f.pyenvShims(dir) {
			continue
		}
		for _, p := range f.interpreters(dir) {
			f.addInterpreter(p, "PATH "+dir)
		}
	}
	for _, p := range []string{"/usr/local", "/usr"} {
		f.addPrefix(p, "", "system prefix")
		for _, i := range f.interpreters(path.Join(p, "bin")) {
			f.addInterpreter(i, "system prefix "+p)
		}
	}
	for _, pr := range f.pyenvRoots() {
		for _, v := range f.listDirs(path.Join(pr, "versions")) {
			f.addPrefix(v, "", "pyenv")
		}
	}
	for _, p := range f.condaRoots() {
		f.addPrefix(p, "", "conda root prefix")
		for _, e := range f.listDirs(path.Join(p, "envs")) {
			f.addPrefix(e, "", "conda env of "+p)
		}
	}
	if len(command) > 0 {
		if ch := f.choose(f.res.Environments, command, script); ch.Interpreter != "" {
			f.addInterpreter(ch.Interpreter, "the command's Python")
		}
	}
	for _, home := range append([]string{"/root"}, f.glob("/home/*")...) {
		f.addUserSite(home)
	}
	if len(f.res.Environments) == 0 {
		// No interpreter: PYTHONPATH's directories are still reported.
		e := Environment{Kind: KindNone, Via: "PYTHONPATH, no interpreter found"}
		f.buildPath(&e)
		if len(e.Path) > 0 {
			f.add(e)
		}
	}
	return f.res
}

// interpreters are the CPython executables in dir: python3, python, then
// each python3.Y and python3.Yt in name order; a directory reached again
// (/bin on a merged /usr) is listed once.
func (f *finder) interpreters(dir string) []string {
	real := f.root.RealPath(dir)
	if f.listedBins[real] {
		return nil
	}
	if f.listedBins == nil {
		f.listedBins = map[string]bool{}
	}
	f.listedBins[real] = true
	var out []string
	for _, n := range []string{"python3", "python"} {
		if p := path.Join(dir, n); f.root.IsFile(p) {
			out = append(out, p)
		}
	}
	names, err := f.root.ReadDirNamesPrefix(dir, MaxDirEntries, "python3.")
	if errors.Is(err, fsroot.ErrTooManyEntries) {
		f.warnf("%s: more than %d entries; the rest were not looked at (MaxDirEntries)", dir, MaxDirEntries)
	} else if err == nil {
		f.input(dir)
	}
	for _, n := range names {
		if _, _, ok := PythonVersion(n); !ok {
			continue
		}
		if p := path.Join(dir, n); f.root.IsFile(p) {
			out = append(out, p)
		}
	}
	return out
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

// pyenvRoots are $PYENV_ROOT, else every home's ~/.pyenv.
func (f *finder) pyenvRoots() []string {
	if r := f.env["PYENV_ROOT"]; strings.HasPrefix(r, "/") {
		return []string{path.Clean(r)}
	}
	if f.homePyenv == nil {
		f.homePyenv = append([]string{"/root/.pyenv"}, f.glob("/home/*/.pyenv")...)
	}
	return f.homePyenv
}

// pyenvShims adds the version a pyenv shims directory on PATH runs
// (PYENV_VERSION, else $PYENV_ROOT/version; "system" is the next python on
// PATH), reporting whether dir was one.
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

func (f *finder) addInterpreter(p, via string) {
	if f.full {
		return
	}
	if e, ok := f.forInterpreter(p, via); ok {
		f.add(e)
	}
}

// ForInterpreter returns the environment interpreter p runs in, with its
// sys.path, whether or not Find would list it.
func ForInterpreter(root fsroot.Root, env map[string]string, p string) (Environment, bool) {
	f := newFinder(root, env)
	return f.forInterpreter(p, "command")
}

// forInterpreter finds p's prefix as CPython's getpath does: the directory
// above a pyvenv.cfg beside p or above it (a venv), else <prefix>/bin/<name>
// of p's real path.
func (f *finder) forInterpreter(p, via string) (Environment, bool) {
	bin := path.Dir(p)
	real := f.root.RealPath(p)
	prefix := path.Dir(path.Dir(real))
	if f.root.IsFile(path.Join(bin, "pyvenv.cfg")) || f.root.IsFile(path.Join(path.Dir(bin), "pyvenv.cfg")) {
		prefix = path.Dir(bin)
	}
	// An interpreter of an environment already kept (python3 and python3.12
	// of one prefix) is not built again.
	if v, ft, ok := PythonVersion(path.Base(real)); ok && f.seen[f.root.RealPath(prefix)+"\x00"+libName(v, ft)] {
		return Environment{}, false
	}
	return f.environment(prefix, p, via)
}

// addPrefix adds the environment at prefix, if it is one.
func (f *finder) addPrefix(prefix, interpreter, via string) {
	if f.full || !f.root.IsDir(prefix) {
		return
	}
	if interpreter == "" {
		interpreter = f.prefixInterpreter(prefix)
	}
	if e, ok := f.environment(prefix, interpreter, via); ok {
		f.add(e)
	}
}

// prefixInterpreter is prefix's bin/python3, else bin/python; "" for none.
func (f *finder) prefixInterpreter(prefix string) string {
	for _, n := range []string{"bin/python3", "bin/python"} {
		if p := path.Join(prefix, n); f.root.IsFile(p) {
			return p
		}
	}
	return ""
}

// add keeps e unless an environment of the same prefix and Python was kept.
func (f *finder) add(e Environment) {
	key := f.root.RealPath(e.Prefix) + "\x00" + e.LibName()
	if e.Kind == KindNone {
		key = ""
	}
	if f.seen[key] {
		return
	}
	if len(f.res.Environments) >= MaxEnvironments {
		if !f.full {
			f.full = true
			f.warnf("more than %d environments; %s and any after it were left out (MaxEnvironments)", MaxEnvironments, e.Prefix)
		}
		return
	}
	f.seen[key] = true
	f.res.Environments = append(f.res.Environments, e)
}

// environment builds the environment at prefix; ok is false without a Python.
func (f *finder) environment(prefix, interpreter, via string) (Environment, bool) {
	e := Environment{Prefix: prefix, Interpreter: interpreter, Via: via}
	var cfg PyvenvCfg
	switch {
	case f.root.IsFile(path.Join(prefix, "pyvenv.cfg")):
		e.Kind = KindVenv
		cfg = ParsePyvenvCfg(f.readFile(path.Join(prefix, "pyvenv.cfg")))
		e.IncludeSystemSite = cfg.IncludeSystemSite
		if strings.HasPrefix(cfg.Home, "/") {
			e.Base = path.Dir(f.root.RealPath(path.Clean(cfg.Home)))
		}
	case f.root.IsDir(path.Join(prefix, "conda-meta")):
		e.Kind = KindConda
	case slices.ContainsFunc(f.pyenvRoots(), func(r string) bool { return path.Dir(prefix) == path.Join(r, "versions") }):
		e.Kind = KindPyenv
	default:
		e.Kind = KindSystem
	}
	e.Version, e.FreeThreaded = f.version(prefix, interpreter, cfg.Version)
	if e.Version == "" && e.Base != "" {
		e.Version, e.FreeThreaded = f.version(e.Base, "", "")
	}
	if e.Version == "" && !f.debian(prefix) {
		return Environment{}, false
	}
	f.buildPath(&e)
	if e.Interpreter == "" && len(e.Path) == 0 {
		// A lib/python3.Y with neither (Debian's /usr/local): none of its own.
		return Environment{}, false
	}
	return e, true
}

// version is X.Y of the interpreter at prefix and whether it is
// free-threaded: from its file name, else pyvenv.cfg (and a venv's
// lib/python3.Yt), else the highest lib/python3.Y holding site-packages.
func (f *finder) version(prefix, interpreter, cfgVersion string) (string, bool) {
	if interpreter != "" {
		if v, ft, ok := PythonVersion(path.Base(f.root.RealPath(interpreter))); ok {
			return v, ft
		}
		if v, ft, ok := PythonVersion(path.Base(interpreter)); ok {
			return v, ft
		}
	}
	var dirs []string
	for _, sub := range []string{"site-packages", "dist-packages", "os.py"} {
		dirs = append(dirs, f.pythonDirs(path.Join(prefix, "lib"), sub)...)
	}
	if v := majorMinor(cfgVersion); v != "" {
		ft := slices.Contains(dirs, path.Join(prefix, "lib", libName(v, true))) &&
			!slices.Contains(dirs, path.Join(prefix, "lib", libName(v, false)))
		return v, ft
	}
	if f.debian(prefix) {
		dirs = append(dirs, f.pythonDirs("/usr/local/lib", "dist-packages")...)
	}
	best, bestFT := "", false
	for _, d := range dirs {
		v, ft, _ := PythonVersion(path.Base(d))
		if best == "" || lessVersion(best, v) || (v == best && bestFT && !ft) {
			best, bestFT = v, ft
		}
	}
	return best, bestFT
}

func majorMinor(v string) string {
	parts := strings.SplitN(strings.TrimSpace(v), ".", 3)
	if len(parts) < 2 || parts[0] != "3" || parts[1] == "" || strings.Trim(parts[1], "0123456789") != "" {
		return ""
	}
	return parts[0] + "." + parts[1]
}

func lessVersion(a, b string) bool {
	_, am, _ := strings.Cut(a, ".")
	_, bm, _ := strings.Cut(b, ".")
	if len(am) != len(bm) {
		return len(am) < len(bm)
	}
	return am < bm
}

// debian reports whether prefix is Debian's or Ubuntu's /usr (dist-packages).
func (f *finder) debian(prefix string) bool {
	if prefix != "/usr" {
		return false
	}
	if f.root.IsDir("/usr/lib/python3/dist-packages") {
		return true
	}
	return len(f.pythonDirs("/usr/local/lib", "dist-packages")) > 0
}

// pythonDirs are the python3.Y directories in dir that hold sub.
func (f *finder) pythonDirs(dir, sub string) []string {
	names, ok := f.pyNames[dir]
	if !ok {
		names = f.listNames(dir, func(n string) bool { _, _, ok := PythonVersion(n); return ok })
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

// listDirs returns the directories in dir, links to them included.
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

// glob expands a pattern whose only wildcard is a whole component.
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

// head is the first maxScript bytes of the file p names, read once: the
// command's file is both a script to read for activation and a "#!" line.
func (f *finder) head(p string) []byte {
	if b, ok := f.heads[p]; ok {
		return b
	}
	b, _ := f.root.ReadHead(p, maxScript)
	if f.heads == nil {
		f.heads = map[string][]byte{}
	}
	f.heads[p] = b
	return b
}
