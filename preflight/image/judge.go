package image

import (
	"fmt"
	"path"
	"slices"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// Judge returns the scan's frameworks with NotJudged set for those the
// checks leave out, and a note on which interpreter decided. On the sys.path
// of the interpreter argv runs (pyenv.Interpreter) the first copy of each
// framework is judged; a framework it does not import is judged too unless
// a copy it imports shadows it or its venv excludes that site. Without an
// interpreter, the first copy in search order is judged.
func Judge(root fsroot.Root, env map[string]string, res Result, argv []string) ([]facts.Framework, string) {
	fws := slices.Clone(res.Frameworks)
	if len(fws) == 0 || len(res.Environments) == 0 {
		// A manifest without environments: every framework is judged.
		return fws, ""
	}
	env = envSubset(env)
	var interp *pyenv.Environment
	note := ""
	if p, how, ok := pyenv.Interpreter(root, env, argv); ok {
		if e, ok := pyenv.EnvironmentOf(root, env, res.Environments, p); ok {
			interp = &e
			note = fmt.Sprintf("frameworks judged for %s (%s), environment %s", p, how, e.Prefix)
		}
	}
	judged := map[string]int{} // framework name -> index judged
	mark := func(i int, why string) {
		if fws[i].NotJudged == "" {
			fws[i].NotJudged = why
		}
	}
	done := make([]bool, len(fws))
	if interp != nil {
		for _, en := range interp.Path {
			for i, fw := range fws {
				if done[i] || path.Dir(fw.Location) != en.Dir {
					continue
				}
				if en.Only != nil && !slices.Contains(en.Only, path.Base(fw.Location)) {
					continue
				}
				done[i] = true
				if j, ok := judged[fw.Name]; ok {
					mark(i, fmt.Sprintf("shadowed on the sys.path of %s by %s", interp.Interpreter, fws[j].Location))
					continue
				}
				judged[fw.Name] = i
				fws[i].NotJudged = ""
			}
		}
	}
	for i, fw := range fws {
		if done[i] {
			continue
		}
		switch j, ok := judged[fw.Name]; {
		case ok && interp != nil:
			mark(i, fmt.Sprintf("not on the sys.path of %s, which imports %s from %s", interp.Interpreter, fw.Name, fws[j].Location))
		case ok:
			mark(i, fmt.Sprintf("shadowed by %s, found first", fws[j].Location))
		case interp != nil && excludes(*interp, fw, res.Environments):
			mark(i, fmt.Sprintf("not on the sys.path of %s: its pyvenv.cfg sets include-system-site-packages = false", interp.Interpreter))
		default:
			judged[fw.Name] = i
		}
	}
	return fws, note
}

// excludes reports whether venv e, without system site packages, leaves
// fw's site (its base's or the user's) off its sys.path.
func excludes(e pyenv.Environment, fw facts.Framework, envs []pyenv.Environment) bool {
	if e.Kind != pyenv.KindVenv || e.IncludeSystemSite {
		return false
	}
	if fw.EnvironmentKind == pyenv.KindSystem || fw.EnvironmentKind == pyenv.KindUser {
		return true
	}
	dir := path.Dir(fw.Location)
	for _, b := range envs {
		if b.Prefix != e.Base {
			continue
		}
		for _, en := range b.Path {
			if en.Dir == dir {
				return true
			}
		}
	}
	return false
}
