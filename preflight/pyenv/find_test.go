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
func root(t *testing.T, files map[string]string) fsroot.Root {
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
	if len(res.Environments) > MaxEnvironments {
		t.Errorf("%d environments", len(res.Environments))
	}
}

// The interpreter a command runs: argv[0] when it is a Python, a script's
// #! interpreter, else python3 on PATH.
func TestInterpreterOfTheCommand(t *testing.T) {
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
		if got, how, ok := Interpreter(r, env, tc.argv); !ok || got != tc.want {
			t.Errorf("Interpreter(%q) = %q (%s) %v, want %q", tc.argv, got, how, ok, tc.want)
		}
	}
}
