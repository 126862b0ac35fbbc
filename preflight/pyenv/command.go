package pyenv

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// maxShebang is the kernel's BINPRM_BUF_SIZE; maxTrampoline adds PATH_MAX.
const (
	maxShebang    = 256
	maxTrampoline = 4096 + maxShebang
)

// maxArgsLooked bounds the arguments searched for a wrapper's Python.
const maxArgsLooked = 16

// Choice is the Python a command runs and how that was decided, or the
// candidates when that cannot be told.
type Choice struct {
	Interpreter string
	How         string
	Candidates  []Environment
}

// Choose returns the Python the command argv will run among envs (Find's):
// argv[0] when it is a Python, or the one its "#!" line names (a console
// script); else the first Python an argument names (an entrypoint script
// that execs "$@"), `sh -c`'s script read alike; else python3, then python.
// A bare name is looked up in the activated environments' bin, then PATH.
func Choose(root fsroot.Root, env map[string]string, envs []Environment, argv []string) Choice {
	f := newFinder(root, env)
	return f.choose(envs, argv, f.scriptActivation(argv))
}

// choose is Choose given argv's script activation, as Find read it.
func (f *finder) choose(envs []Environment, argv []string, script scriptEnv) Choice {
	c := chooser{finder: f}
	for _, e := range envs {
		if e.Activation != "" {
			c.activated = append(c.activated, e)
		}
	}
	if script.ok {
		// What a manifest baked without the command cannot know.
		c.activated = []Environment{{Prefix: script.prefix, Activation: script.how}}
	}
	how, missing := "the command", ""
	if words, ok := shellScript(argv); ok {
		argv, how = words, "the -c script of "+argv[0]
	}
	if len(argv) > 0 && argv[0] != "" {
		ch, found, ok := c.command(argv[0], how+", "+argv[0])
		if ok {
			return ch
		}
		if !found {
			missing = fmt.Sprintf(" (%s's %s is not found, so it cannot start)", how, argv[0])
		}
		for i, a := range argv[1:min(len(argv), maxArgsLooked)] {
			if IsPythonName(path.Base(a)) {
				if ch, ok := c.python(a, fmt.Sprintf("argument %d of %s, %s", i+1, how, a)); ok {
					return ch
				}
			}
		}
	}
	for _, n := range []string{"python3", "python"} {
		if ch, ok := c.python(n, n); ok {
			ch.How += missing
			return ch
		}
	}
	return Choice{}
}

// shells are the programs whose -c script a command may hand Python to.
var shells = []string{"sh", "bash", "dash", "zsh", "ash"}

// setup are shell builtins and conda's activation, not the program run.
var setup = []string{"cd", "source", ".", ":", "set", "export", "unset", "eval", "exit", "return", "trap", "ulimit", "umask",
	"echo", "printf", "true", "false", "test", "[", "wait", "conda", "mamba", "micromamba"}

// shellOperand is what a shell command runs: the script of `sh -c SCRIPT`
// (-c also in a cluster, `bash -lc`) or, without -c, the file of `bash
// FILE`; ok is false for any other command.
func shellOperand(argv []string) (operand string, isScript, ok bool) {
	if len(argv) < 2 || !slices.Contains(shells, path.Base(argv[0])) {
		return "", false, false
	}
	for i, a := range argv[1:] {
		switch {
		case a == "--":
			if i+2 < len(argv) {
				return argv[i+2], isScript, true
			}
			return "", false, false
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			isScript = isScript || strings.ContainsRune(a[1:], 'c')
		default:
			return a, isScript, true
		}
	}
	return "", false, false
}

// shellScript is the words of `sh -c SCRIPT`'s first program, without assignments and exec.
func shellScript(argv []string) ([]string, bool) {
	script, isScript, ok := shellOperand(argv)
	if !ok || !isScript {
		return nil, false
	}
	script = script[:min(len(script), maxShellScript)]
	for cmd := range strings.FieldsFuncSeq(script, func(r rune) bool { return strings.ContainsRune(";&|\n()", r) }) {
		var words []string
		for _, w := range strings.Fields(cmd) {
			w = strings.Trim(w, `"'`)
			if len(words) == 0 && (w == "exec" || strings.Contains(w, "=") && !strings.Contains(w[:strings.Index(w, "=")], "/")) {
				continue
			}
			words = append(words, w)
		}
		if len(words) > 0 && !slices.Contains(setup, words[0]) {
			return words, true
		}
	}
	return nil, false
}

const maxShellScript = 4096

type chooser struct {
	*finder
	activated []Environment
}

// command resolves argv[0], a Python or a script naming one; found is false when it is not there.
func (c chooser) command(name, how string) (ch Choice, found, ok bool) {
	if IsPythonName(path.Base(name)) {
		ch, ok = c.python(name, how)
		return ch, ok, ok
	}
	exe, found := c.activatedBin(name)
	if !found {
		exe, found = c.lookPath(name)
	}
	if !found {
		return Choice{}, false, false
	}
	head := c.head(exe)
	head = head[:min(len(head), maxTrampoline)]
	sb, isScript := ParseShebang(head[:min(len(head), maxShebang)])
	how = "the #! line of " + exe
	if p, rel, ok := ParseExecTrampoline(head); ok && isScript && path.Base(sb.Interpreter) == "sh" {
		if rel {
			p = path.Join(path.Dir(c.root.RealPath(exe)), p)
		}
		sb, how = Shebang{Interpreter: p}, "the 'exec' line of "+exe
	}
	if !isScript || !IsPythonName(path.Base(sb.Interpreter)) {
		return Choice{}, true, false
	}
	if sb.ViaEnv {
		ch, ok = c.python(sb.Interpreter, how)
		return ch, true, ok
	}
	if !c.root.IsFile(sb.Interpreter) {
		return Choice{}, true, false
	}
	return Choice{Interpreter: sb.Interpreter, How: how}, true, true
}

// python resolves a Python's name, a bare one as Choose says.
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

// activatedBin is name in the first activated environment's bin.
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

// lookPath finds name as execvp does, a relative path from PWD.
func (f *finder) lookPath(name string) (string, bool) {
	if strings.Contains(name, "/") {
		p := name
		if wd := f.env["PWD"]; !strings.HasPrefix(p, "/") && strings.HasPrefix(wd, "/") {
			p = path.Join(wd, p)
		}
		p = path.Clean(p)
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
