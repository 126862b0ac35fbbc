package pyenv

import (
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
