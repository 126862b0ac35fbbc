package pyenv

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// activationVars name the conda environment an entrypoint activates, best
// first (micromamba-docker's _activate_current_env.sh reads ENV_NAME).
var activationVars = []string{"ENV_NAME", "MAMBA_DEFAULT_ENV", "CONDA_DEFAULT_ENV"}

// pixiAppDir is the WORKDIR of pixi's container guide.
const pixiAppDir = "/app"

// activated adds what an entrypoint activates: the command's or its
// script's environment, else a variable's, else pixi's.
func (f *finder) activated(script scriptEnv) {
	scripted := script.ok && f.addActivated(script.prefix, script.how)
	if !scripted && f.varActivated() {
		return
	}
	var envs []string
	for _, proj := range f.pixiProjects() {
		envs = append(envs, f.listDirs(path.Join(proj, ".pixi", "envs"))...)
	}
	how := "pixi's shell-hook entrypoint"
	if len(envs) > 1 {
		how = fmt.Sprintf("pixi's shell-hook entrypoint, one of %d environments", len(envs))
	}
	for _, p := range envs {
		if scripted {
			f.addPrefix(p, "", "pixi environment, not the one the entrypoint activates")
			continue
		}
		f.addActivated(p, how)
	}
}

func (f *finder) varActivated() bool {
	for _, k := range activationVars {
		v := strings.TrimSpace(f.env[k])
		if v == "" || strings.ContainsRune(v, 0) {
			continue
		}
		for _, p := range f.condaEnvPrefixes(v) {
			if f.addActivated(p, fmt.Sprintf("%s=%s (an entrypoint's conda activate)", k, v)) {
				return true
			}
		}
	}
	return false
}

// pixiProjects are the working directory a shell recorded in PWD, and /app.
func (f *finder) pixiProjects() []string {
	out := []string{pixiAppDir}
	if wd := f.env["PWD"]; strings.HasPrefix(wd, "/") && path.Clean(wd) != pixiAppDir {
		out = append([]string{path.Clean(wd)}, out...)
	}
	return out
}

// condaEnvPrefixes are where conda environment name may be.
func (f *finder) condaEnvPrefixes(name string) []string {
	if strings.HasPrefix(name, "/") {
		return []string{path.Clean(name)}
	}
	var out []string
	for _, r := range f.condaRoots() {
		out = append(out, condaEnvIn(r, name)...)
	}
	return out
}

// condaRoots are MAMBA_ROOT_PREFIX, then condaDefaults that exist.
func (f *finder) condaRoots() []string {
	var out []string
	if r := f.env["MAMBA_ROOT_PREFIX"]; strings.HasPrefix(r, "/") {
		out = append(out, path.Clean(r))
	}
	for _, pat := range condaDefaults {
		for _, p := range f.glob(pat) {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// addActivated adds prefix, reporting whether it holds a Python.
func (f *finder) addActivated(prefix, how string) bool {
	if f.full || !f.root.IsDir(prefix) {
		return false
	}
	e, ok := f.environment(prefix, f.prefixInterpreter(prefix), how)
	if !ok {
		return false
	}
	e.Activation = how
	f.add(e)
	return true
}

const maxScript = 64 << 10 // bytes of an entrypoint script read

// scriptEnv is the environment holding a Python that the last activating
// statement of the command's script, else the runner command, names, and how.
type scriptEnv struct {
	prefix, how string
	ok          bool
}

func (f *finder) scriptActivation(command []string) scriptEnv {
	type found struct {
		prefixes []string
		how      string
	}
	var all []found
	if len(command) > 0 {
		all = append(all, found{f.runIn(command[:min(len(command), maxArgsLooked)]), "the command's `" + path.Base(command[0]) + " run`"})
	}
	text, file := f.entrypointScript(command)
	for stmt := range strings.FieldsFuncSeq(text, func(r rune) bool { return strings.ContainsRune(";&|\n", r) }) {
		words := strings.Fields(stmt)
		ps := f.activation(words)
		if len(ps) == 0 {
			ps = f.runIn(words)
		}
		if len(ps) > 0 {
			all = append(all, found{ps, fmt.Sprintf("%s's `%s`", file, shown(words))})
		}
	}
	for _, a := range slices.Backward(all) {
		for _, p := range a.prefixes {
			if f.prefixInterpreter(p) != "" {
				return scriptEnv{p, a.how, true}
			}
		}
	}
	return scriptEnv{}
}

func (f *finder) entrypointScript(command []string) (text, file string) {
	if len(command) == 0 {
		return "", ""
	}
	operand, isScript, given := shellOperand(command)
	if isScript {
		return operand[:min(len(operand), maxScript)], command[0] + " -c"
	}
	file = command[0]
	if given {
		file = operand
	}
	p, ok := f.lookPath(file)
	if !ok {
		return "", ""
	}
	head := f.head(p)
	if sb, ok := ParseShebang(head); !given && (!ok || !slices.Contains(shells, path.Base(sb.Interpreter))) {
		return "", ""
	}
	f.input(p)
	return string(head), p
}

// shown is what the record keeps of an activating statement: its first
// assignment, or its first three words, not what else it sets.
func shown(words []string) string {
	switch {
	case words[0] == "export" && len(words) > 1:
		return "export " + words[1]
	case strings.Contains(words[0], "="):
		return words[0]
	}
	return strings.Join(words[:min(len(words), 3)], " ")
}

// activation reads the prefixes one shell statement activates.
func (f *finder) activation(words []string) []string {
	words = slices.DeleteFunc(slices.Clone(words), func(w string) bool { return strings.ContainsAny(w, "<>") })
	if len(words) > 0 && words[0] == "export" {
		words = words[1:]
	}
	if len(words) == 0 || strings.Contains(strings.Join(words, " "), "$(") {
		return nil
	}
	unquote := func(s string) string { return strings.Trim(s, `"'`) }
	if k, v, ok := strings.Cut(words[0], "="); ok {
		v = unquote(v)
		switch k {
		case "CONDA_PREFIX", "VIRTUAL_ENV":
			if strings.HasPrefix(v, "/") && !strings.Contains(v, "$") {
				return []string{path.Clean(v)}
			}
		case "PATH":
			if first, _, _ := strings.Cut(v, ":"); strings.HasPrefix(first, "/") && path.Base(first) == "bin" && !strings.Contains(first, "$") {
				return []string{path.Dir(path.Clean(first))}
			}
		}
		return nil
	}
	switch {
	case (words[0] == "source" || words[0] == ".") && len(words) > 1 && strings.HasSuffix(unquote(words[1]), "/bin/activate"):
		script := unquote(words[1])
		if wd := f.env["PWD"]; !strings.HasPrefix(script, "/") && strings.HasPrefix(wd, "/") {
			script = path.Join(wd, script)
		}
		if !strings.HasPrefix(script, "/") || strings.Contains(script, "$") {
			return nil
		}
		prefix := path.Dir(path.Dir(path.Clean(script)))
		if len(words) > 2 && !strings.Contains(words[2], "$") {
			return condaEnvIn(prefix, unquote(words[2]))
		}
		return []string{prefix}
	case slices.Contains([]string{"conda", "mamba", "micromamba"}, path.Base(words[0])) && len(words) > 2 && words[1] == "activate":
		name := unquote(words[len(words)-1])
		if strings.HasPrefix(name, "-") || strings.Contains(name, "$") {
			return nil
		}
		return f.condaEnvPrefixes(name)
	}
	return nil
}

// condaEnvIn is where environment name of conda root is.
func condaEnvIn(root, name string) []string {
	switch {
	case strings.HasPrefix(name, "/"):
		return []string{path.Clean(name)}
	case name == "base":
		return []string{root}
	case strings.Contains(name, "/") || name == "." || name == "..":
		return nil
	}
	return []string{path.Join(root, "envs", name)}
}

// runIn reads where `conda|mamba|micromamba run -n NAME|-p PREFIX`,
// `pixi run [-e NAME]` and `uv run` (the project's .venv) run the rest.
func (f *finder) runIn(words []string) []string {
	if len(words) < 3 || words[1] != "run" {
		return nil
	}
	flag := func(names ...string) (string, bool) {
		for i, w := range words[2:] {
			for _, n := range names {
				if v, ok := strings.CutPrefix(w, n+"="); ok {
					return v, true
				}
				if w == n && i+3 < len(words) {
					return words[i+3], true
				}
			}
		}
		return "", false
	}
	switch path.Base(words[0]) {
	case "conda", "mamba", "micromamba":
		if p, ok := flag("-p", "--prefix"); ok && strings.HasPrefix(p, "/") {
			return []string{path.Clean(p)}
		}
		if n, ok := flag("-n", "--name"); ok && !strings.Contains(n, "$") {
			return f.condaEnvPrefixes(n)
		}
	case "pixi":
		name, ok := flag("-e", "--environment")
		if !ok {
			name = "default"
		}
		if strings.ContainsAny(name, "/$") || name == "." || name == ".." {
			return nil
		}
		var out []string
		for _, proj := range f.pixiProjects() {
			out = append(out, path.Join(proj, ".pixi", "envs", name))
		}
		return out
	case "uv":
		var out []string
		for _, proj := range f.pixiProjects() {
			out = append(out, path.Join(proj, ".venv"))
		}
		return out
	}
	return nil
}
