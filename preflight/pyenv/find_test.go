package pyenv

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// root builds a tree: a path ending in "/" is a directory, "->x" a link.
func root(t testing.TB, files map[string]string) fsroot.Root {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		h := filepath.Join(dir, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(h, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(h), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(content, "->"); ok {
			err = os.Symlink(target, h)
		} else {
			err = os.WriteFile(h, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return fsroot.Root(dir)
}

func dirs(e Environment) []string {
	var out []string
	for _, en := range e.Path {
		out = append(out, en.Dir+" "+en.From)
	}
	return out
}

func find(t *testing.T, r fsroot.Root, env map[string]string, prefix string) Environment {
	t.Helper()
	res := Find(r, env)
	for _, e := range res.Environments {
		if e.Prefix == prefix {
			return e
		}
	}
	t.Fatalf("no environment %s in %+v", prefix, res.Environments)
	return Environment{}
}

// site.py's order for a venv that includes the system site: PYTHONPATH,
// the venv's site-packages, the user site, then the base's site-packages
// (Lib/site.py main: venv(), addusersitepackages, addsitepackages).
func TestVenvSysPathFollowsSitePy(t *testing.T) {
	r := root(t, map[string]string{
		"usr/local/bin/python3.12":                  "",
		"usr/local/lib/python3.12/site-packages/":   "",
		"opt/venv/pyvenv.cfg":                       "home = /usr/local/bin\ninclude-system-site-packages = true\nversion = 3.12.8\n",
		"opt/venv/bin/python3":                      "->/usr/local/bin/python3.12",
		"opt/venv/lib/python3.12/site-packages/":    "",
		"root/.local/lib/python3.12/site-packages/": "",
		"pp/": "",
	})
	env := map[string]string{"PATH": "/opt/venv/bin:/usr/local/bin", "PYTHONPATH": "/pp:relative:/missing"}
	e := find(t, r, env, "/opt/venv")
	want := []string{
		"/pp PYTHONPATH",
		"/opt/venv/lib/python3.12/site-packages site-packages",
		"/root/.local/lib/python3.12/site-packages user site",
		"/usr/local/lib/python3.12/site-packages base site-packages",
	}
	if got := dirs(e); !slices.Equal(got, want) || e.Kind != KindVenv || e.Version != "3.12" || e.Base != "/usr/local" {
		t.Errorf("venv %+v\npath %q\nwant %q", e, got, want)
	}
	env["PYTHONNOUSERSITE"] = "1"
	if got := dirs(find(t, r, env, "/opt/venv")); slices.Contains(got, want[2]) {
		t.Errorf("PYTHONNOUSERSITE left the user site on: %q", got)
	}
	// include-system-site-packages = false: neither the user site nor the base's.
	r2 := root(t, map[string]string{
		"usr/local/bin/python3.12":                  "",
		"usr/local/lib/python3.12/site-packages/":   "",
		"opt/venv/pyvenv.cfg":                       "home = /usr/local/bin\ninclude-system-site-packages = false\n",
		"opt/venv/bin/python3":                      "->/usr/local/bin/python3.12",
		"opt/venv/lib/python3.12/site-packages/":    "",
		"root/.local/lib/python3.12/site-packages/": "",
	})
	if got := dirs(find(t, r2, map[string]string{"PATH": "/opt/venv/bin"}, "/opt/venv")); !slices.Equal(got, []string{want[1]}) {
		t.Errorf("isolated venv path %q", got)
	}
}

// .pth files are read in sorted order, path lines appended once each and
// only when they exist; easy_install's entries move to the front.
func TestPthFilesOrderAndEggInsert(t *testing.T) {
	sp := "usr/local/lib/python3.11/site-packages"
	r := root(t, map[string]string{
		"usr/local/bin/python3.11": "",
		sp + "/b.pth":              "/src/b\n/src/a\n",
		sp + "/a.pth":              "/src/a\n/missing\n",
		sp + "/easy-install.pth":   "import sys; sys.__plen = len(sys.path)\n./x.egg\nimport sys; new = sys.path[sys.__plen:]; del sys.path[sys.__plen:]; p = getattr(sys, '__egginsert', 0); sys.path[p:p] = new; sys.__egginsert = p + len(new)\n",
		sp + "/x.egg/EGG-INFO/":    "",
		"src/a/":                   "",
		"src/b/":                   "",
	})
	e := find(t, r, map[string]string{"PATH": "/usr/local/bin"}, "/usr/local")
	want := []string{
		"/" + sp + "/x.egg .pth",
		"/" + sp + " site-packages",
		"/src/a .pth",
		"/src/b .pth",
	}
	if got := dirs(e); !slices.Equal(got, want) {
		t.Errorf("path %q\nwant %q", got, want)
	}
}

// pyenv's shims run $PYENV_ROOT/version's version, or PYENV_VERSION's.
func TestPyenvShimsRunTheGlobalVersion(t *testing.T) {
	r := root(t, map[string]string{
		"root/.pyenv/version":                                        "3.10.14\n",
		"root/.pyenv/shims/python":                                   "#!/usr/bin/env bash\n",
		"root/.pyenv/versions/3.10.14/bin/python3.10":                "",
		"root/.pyenv/versions/3.10.14/lib/python3.10/site-packages/": "",
		"root/.pyenv/versions/3.12.4/bin/python3.12":                 "",
		"root/.pyenv/versions/3.12.4/lib/python3.12/site-packages/":  "",
	})
	for version, want := range map[string]string{"": "/root/.pyenv/versions/3.10.14", "3.12.4": "/root/.pyenv/versions/3.12.4"} {
		env := map[string]string{"PATH": "/root/.pyenv/shims:/usr/bin"}
		if version != "" {
			env["PYENV_VERSION"] = version
		}
		res := Find(r, env)
		if len(res.Environments) == 0 || res.Environments[0].Prefix != want || res.Environments[0].Kind != KindPyenv {
			t.Errorf("PYENV_VERSION=%q: first environment %+v, want %s", version, res.Environments, want)
		}
	}
}

// Every part of the search is bounded and says what it left out.
func TestFindIsBounded(t *testing.T) {
	files := map[string]string{"usr/local/bin/python3.11": ""}
	sp := "usr/local/lib/python3.11/site-packages"
	for i := range MaxPthFiles + 10 {
		files[fmt.Sprintf("%s/p%04d.pth", sp, i)] = "# nothing\n"
	}
	for i := range MaxEnvironments + 5 {
		files[fmt.Sprintf("opt/conda/envs/e%03d/lib/python3.11/site-packages/", i)] = ""
		files[fmt.Sprintf("usr/local/bin/python3.%d", 20+i)] = ""
	}
	files["opt/conda/conda-meta/"] = ""
	files["opt/conda/lib/python3.11/site-packages/"] = ""
	res := Find(root(t, files), map[string]string{"PATH": "/usr/local/bin"})
	joined := strings.Join(res.Warnings, "\n")
	for _, want := range []string{"MaxPthFiles", "MaxEnvironments"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings %q do not mention %s", res.Warnings, want)
		}
	}
	if len(res.Environments) > MaxEnvironments || strings.Count(joined, "MaxEnvironments") != 1 {
		t.Errorf("%d environments, warnings %q: at most %d, said once", len(res.Environments), res.Warnings, MaxEnvironments)
	}
}

// The interpreter a command runs: argv[0] when it is a Python, a script's
// #! interpreter, else python3 on PATH.
func TestChoiceOfTheCommandsPython(t *testing.T) {
	r := root(t, map[string]string{
		"usr/bin/python3.11":      "",
		"usr/bin/python3":         "->python3.11",
		"opt/venv/bin/python":     "->/usr/bin/python3.11",
		"opt/venv/bin/torchrun":   "#!/opt/venv/bin/python\nimport sys\n",
		"usr/local/bin/run.sh":    "#!/bin/sh\nexec python3 train.py\n",
		"usr/local/bin/envscript": "#!/usr/bin/env python3\n",
	})
	env := map[string]string{"PATH": "/usr/local/bin:/usr/bin"}
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"python3", "train.py"}, "/usr/bin/python3"},
		{[]string{"/opt/venv/bin/python", "-m", "x"}, "/opt/venv/bin/python"},
		{[]string{"/opt/venv/bin/torchrun", "train.py"}, "/opt/venv/bin/python"},
		{[]string{"envscript"}, "/usr/bin/python3"},
		{[]string{"run.sh"}, "/usr/bin/python3"},
		{nil, "/usr/bin/python3"},
	} {
		if c := Choose(r, env, Find(r, env).Environments, tc.argv); c.Interpreter != tc.want {
			t.Errorf("Choose(%q) = %q (%s), want %q", tc.argv, c.Interpreter, c.How, tc.want)
		}
	}
}

// Each python3.Y beside python3 is an environment of its own, with its own
// sys.path: Paddle's Dockerfile.ubuntu20 (tools/dockerfile, commit 0ab6998)
// installs deadsnakes' python3.8 to 3.13 and python3.13-nogil, links
// /usr/bin/python and python3 to python3.9, and pip-installs for each.
func TestEveryInterpreterInAPathDirectoryIsAnEnvironment(t *testing.T) {
	r := root(t, map[string]string{
		"usr/bin/python3.9":                          "",
		"usr/bin/python3.10":                         "",
		"usr/bin/python3.13t":                        "",
		"usr/bin/python3":                            "->python3.9",
		"usr/bin/python":                             "->python3.9",
		"usr/lib/python3/dist-packages/":             "",
		"usr/local/lib/python3.9/dist-packages/":     "",
		"usr/local/lib/python3.10/dist-packages/":    "",
		"usr/local/lib/python3.13t/dist-packages/":   "",
		"root/.local/lib/python3.13t/site-packages/": "",
	})
	env := map[string]string{"PATH": "/usr/local/bin:/usr/bin"}
	res := Find(r, env)
	var got []string
	for _, e := range res.Environments {
		if e.Prefix == "/usr" {
			got = append(got, e.LibName()+" "+e.Interpreter+" "+strings.Join(dirs(e), ", "))
		}
	}
	want := []string{
		"python3.9 /usr/bin/python3 /usr/local/lib/python3.9/dist-packages site-packages, /usr/lib/python3/dist-packages site-packages",
		"python3.10 /usr/bin/python3.10 /usr/local/lib/python3.10/dist-packages site-packages, /usr/lib/python3/dist-packages site-packages",
		"python3.13t /usr/bin/python3.13t /root/.local/lib/python3.13t/site-packages user site, /usr/local/lib/python3.13t/dist-packages site-packages, /usr/lib/python3/dist-packages site-packages",
	}
	if !slices.Equal(got, want) {
		t.Errorf("/usr environments\n%q\nwant\n%q", got, want)
	}
	for argv, lib := range map[string]string{"python3.10": "python3.10", "python3.13t": "python3.13t", "python": "python3.9"} {
		c := Choose(r, env, res.Environments, []string{argv, "train.py"})
		e, ok := EnvironmentOf(r, env, res.Environments, c.Interpreter)
		if !ok || e.LibName() != lib {
			t.Errorf("%s runs %s (%s), environment %s; want %s", argv, c.Interpreter, c.How, e.LibName(), lib)
		}
	}
}

// micromamba-docker's multi_env example: two environments under
// MAMBA_ROOT_PREFIX, ENV_NAME choosing the one its entrypoint activates;
// `python` resolves there although PATH does not name it.
func TestEnvNameChoosesTheActivatedCondaEnvironment(t *testing.T) {
	r := root(t, map[string]string{
		"opt/conda/conda-meta/":                             "",
		"opt/conda/envs/env1/conda-meta/":                   "",
		"opt/conda/envs/env1/bin/python3.11":                "",
		"opt/conda/envs/env1/bin/python":                    "->python3.11",
		"opt/conda/envs/env1/lib/python3.11/site-packages/": "",
		"opt/conda/envs/env2/conda-meta/":                   "",
		"opt/conda/envs/env2/bin/python3.12":                "",
		"opt/conda/envs/env2/bin/python":                    "->python3.12",
		"opt/conda/envs/env2/lib/python3.12/site-packages/": "",
	})
	env := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin", "MAMBA_ROOT_PREFIX": "/opt/conda", "ENV_NAME": "env2"}
	res := Find(r, env)
	if len(res.Environments) == 0 || res.Environments[0].Prefix != "/opt/conda/envs/env2" || res.Environments[0].Activation == "" {
		t.Fatalf("first environment %+v, want env2 as activated", res.Environments)
	}
	c := Choose(r, env, res.Environments, []string{"python", "train.py"})
	if c.Interpreter != "/opt/conda/envs/env2/bin/python" || !strings.Contains(c.How, "ENV_NAME=env2") {
		t.Errorf("python is %q (%s), want env2's", c.Interpreter, c.How)
	}
}

// pixi's container guide: /app/.pixi/envs/prod, activated by the
// shell-hook entrypoint; with two environments and nothing saying which,
// both are candidates.
func TestPixiEnvironmentsUnderTheWorkingDirectory(t *testing.T) {
	files := map[string]string{
		"app/.pixi/envs/prod/conda-meta/":                   "",
		"app/.pixi/envs/prod/bin/python3.12":                "",
		"app/.pixi/envs/prod/bin/python":                    "->python3.12",
		"app/.pixi/envs/prod/lib/python3.12/site-packages/": "",
	}
	env := map[string]string{"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	r := root(t, files)
	res := Find(r, env)
	if c := Choose(r, env, res.Environments, []string{"/app/entrypoint.sh", "python", "-m", "app"}); c.Interpreter != "/app/.pixi/envs/prod/bin/python" {
		t.Errorf("one pixi environment: %+v", c)
	}
	files["app/.pixi/envs/default/conda-meta/"] = ""
	files["app/.pixi/envs/default/bin/python3.12"] = ""
	files["app/.pixi/envs/default/bin/python"] = "->python3.12"
	r = root(t, files)
	res = Find(r, env)
	c := Choose(r, env, res.Environments, []string{"python", "train.py"})
	if c.Interpreter != "" || len(c.Candidates) != 2 {
		t.Errorf("two pixi environments: %+v, want both candidates", c)
	}
}

// What a command hands Python to, read as the shell and the kernel would:
// a shell's -c script by its words (POSIX sh, "-c"), a relative script from
// the working directory, a console script's 'exec' line (distlib's and uv's,
// TestExecTrampolineNamesTheInterpreter), and, when the command's own
// program is not there, a record that says it cannot start.
func TestTheCommandsPythonThroughAShellScriptAndTheWorkingDirectory(t *testing.T) {
	r := root(t, map[string]string{
		"usr/bin/python3.12":      "",
		"usr/bin/python3":         "->python3.12",
		"opt/venv/pyvenv.cfg":     "home = /usr/bin\ninclude-system-site-packages = false\n",
		"opt/venv/bin/python":     "->/usr/bin/python3.12",
		"opt/venv/bin/torchrun":   "#!/opt/venv/bin/python\n# -*- coding: utf-8 -*-\nimport re\n",
		"app/train.py":            "#!/opt/venv/bin/python\nimport torch\n",
		"opt/venv/bin/accelerate": "#!/bin/sh\n'''exec' '/opt/venv/bin/python' \"$0\" \"$@\"\n' '''\n# -*- coding: utf-8 -*-\n",
		"opt/venv/bin/deepspeed":  "#!/bin/sh\n'''exec' \"$(dirname -- \"$(realpath -- \"$0\")\")\"/'python' \"$0\" \"$@\"\n' '''\n",
	})
	env := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin", "PWD": "/app"}
	for _, tc := range []struct {
		argv      []string
		want, how string
	}{
		{[]string{"sh", "-c", "python3 train.py"}, "/usr/bin/python3", "the -c script of sh, python3 on PATH"},
		{[]string{"/bin/bash", "-c", "cd /app && NCCL_DEBUG=INFO exec /opt/venv/bin/python train.py"}, "/opt/venv/bin/python", "the -c script of /bin/bash"},
		{[]string{"bash", "-c", "/opt/venv/bin/torchrun --nproc-per-node=8 train.py"}, "/opt/venv/bin/python", "the #! line of /opt/venv/bin/torchrun"},
		{[]string{"/bin/bash", "-lc", "python3 train.py"}, "/usr/bin/python3", "the -c script of /bin/bash, python3 on PATH"},
		{[]string{"bash", "--login", "-e", "-c", "./train.py"}, "/opt/venv/bin/python", "the #! line of /app/train.py"},
		{[]string{"./train.py"}, "/opt/venv/bin/python", "the #! line of /app/train.py"},
		{[]string{"/opt/venv/bin/accelerate", "launch", "train.py"}, "/opt/venv/bin/python", "the 'exec' line of /opt/venv/bin/accelerate"},
		{[]string{"/opt/venv/bin/deepspeed", "train.py"}, "/opt/venv/bin/python", "the 'exec' line of /opt/venv/bin/deepspeed"},
		{[]string{"python", "train.py"}, "/usr/bin/python3", "the command's python is not found, so it cannot start"},
		{[]string{"torchrun", "train.py"}, "/usr/bin/python3", "the command's torchrun is not found"},
	} {
		wantChoice(t, r, env, tc.argv, tc.want, tc.how)
	}
}

// A venv no PATH entry or variable names is still an environment when the
// command runs its Python (ENTRYPOINT ["/opt/venv/bin/python", ...], a
// console script's #! line): Find builds it, last.
func TestTheCommandsOwnEnvironmentIsFound(t *testing.T) {
	r := root(t, map[string]string{
		"usr/bin/python3.12":                      "",
		"usr/bin/python3":                         "->python3.12",
		"opt/venv/pyvenv.cfg":                     "home = /usr/bin\ninclude-system-site-packages = false\n",
		"opt/venv/bin/python":                     "->/usr/bin/python3.12",
		"opt/venv/bin/torchrun":                   "#!/opt/venv/bin/python\nimport sys\n",
		"opt/venv/lib/python3.12/site-packages/":  "",
		"usr/local/lib/python3.12/dist-packages/": "",
		"usr/lib/python3/dist-packages/":          "",
	})
	env := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"}
	if e := Find(r, env).Environments; slices.ContainsFunc(e, func(e Environment) bool { return e.Prefix == "/opt/venv" }) {
		t.Fatalf("/opt/venv found without the command: %+v", e)
	}
	for _, argv := range [][]string{{"/opt/venv/bin/python", "train.py"}, {"/opt/venv/bin/torchrun", "train.py"}} {
		envs := Find(r, env, argv...).Environments
		last := envs[len(envs)-1]
		if last.Prefix != "/opt/venv" || last.Kind != KindVenv || last.Via != "the command's Python" {
			t.Errorf("%q: last environment %+v, want the venv the command runs", argv, last)
		}
	}
}

// An entrypoint script that activates an environment before `exec "$@"`
// decides where a bare python is found: pixi's container guide writes
// `pixi shell-hook -e prod -s bash` (exports of PATH and CONDA_PREFIX) into
// /app/entrypoint.sh, venv's docs `source <venv>/bin/activate`, conda's
// `conda activate NAME` and `source <root>/bin/activate NAME`; a runner
// command (`conda run -n NAME`, `pixi run -e NAME`) does the same.
func TestTheEnvironmentAnEntrypointScriptActivates(t *testing.T) {
	files := map[string]string{
		"usr/bin/python3.12":                     "",
		"usr/bin/python3":                        "->python3.12",
		"opt/venv/pyvenv.cfg":                    "home = /usr/bin\ninclude-system-site-packages = false\n",
		"opt/venv/bin/python":                    "->/usr/bin/python3.12",
		"opt/venv/lib/python3.12/site-packages/": "",
		"app/.venv/pyvenv.cfg":                   "home = /usr/bin\nimplementation = CPython\nuv = 0.9.5\nversion_info = 3.12.3\ninclude-system-site-packages = false\n",
		"app/.venv/bin/python":                   "->/usr/bin/python3.12",
		"opt/conda/conda-meta/":                  "",
		"opt/conda/bin/python3.11":               "",
		"opt/conda/envs/train/conda-meta/":       "",
		"opt/conda/envs/train/bin/python3.11":    "",
		"opt/conda/envs/train/bin/python":        "->python3.11",
		"app/.pixi/envs/default/conda-meta/":     "",
		"app/.pixi/envs/default/bin/python3.12":  "",
		"app/.pixi/envs/default/bin/python":      "->python3.12",
		"app/.pixi/envs/prod/conda-meta/":        "",
		"app/.pixi/envs/prod/bin/python3.12":     "",
		"app/.pixi/envs/prod/bin/python":         "->python3.12",
		"app/entrypoint.sh":                      "#!/bin/bash\nexport PATH=\"/app/.pixi/envs/prod/bin:/usr/local/bin:/usr/bin:/bin\"\nexport CONDA_PREFIX=\"/app/.pixi/envs/prod\"\nexport PIXI_ENVIRONMENT_NAME=\"prod\"\nexport PATH=/usr/local/nvidia/bin:$PATH\nexec \"$@\"\n",
		"usr/local/bin/venv-entrypoint.sh":       "#!/bin/sh\nset -e\n. /opt/venv/bin/activate\nexec \"$@\"\n",
		"usr/local/bin/conda-entrypoint.sh":      "#!/bin/bash\nsource /opt/conda/etc/profile.d/conda.sh\nconda activate train\nexec \"$@\"\n",
		"usr/local/bin/micromamba-entrypoint.sh": "#!/bin/bash\neval \"$(micromamba shell hook --shell bash)\"\nmicromamba activate \"${ENV_NAME}\"\nexec \"$@\"\n",
	}
	r := root(t, files)
	env := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"}
	for _, tc := range []struct {
		argv      []string
		want, how string
	}{
		{[]string{"/app/entrypoint.sh", "python", "-m", "my_project"}, "/app/.pixi/envs/prod/bin/python", "/app/entrypoint.sh's `export CONDA_PREFIX=\"/app/.pixi/envs/prod\"`"},
		{[]string{"venv-entrypoint.sh", "python", "train.py"}, "/opt/venv/bin/python", "`. /opt/venv/bin/activate`"},
		{[]string{"conda-entrypoint.sh", "python", "train.py"}, "/opt/conda/envs/train/bin/python", "`conda activate train`"},
		{[]string{"bash", "-c", "source /opt/conda/bin/activate train && python train.py"}, "/opt/conda/envs/train/bin/python", "the -c script of bash, python"},
		{[]string{"/bin/bash", "--login", "/usr/local/bin/conda-entrypoint.sh", "python", "train.py"}, "/opt/conda/envs/train/bin/python", "`conda activate train`"},
		{[]string{"micromamba-entrypoint.sh", "python3", "train.py"}, "/usr/bin/python3", "python3 on PATH"},
		{[]string{"conda", "run", "--no-capture-output", "-n", "train", "python", "train.py"}, "/opt/conda/envs/train/bin/python", "the command's `conda run`"},
		{[]string{"micromamba", "run", "-p", "/opt/conda/envs/train", "python", "train.py"}, "/opt/conda/envs/train/bin/python", "the command's `micromamba run`"},
		{[]string{"pixi", "run", "-e", "prod", "python", "-m", "my_project"}, "/app/.pixi/envs/prod/bin/python", "the command's `pixi run`"},
		{[]string{"pixi", "run", "python", "-m", "my_project"}, "/app/.pixi/envs/default/bin/python", "the command's `pixi run`"},
		{[]string{"uv", "run", "--frozen", "python", "train.py"}, "/app/.venv/bin/python", "the command's `uv run`"},
	} {
		wantChoice(t, r, env, tc.argv, tc.want, tc.how)
	}
}

// wantChoice holds Choose of argv, among the environments Find builds for
// it, to the interpreter want, chosen as how (a substring) says.
func wantChoice(t *testing.T, r fsroot.Root, env map[string]string, argv []string, want, how string) {
	t.Helper()
	c := Choose(r, env, Find(r, env, argv...).Environments, argv)
	if c.Interpreter != want || !strings.Contains(c.How, how) {
		t.Errorf("Choose(%q) = %q (%s), want %q (%s)", argv, c.Interpreter, c.How, want, how)
	}
}

// What the record keeps of an activating statement is the activation, not
// the rest of what the statement sets.
func TestTheRecordKeepsOnlyTheActivatingWords(t *testing.T) {
	r := root(t, map[string]string{
		"usr/bin/python3.12":  "",
		"opt/venv/pyvenv.cfg": "home = /usr/bin\ninclude-system-site-packages = false\n",
		"opt/venv/bin/python": "->/usr/bin/python3.12",
	})
	argv := []string{"sh", "-c", "export VIRTUAL_ENV=/opt/venv HF_TOKEN=hf_example && python train.py"}
	env := map[string]string{"PATH": "/usr/bin:/bin"}
	c := Choose(r, env, Find(r, env, argv...).Environments, argv)
	if c.Interpreter != "/opt/venv/bin/python" || strings.Contains(c.How, "HF_TOKEN") {
		t.Errorf("Choose = %q (%s), want the venv's python and no other assignment", c.Interpreter, c.How)
	}
}
