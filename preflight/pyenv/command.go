package pyenv

import (
	"fmt"
	"path"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// maxShebang is the kernel's BINPRM_BUF_SIZE.
const maxShebang = 256

// maxArgsLooked bounds the arguments searched for the Python a wrapper
// command (an entrypoint script, `micromamba run`) hands the rest to.
const maxArgsLooked = 16

// Choice is the Python a command runs and how that was decided, or, where
// that cannot be told (several environments an entrypoint may activate),
// the candidates one of which will run it.
type Choice struct {
	Interpreter string
	How         string
	Candidates  []Environment
}

// Choose returns the Python the command argv will run among envs (Find's):
// argv[0] when it is a Python, or the one its "#!" line names (a console
// script); else the first Python an argument names (an entrypoint script
// that execs "$@"); else python3, then python. A bare name is looked up in
// the bin of the environments an entrypoint activates, then on PATH.
func Choose(root fsroot.Root, env map[string]string, envs []Environment, argv []string) Choice {
	c := chooser{finder: &finder{root: root, env: env, seen: map[string]bool{}, read: map[string]bool{}}}
	for _, e := range envs {
		if e.Activation != "" {
			c.activated = append(c.activated, e)
		}
	}
	if len(argv) > 0 && argv[0] != "" {
		if ch, ok := c.command(argv[0], "the command, "+argv[0]); ok {
			return ch
		}
		for i, a := range argv[1:min(len(argv), maxArgsLooked)] {
			if IsPythonName(path.Base(a)) {
				if ch, ok := c.python(a, fmt.Sprintf("argument %d of the command, %s", i+1, a)); ok {
					return ch
				}
			}
		}
	}
	for _, n := range []string{"python3", "python"} {
		if ch, ok := c.python(n, n); ok {
			return ch
		}
	}
	return Choice{}
}

type chooser struct {
	*finder
	activated []Environment
}

// command resolves argv[0]: a Python, or a script whose #! line names one.
func (c chooser) command(name, how string) (Choice, bool) {
	if IsPythonName(path.Base(name)) {
		return c.python(name, how)
	}
	exe, found := c.activatedBin(name)
	if !found {
		exe, found = c.lookPath(name)
	}
	if !found {
		return Choice{}, false
	}
	head, _ := c.root.ReadHead(exe, maxShebang)
	sb, isScript := ParseShebang(head)
	if !isScript || !IsPythonName(path.Base(sb.Interpreter)) {
		return Choice{}, false
	}
	how = "the #! line of " + exe
	if sb.ViaEnv {
		return c.python(sb.Interpreter, how)
	}
	if !c.root.IsFile(sb.Interpreter) {
		return Choice{}, false
	}
	return Choice{Interpreter: sb.Interpreter, How: how}, true
}

// python resolves a Python's name: a path as it is, a bare name in the
// activated environments' bin first, then on PATH.
func (c chooser) python(name, how string) (Choice, bool) {
	if !strings.Contains(name, "/") {
		var in []Environment
		var exe string
		for _, e := range c.activated {
			if p := path.Join(e.Prefix, "bin", name); c.root.IsFile(p) {
				in, exe = append(in, e), p
			}
		}
		switch len(in) {
		case 0:
		case 1:
			return Choice{Interpreter: exe, How: fmt.Sprintf("%s, from %s, which %s activates", how, path.Dir(exe), in[0].Activation)}, true
		default:
			return Choice{How: fmt.Sprintf("%s, from whichever of %d environments %s activates", how, len(in), in[0].Activation), Candidates: in}, true
		}
	}
	exe, found := c.lookPath(name)
	if !found {
		return Choice{}, false
	}
	if !strings.Contains(name, "/") {
		how += " on PATH"
	}
	return Choice{Interpreter: exe, How: how}, true
}

// activatedBin is bare name in the bin of the first activated environment
// holding it.
func (c chooser) activatedBin(name string) (string, bool) {
	if strings.Contains(name, "/") {
		return "", false
	}
	for _, e := range c.activated {
		if p := path.Join(e.Prefix, "bin", name); c.root.IsFile(p) {
			return p, true
		}
	}
	return "", false
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
// prefix and Python, links resolved, else p's own.
func EnvironmentOf(root fsroot.Root, env map[string]string, envs []Environment, p string) (Environment, bool) {
	e, ok := ForInterpreter(root, env, p)
	if !ok {
		return Environment{}, false
	}
	want := root.RealPath(e.Prefix)
	for _, c := range envs {
		if c.Kind != KindUser && root.RealPath(c.Prefix) == want && c.LibName() == e.LibName() {
			return c, true
		}
	}
	return e, true
}
