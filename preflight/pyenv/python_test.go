package pyenv

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// pythons are the real interpreters this machine has, outside any shim:
// Debian's (patched site.py, dist-packages), a python.org build in
// /usr/local, and the newest of pyenv's builds.
func pythons(t *testing.T) []string {
	var out []string
	candidates := []string{"/usr/bin/python3", "/usr/local/bin/python3"}
	// pyenv's python.org builds, where this machine has them.
	if m, _ := filepath.Glob("/root/.pyenv/versions/3.1[0-9]*/bin/python3"); len(m) > 0 {
		candidates = append(candidates, m[len(m)-1])
	}
	for _, p := range candidates {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("no python3 in /usr/bin or /usr/local/bin: install python3 (apt-get install python3)")
		}
		t.Skip("no python3 in /usr/bin or /usr/local/bin to compare the model with")
	}
	return out
}

// realSysPath runs python and returns its sys.path without the standard
// library (the zip, lib/pythonX.Y, lib-dynload) and the script directory.
func realSysPath(t *testing.T, python string, env []string) []string {
	t.Helper()
	cmd := exec.Command(python, "-c", "import json, sys, sysconfig; print(json.dumps([sys.path, sysconfig.get_paths()['stdlib'], sysconfig.get_paths()['platstdlib']]))")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", python, err)
	}
	var got []json.RawMessage
	if err := json.Unmarshal(out, &got); err != nil || len(got) != 3 {
		t.Fatalf("%s printed %q", python, out)
	}
	var path []string
	var stdlib, platstdlib string
	_ = json.Unmarshal(got[0], &path)
	_ = json.Unmarshal(got[1], &stdlib)
	_ = json.Unmarshal(got[2], &platstdlib)
	var keep []string
	for _, d := range path {
		if d == "" || d == stdlib || d == platstdlib || strings.HasSuffix(d, "/lib-dynload") || strings.HasSuffix(d, ".zip") {
			continue
		}
		keep = append(keep, d)
	}
	return keep
}

// The model's sys.path is the real interpreter's: venvs with and without
// the system site, PYTHONPATH, the user site, .pth path lines in sorted
// order, easy_install's egg insert, and import lines that are skipped.
func TestModelMatchesTheRealInterpreter(t *testing.T) {
	for _, python := range pythons(t) {
		for _, system := range []bool{false, true} {
			dir := t.TempDir()
			venv := filepath.Join(dir, "venv")
			args := []string{"-m", "venv", "--without-pip"}
			if system {
				args = append(args, "--system-site-packages")
			}
			if out, err := exec.Command(python, append(args, venv)...).CombinedOutput(); err != nil {
				t.Fatalf("%s -m venv: %v\n%s", python, err, out)
			}
			e, ok := ForInterpreter(fsroot.Root(""), nil, filepath.Join(venv, "bin/python3"))
			if !ok {
				t.Fatalf("%s: no environment for the venv", python)
			}
			sp := filepath.Join(venv, "lib", "python"+e.Version, "site-packages")
			for _, d := range []string{"pp", "src/a", "src/b", "ub/lib/python" + e.Version + "/site-packages"} {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			egg := filepath.Join(sp, "x-1.0-py"+e.Version+".egg")
			if err := os.MkdirAll(egg, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, content := range map[string]string{
				"b.pth":            dir + "/src/b\n# comment\n" + dir + "/src/a\n",
				"a.pth":            dir + "/src/a\n" + dir + "/missing\nimport os\n",
				"easy-install.pth": "import sys; sys.__plen = len(sys.path)\n./x-1.0-py" + e.Version + ".egg\nimport sys; new = sys.path[sys.__plen:]; del sys.path[sys.__plen:]; p = getattr(sys, '__egginsert', 0); sys.path[p:p] = new; sys.__egginsert = p + len(new)\n",
			} {
				if err := os.WriteFile(filepath.Join(sp, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"PYTHONPATH": dir + "/pp", "PYTHONUSERBASE": dir + "/ub"}
			e, _ = ForInterpreter(fsroot.Root(""), env, filepath.Join(venv, "bin/python3"))
			var model []string
			for _, en := range e.Path {
				if en.Only == nil {
					model = append(model, en.Dir)
				}
			}
			real := realSysPath(t, filepath.Join(venv, "bin/python3"), []string{"PYTHONPATH=" + dir + "/pp", "PYTHONUSERBASE=" + dir + "/ub", "PATH=/usr/bin:/bin"})
			if !slices.Equal(model, real) {
				t.Errorf("%s venv (system site %v):\nmodel %q\nreal  %q", python, system, model, real)
			}
		}
	}
}

// modelImport is where the model imports top-level package name from:
// the first entry holding it, an editable finder's after sys.path.
func modelImport(e Environment, name string) string {
	for _, en := range e.Path {
		if en.Only != nil && !slices.Contains(en.Only, name) {
			continue
		}
		if fi, err := os.Stat(filepath.Join(en.Dir, name)); err == nil && fi.IsDir() {
			return filepath.Join(en.Dir, name)
		}
	}
	return ""
}

// A PEP 660 editable install made by pip with the machine's setuptools
// (its editable_wheel finder and MAPPING) and a `setup.py develop`
// (egg-link and easy-install.pth) are imported from where the real
// interpreter imports them.
func TestEditableInstallsFromRealSetuptoolsAndPip(t *testing.T) {
	python := "/usr/bin/python3"
	if out, err := exec.Command(python, "-c", "import setuptools, pip").CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s has no setuptools or pip (%s): make deps installs python3-setuptools and python3-pip", python, out)
		}
		t.Skipf("%s has no setuptools or pip: %s", python, out)
	}
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "PIP_NO_INDEX=1", "PIP_DISABLE_PIP_VERSION_CHECK=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %q: %v\n%s", name, args, err, out)
		}
	}
	write := func(p, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(python, "-m", "venv", "--without-pip", "--system-site-packages", venv)
	write("proj/pyproject.toml", "[build-system]\nrequires = [\"setuptools>=64\"]\nbuild-backend = \"setuptools.build_meta\"\n[project]\nname = \"mytorch\"\nversion = \"2.5.0\"\n[tool.setuptools]\npackages = [\"mytorch\"]\n")
	write("proj/mytorch/__init__.py", "")
	write("proj/mytorch/version.py", "__version__ = '2.5.0'\ncuda = '12.4'\n")
	run(venv+"/bin/python", "-m", "pip", "install", "--no-build-isolation", "--no-deps", "-e", "./proj")
	write("dev/setup.py", "from setuptools import setup\nsetup(name='apex', version='0.1', packages=['apex'])\n")
	write("dev/apex/__init__.py", "")
	cmd := exec.Command(venv+"/bin/python", "setup.py", "develop", "--no-deps")
	cmd.Dir = filepath.Join(dir, "dev")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("setup.py develop: %v\n%s", err, out)
	}
	e, ok := ForInterpreter(fsroot.Root(""), nil, venv+"/bin/python3")
	if !ok {
		t.Fatal("no environment for the venv")
	}
	for _, pkg := range []string{"mytorch", "apex"} {
		out, err := exec.Command(venv+"/bin/python", "-c", "import os, "+pkg+"; print(os.path.dirname("+pkg+".__file__))").Output()
		if err != nil {
			t.Fatalf("import %s: %v", pkg, err)
		}
		if real, model := strings.TrimSpace(string(out)), modelImport(e, pkg); model != real {
			t.Errorf("%s: the model imports it from %q, the interpreter from %q (path %+v)", pkg, model, real, e.Path)
		}
	}
	if len(e.EggLinks) != 1 || e.EggLinks[0].Dir != filepath.Join(dir, "dev") {
		t.Errorf("egg-links %+v, want the develop checkout", e.EggLinks)
	}
}

// The real pip installs a console script into a venv whose path is too long
// for a #! line (pypa/distlib's _build_shebang, > 127 bytes) as a
// "#!/bin/sh" script that execs the venv's python from its second line; the
// command that runs it runs that venv's Python, which Find then builds.
func TestRealPipsLauncherForALongVenvPathNamesItsPython(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import pip").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s with pip is needed (apt-get install python3-pip): %v", python, err)
		}
		t.Skipf("no %s with pip: %v", python, err)
	}
	dir := t.TempDir()
	venv := filepath.Join(dir, strings.Repeat("long-prefix-", 12), "venv")
	whl := filepath.Join(dir, "standin-1.0-py3-none-any.whl")
	writeWheel(t, whl, map[string]string{
		"standin.py":                             "def main():\n    pass\n",
		"standin-1.0.dist-info/METADATA":         "Metadata-Version: 2.1\nName: standin\nVersion: 1.0\n",
		"standin-1.0.dist-info/WHEEL":            "Wheel-Version: 1.0\nGenerator: gpu-preflight test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
		"standin-1.0.dist-info/entry_points.txt": "[console_scripts]\ntorchrun = standin:main\n",
	})
	for _, args := range [][]string{
		{"-m", "venv", "--without-pip", venv},
		{"-m", "pip", "--python", filepath.Join(venv, "bin/python"), "install", "--no-index", "--no-deps", whl},
	} {
		if out, err := exec.Command(python, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %q: %v\n%s", python, args, err, out)
		}
	}
	script := filepath.Join(venv, "bin/torchrun")
	head, err := os.ReadFile(script)
	if err != nil || !strings.HasPrefix(string(head), "#!/bin/sh\n'''exec' ") {
		t.Fatalf("pip wrote %q (%v), not distlib's launcher", head, err)
	}
	env := map[string]string{"PATH": "/usr/bin:/bin"}
	argv := []string{script, "--nproc-per-node=8", "train.py"}
	envs := Find(fsroot.Root(""), env, argv...).Environments
	c := Choose(fsroot.Root(""), env, envs, argv)
	if c.Interpreter != filepath.Join(venv, "bin/python") || !strings.Contains(c.How, "'exec' line of "+script) {
		t.Errorf("Choose = %q (%s), want the venv's python from the launcher", c.Interpreter, c.How)
	}
	if !slices.ContainsFunc(envs, func(e Environment) bool { return e.Prefix == venv && e.Kind == KindVenv }) {
		t.Errorf("the venv is not among the environments found for the command")
	}
}

// writeWheel zips files into a wheel at p, with the RECORD pip checks.
func writeWheel(t *testing.T, p string, files map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	var record strings.Builder
	for name, content := range files {
		w, err := z.Create(name)
		if err == nil {
			_, err = w.Write([]byte(content))
		}
		if err != nil {
			t.Fatal(err)
		}
		record.WriteString(name + ",,\n")
	}
	dist := strings.SplitN(filepath.Base(p), "-", 3)
	w, err := z.Create(dist[0] + "-" + dist[1] + ".dist-info/RECORD")
	if err == nil {
		_, err = w.Write([]byte(record.String() + dist[0] + "-" + dist[1] + ".dist-info/RECORD,,\n"))
	}
	if err == nil {
		err = z.Close()
	}
	if err == nil {
		err = os.WriteFile(p, buf.Bytes(), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}
