// Package pyenv finds an image's Python environments as its interpreters
// find them, without running Python: the interpreters the container can
// run (find.go), and for each the sys.path site.py builds (syspath.go),
// from the files pyenv reads (parse.go, literal.go). The rules and their
// sources are in docs/python-environments.md; every read is bounded.
package pyenv

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

// Entry is one directory of an environment's sys.path: how it got there
// (a From* constant) and the .pth file or finder module that put it there.
// Only, when set, are the only top-level packages imported from it (an
// editable finder's).
type Entry struct {
	Dir  string   `json:"dir"`
	From string   `json:"from"`
	File string   `json:"file,omitempty"`
	Only []string `json:"only,omitempty"`
}

// Environment is one Python environment: its sys.prefix, the interpreter it
// was found by ("" for a user site) and how ("PATH /opt/venv/bin",
// "VIRTUAL_ENV", ...), its X.Y and whether that build is free-threaded, what
// activates it when PATH does not (an entrypoint reading ENV_NAME, pixi's
// shell-hook), a venv's base prefix and include-system-site-packages,
// sys.path after site.py (the standard library left out), and the .egg-link
// files of its site directories.
type Environment struct {
	Prefix            string    `json:"prefix"`
	Kind              string    `json:"kind"`
	Interpreter       string    `json:"interpreter,omitempty"`
	Version           string    `json:"version,omitempty"`
	FreeThreaded      bool      `json:"freeThreaded,omitempty"`
	Activation        string    `json:"activation,omitempty"`
	Via               string    `json:"via"`
	Base              string    `json:"base,omitempty"`
	IncludeSystemSite bool      `json:"includeSystemSite,omitempty"`
	Path              []Entry   `json:"path"`
	EggLinks          []Mapping `json:"eggLinks,omitempty"`
}

// LibName is the directory under lib/ its site-packages sits in,
// "python3.13t" (Lib/site.py getsitepackages: f"python{X}.{Y}{abi_thread}").
func (e Environment) LibName() string { return libName(e.Version, e.FreeThreaded) }

func libName(version string, freeThreaded bool) string {
	if freeThreaded {
		return "python" + version + "t"
	}
	return "python" + version
}

// Bounds, far above a real image's handful of environments and .pth files.
const (
	MaxEnvironments = 64
	MaxDirEntries   = 1 << 17 // entries of one directory looked at for .pth files
	MaxPthFiles     = 256     // .pth and .egg-link files read per site directory
	MaxFileBytes    = 1 << 20 // a .pth, pyvenv.cfg, egg-link or finder module
	// MaxPathEntries bounds a sys.path, and the PATH and PYTHONPATH entries
	// looked at (the caller warns about longer ones).
	MaxPathEntries = 256
)

// DefaultPATH is what Docker and containerd give a container without PATH.
const DefaultPATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Result is what Find found: the environments in search order, the files
// read and directories listed (for a manifest), and what was left out.
type Result struct {
	Environments []Environment
	Inputs       []string
	Warnings     []string
}
