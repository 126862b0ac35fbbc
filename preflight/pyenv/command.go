package pyenv

import (
	"path"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// maxShebang is the kernel's BINPRM_BUF_SIZE.
const maxShebang = 256

// Interpreter returns the Python the command argv will run, and how that
// was decided: argv[0] when it is a Python, or the one its "#!" line names
// (a console script), else python3, then python, on PATH.
func Interpreter(root fsroot.Root, env map[string]string, argv []string) (p, how string, ok bool) {
	f := &finder{root: root, env: env, seen: map[string]bool{}, read: map[string]bool{}}
	if len(argv) > 0 && argv[0] != "" {
		if exe, found := f.lookPath(argv[0]); found {
			if IsPythonName(path.Base(exe)) {
				return exe, "the command, " + argv[0], true
			}
			head, _ := f.root.ReadHead(exe, maxShebang)
			if sb, isScript := ParseShebang(head); isScript {
				interp := sb.Interpreter
				if sb.ViaEnv {
					interp, found = f.lookPath(interp)
				} else {
					found = f.root.IsFile(interp)
				}
				if found && IsPythonName(path.Base(interp)) {
					return interp, "the #! line of " + exe, true
				}
			}
		}
	}
	for _, n := range []string{"python3", "python"} {
		if exe, found := f.lookPath(n); found {
			return exe, n + " on PATH", true
		}
	}
	return "", "", false
}

// lookPath finds name as execvp does; a relative path with a "/" is not
// found, the working directory being unknown.
func (f *finder) lookPath(name string) (string, bool) {
	if strings.Contains(name, "/") {
		p := path.Clean(name)
		return p, strings.HasPrefix(p, "/") && f.root.IsFile(p)
	}
	for _, dir := range f.searchPath() {
		if p := path.Join(dir, name); f.root.IsFile(p) {
			return p, true
		}
	}
	return "", false
}

// EnvironmentOf returns the environment of envs with interpreter p's
// prefix, links resolved, else p's own.
func EnvironmentOf(root fsroot.Root, env map[string]string, envs []Environment, p string) (Environment, bool) {
	e, ok := ForInterpreter(root, env, p)
	if !ok {
		return Environment{}, false
	}
	want := root.RealPath(e.Prefix)
	for _, c := range envs {
		if c.Kind != KindUser && root.RealPath(c.Prefix) == want {
			return c, true
		}
	}
	return e, true
}
