package pyenv

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// activationVars name the conda environment an entrypoint activates, best
// first (micromamba-docker's _activate_current_env.sh activates ENV_NAME).
var activationVars = []string{"ENV_NAME", "MAMBA_DEFAULT_ENV", "CONDA_DEFAULT_ENV"}

// pixiAppDir is the WORKDIR of pixi's container guide.
const pixiAppDir = "/app"

// activated adds the environments an entrypoint activates without PATH
// saying so: the conda environment a variable names, else pixi's.
func (f *finder) activated() {
	for _, k := range activationVars {
		v := strings.TrimSpace(f.env[k])
		if v == "" || strings.ContainsRune(v, 0) {
			continue
		}
		for _, p := range f.condaEnvPrefixes(v) {
			if f.addActivated(p, fmt.Sprintf("%s=%s (an entrypoint's conda activate)", k, v)) {
				return
			}
		}
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
		f.addActivated(p, how)
	}
}

// pixiProjects are the working directory a shell recorded in PWD, and /app.
func (f *finder) pixiProjects() []string {
	out := []string{pixiAppDir}
	if wd := f.env["PWD"]; strings.HasPrefix(wd, "/") && path.Clean(wd) != pixiAppDir {
		out = append([]string{path.Clean(wd)}, out...)
	}
	return out
}

// condaEnvPrefixes are where conda environment name may be: itself when a
// path, else "base" or envs/<name> of each conda root.
func (f *finder) condaEnvPrefixes(name string) []string {
	if strings.HasPrefix(name, "/") {
		return []string{path.Clean(name)}
	}
	if strings.Contains(name, "/") || name == "." || name == ".." {
		return nil
	}
	var out []string
	for _, r := range f.condaRoots() {
		if name == "base" {
			out = append(out, r)
		} else {
			out = append(out, path.Join(r, "envs", name))
		}
	}
	return out
}

// condaRoots are MAMBA_ROOT_PREFIX, then the conda installers' default
// prefixes that exist.
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

// addActivated adds the environment at prefix, reporting whether it holds a
// Python.
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
