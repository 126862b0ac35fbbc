package image

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// Judge returns the scan's frameworks with NotJudged set for those the
// checks leave out, and the Python that decided (pyenv.Choose). On that
// interpreter's sys.path the first copy of each framework it can import is
// judged, and nothing it cannot import. Where the Python cannot be told
// (several environments an entrypoint may activate, or no interpreter at
// all), every candidate environment's first copies are judged.
func Judge(root fsroot.Root, env map[string]string, res Result, argv []string) ([]facts.Framework, *facts.Python) {
	fws := slices.Clone(res.Frameworks)
	for i := range fws {
		if fws[i].NotImportable != "" {
			fws[i].NotJudged = "Python cannot import it: " + fws[i].NotImportable
		}
	}
	if len(fws) == 0 || len(res.Environments) == 0 {
		// A manifest without environments: every framework is judged.
		return fws, nil
	}
	env = envSubset(env)
	choice := pyenv.Choose(root, env, res.Environments, argv)
	py := &facts.Python{How: choice.How}
	j := judging{fws: fws, judged: map[string]int{}}
	switch {
	case choice.Interpreter != "":
		e, ok := pyenv.EnvironmentOf(root, env, res.Environments, choice.Interpreter)
		if !ok {
			break
		}
		py.Interpreter, py.Environment, py.Version = choice.Interpreter, e.Prefix, strings.TrimPrefix(e.LibName(), "python")
		j.interpreter(e, res.Environments)
		return fws, py
	case len(choice.Candidates) > 0:
		j.candidates(choice.Candidates, py)
		return fws, py
	}
	py.How = "no Python found on PATH or in an activated environment: every environment holding a framework is a candidate"
	j.candidates(res.Environments, py)
	return fws, py
}

// judging marks which frameworks the checks judge.
type judging struct {
	fws    []facts.Framework
	judged map[string]int // framework name -> index judged
}

func (j *judging) mark(i int, why string) {
	if j.fws[i].NotJudged == "" {
		j.fws[i].NotJudged = why
	}
}

// walk calls f with each framework e's sys.path imports, in path order:
// the first copy of each name its Python loads.
func (j *judging) walk(e pyenv.Environment, f func(i int, first bool)) {
	done := map[string]bool{}
	for _, en := range e.Path {
		for i, fw := range j.fws {
			if path.Dir(fw.Location) != en.Dir || fw.NotImportable != "" {
				continue
			}
			if en.Only != nil && !slices.Contains(en.Only, path.Base(fw.Location)) {
				continue
			}
			if !abiLoads(fw.ABI, e) {
				j.mark(i, "not importable by "+interpreterOf(e)+": "+abiMismatch(fw, e))
				continue
			}
			f(i, !done[fw.Name])
			done[fw.Name] = true
		}
	}
}

// interpreter judges what interpreter e imports, and of the rest only a
// home's user site, which the job imports when it runs as that user.
func (j *judging) interpreter(e pyenv.Environment, envs []pyenv.Environment) {
	onPath := map[int]bool{}
	j.walk(e, func(i int, first bool) {
		onPath[i] = true
		if !first {
			j.mark(i, fmt.Sprintf("shadowed on the sys.path of %s by %s", interpreterOf(e), j.fws[j.judged[j.fws[i].Name]].Location))
			return
		}
		j.judged[j.fws[i].Name] = i
		j.fws[i].NotJudged = ""
	})
	for i, fw := range j.fws {
		if onPath[i] || fw.NotJudged != "" {
			continue
		}
		k, taken := j.judged[fw.Name]
		switch {
		case taken:
			j.mark(i, fmt.Sprintf("not on the sys.path of %s, which imports %s from %s", interpreterOf(e), fw.Name, j.fws[k].Location))
		case excludes(e, fw, envs):
			j.mark(i, fmt.Sprintf("not on the sys.path of %s: its pyvenv.cfg sets include-system-site-packages = false", interpreterOf(e)))
		case fw.EnvironmentKind == pyenv.KindUser && userSiteOf(e, fw):
			j.judged[fw.Name] = i
		default:
			j.mark(i, fmt.Sprintf("not on the sys.path of %s, the Python the command runs", interpreterOf(e)))
		}
	}
}

// userSiteOf reports whether fw sits in a home's user site of e's Python,
// ~/.local/lib/pythonX.Y[t]/site-packages, which e reads when run by that
// home's user (a venv without the system site excepted).
func userSiteOf(e pyenv.Environment, fw facts.Framework) bool {
	if e.Kind == pyenv.KindVenv && !e.IncludeSystemSite {
		return false
	}
	return path.Base(path.Dir(fw.PathEntry)) == e.LibName() && path.Base(fw.PathEntry) == "site-packages"
}

// candidates judges the first copies of each of envs that holds one, and
// records the candidates when more than one does.
func (j *judging) candidates(envs []pyenv.Environment, py *facts.Python) {
	in := map[int]bool{}
	for _, e := range envs {
		held := false
		j.walk(e, func(i int, first bool) {
			if first && !in[i] {
				in[i], held = true, true
			}
		})
		if held {
			py.Candidates = append(py.Candidates, e.Prefix)
		}
	}
	for i := range j.fws {
		switch {
		case in[i]:
			j.fws[i].NotJudged = ""
			j.fws[i].Candidate = len(py.Candidates) > 1
		case j.fws[i].NotJudged == "":
			j.mark(i, "shadowed on the sys.path of every environment that holds it")
		}
	}
	if len(py.Candidates) < 2 {
		py.Candidates = nil
	}
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
