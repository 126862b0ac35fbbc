package pyenv

import (
	"slices"
	"strings"
	"testing"
)

// Real inputs, each as its writer lays it out (docs/python-environments.md
// names the writers).
var (
	// CPython Lib/venv/__init__.py create_configuration: home, then
	// include-system-site-packages, version, executable, command.
	seedVenvCfg = "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\nexecutable = /usr/bin/python3.11\ncommand = /usr/bin/python3 -m venv /opt/venv\n"
	// uv's venv writes version_info and its own keys.
	seedUvCfg = "home = /usr/local/bin\nimplementation = CPython\nuv = 0.4.18\nversion_info = 3.12.7\ninclude-system-site-packages = false\nprompt = app\n"
	// setuptools' easy_install easy-install.pth (setup.py install/develop).
	seedEasyInstall = "import sys; sys.__plen = len(sys.path)\n./torch-2.1.0-py3.10-linux-x86_64.egg\n/src/apex\nimport sys; new = sys.path[sys.__plen:]; del sys.path[sys.__plen:]; p = getattr(sys, '__egginsert', 0); sys.path[p:p] = new; sys.__egginsert = p + len(new)\n"
	// setuptools editable_wheel: the .pth installing a finder.
	seedEditablePth = "import __editable___torch_2_5_0_finder; __editable___torch_2_5_0_finder.install()"
	// setuptools' _FINDER_TEMPLATE MAPPING line.
	seedFinder = "from __future__ import annotations\nimport sys\n\nMAPPING: dict[str, str] = {'torch': '/src/pytorch/torch', 'torchgen': '/src/pytorch/torchgen'}\nNAMESPACES: dict[str, list[str]] = {}\nPATH_PLACEHOLDER = '__editable___torch_2_5_0_finder' + \".__path_hook__\"\n"
	// setuptools develop: <project>.egg-link.
	seedEggLink = "/src/apex\n.\n"
	// conda's conda-meta record (PrefixRecord), trimmed of its files list.
	seedCondaMeta = `{"build": "0", "build_number": 0, "channel": "https://conda.anaconda.org/nvidia/label/cuda-12.1.1/linux-64", "constrains": [], "depends": ["cuda-version >=12.1,<12.2.0a0"], "name": "cuda-cudart", "version": "12.1.105", "files": ["lib/libcudart.so.12", "lib/libcudart.so.12.1.105"]}`
)

func TestPyvenvCfgIncludesTheSystemSiteOnlyForTrue(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{seedVenvCfg, false},
		{"home = /usr/bin\n", true}, // missing key: site.py's default "true"
		{"include-system-site-packages = True\n", true},
		{"Include-System-Site-Packages=TRUE\n", true},
		{"include-system-site-packages = yes\n", false}, // only "true" counts
	} {
		if got := ParsePyvenvCfg([]byte(tc.src)).IncludeSystemSite; got != tc.want {
			t.Errorf("ParsePyvenvCfg(%q).IncludeSystemSite = %v, want %v", tc.src, got, tc.want)
		}
	}
	c := ParsePyvenvCfg([]byte(seedUvCfg))
	if c.Home != "/usr/local/bin" || c.Version != "3.12.7" {
		t.Errorf("uv pyvenv.cfg = %+v", c)
	}
}

func TestPthPathLinesJoinTheSiteDirAndImportsAreNotRun(t *testing.T) {
	lines, trunc := ParsePth([]byte(seedEasyInstall), "/usr/lib/python3.10/site-packages")
	if trunc {
		t.Fatal("truncated")
	}
	var dirs []string
	imports := 0
	for _, l := range lines {
		if l.Dir != "" {
			dirs = append(dirs, l.Dir)
		} else {
			imports++
		}
	}
	want := []string{"/usr/lib/python3.10/site-packages/torch-2.1.0-py3.10-linux-x86_64.egg", "/src/apex"}
	if !slices.Equal(dirs, want) || imports != 2 {
		t.Errorf("dirs %v imports %d, want %v and 2", dirs, imports, want)
	}
	l, _ := ParsePth([]byte(seedEditablePth), "/sp")
	if len(l) != 1 || l[0].Finder != "__editable___torch_2_5_0_finder" {
		t.Errorf("editable .pth = %+v", l)
	}
	if l, _ := ParsePth([]byte("# comment\n\n   \nimportlib\n"), "/sp"); len(l) != 1 || l[0].Dir != "/sp/importlib" {
		t.Errorf("a line starting with \"importlib\" is a path, not an import: %+v", l)
	}
}

func TestPthLinesAreBounded(t *testing.T) {
	src := []byte{}
	for range MaxPthLines + 10 {
		src = append(src, "x\n"...)
	}
	if _, trunc := ParsePth(src, "/sp"); !trunc {
		t.Error("a .pth of more than MaxPthLines lines was not reported truncated")
	}
}

func TestFinderMappingReadsSetuptoolsRepr(t *testing.T) {
	m, ok := ParseFinderMapping([]byte(seedFinder))
	want := []Mapping{{"torch", "/src/pytorch/torch"}, {"torchgen", "/src/pytorch/torchgen"}}
	if !ok || !slices.Equal(m, want) {
		t.Errorf("MAPPING = %v %v, want %v", m, ok, want)
	}
	m, ok = ParseFinderMapping([]byte(`MAPPING: dict[str, str] = {"it's": '/src/a\\b\x41'}` + "\n"))
	if !ok || len(m) != 1 || m[0].Name != "it's" || m[0].Dir != `/src/a\bA` {
		t.Errorf("escapes: %v %v", m, ok)
	}
	if _, ok := ParseFinderMapping([]byte("MAPPING = {'a': \n")); ok {
		t.Error("a broken dict was read")
	}
}

func TestEggLinkNamesTheProjectDirectory(t *testing.T) {
	if got := ParseEggLink([]byte(seedEggLink)); got != "/src/apex" {
		t.Errorf("egg-link = %q", got)
	}
	if got := ParseEggLink([]byte("/src/proj\nsrc\n")); got != "/src/proj/src" {
		t.Errorf("egg-link with src = %q", got)
	}
	if got := ParseEggLink([]byte("relative\n")); got != "" {
		t.Errorf("relative egg-link = %q", got)
	}
}

func TestCondaMetaReadsNameAndVersion(t *testing.T) {
	p, ok := ParseCondaMeta([]byte(seedCondaMeta))
	if !ok || p.Name != "cuda-cudart" || p.Version != "12.1.105" || p.Build != "0" {
		t.Errorf("conda-meta = %+v %v", p, ok)
	}
	n, v, ok := CondaMetaName("cuda-cudart-12.1.105-0.json")
	if !ok || n != "cuda-cudart" || v != "12.1.105" {
		t.Errorf("CondaMetaName = %q %q %v", n, v, ok)
	}
	if _, _, ok := CondaMetaName("history"); ok {
		t.Error("conda-meta/history read as a record")
	}
}

func TestShebangFindsTheInterpreter(t *testing.T) {
	// pip's console-script launcher (distlib ScriptMaker) writes the
	// interpreter's absolute path.
	if s, ok := ParseShebang([]byte("#!/opt/venv/bin/python3\n# -*- coding: utf-8 -*-\nimport re\n")); !ok || s.Interpreter != "/opt/venv/bin/python3" || s.ViaEnv {
		t.Errorf("torchrun shebang = %+v %v", s, ok)
	}
	if s, ok := ParseShebang([]byte("#!/usr/bin/env python3\n")); !ok || s.Interpreter != "python3" || !s.ViaEnv {
		t.Errorf("env shebang = %+v %v", s, ok)
	}
	for _, n := range []string{"python", "python3", "python3.11", "python3.13d"} {
		if !IsPythonName(n) {
			t.Errorf("IsPythonName(%q) = false", n)
		}
	}
	for _, n := range []string{"python3-config", "pythonista", "bash", "python2.7"} {
		if IsPythonName(n) {
			t.Errorf("IsPythonName(%q) = true", n)
		}
	}
}

// Interpreter names as CPython installs them: python3.Y, the free-threaded
// python3.Yt (abiflags "t", Lib/site.py's abi_thread) and debug builds.
func TestPythonVersionReadsTheInterpretersName(t *testing.T) {
	for name, want := range map[string]string{
		"python3.12": "3.12", "python3.13t": "3.13t", "python3.11d": "3.11", "python3.13td": "3.13t",
		"python3": "", "python2.7": "", "python3.x": "", "python3.": "",
	} {
		v, ft, ok := PythonVersion(name)
		if ft {
			v += "t"
		}
		if v != want || ok != (want != "") {
			t.Errorf("%s: %q %v, want %q", name, v, ok, want)
		}
	}
}

// The console scripts pip writes when a #! line cannot hold the path
// (pypa/distlib scripts.py _build_shebang: longer than 127 bytes, or a
// space) and uv writes for a relocatable venv (astral-sh/uv
// crates/uv-install-wheel, format_shebang's tests) start "#!/bin/sh" and
// exec Python from their second line.
func TestExecTrampolineNamesTheInterpreter(t *testing.T) {
	long := "/opt/build/" + strings.Repeat("placeholder_", 12) + "/env/bin/python3.12"
	for _, tc := range []struct {
		src, want string
		rel, ok   bool
	}{
		{"#!/bin/sh\n'''exec' " + long + " \"$0\" \"$@\"\n' '''\n# -*- coding: utf-8 -*-\n", long, false, true},
		{"#!/bin/sh\n'''exec' '/usr/bin/path to python3' \"$0\" \"$@\"\n' '''", "/usr/bin/path to python3", false, true},
		{"#!/bin/sh\n'''exec' \"/opt/my env/bin/python\" \"$0\" \"$@\"\n' '''\n", "/opt/my env/bin/python", false, true},
		{"#!/bin/sh\n'''exec' \"$(dirname -- \"$(realpath -- \"$0\")\")\"/'python3' \"$0\" \"$@\"\n' '''\n", "python3", true, true},
		{"#!/bin/sh\nexec python3 \"$@\"\n", "", false, false},
		{"#!/bin/sh\n'''exec' \"$PYTHON\" \"$0\" \"$@\"\n", "", false, false},
		{"#!/bin/sh\n'''exec' python3 \"$0\" \"$@\"\n", "", false, false},
	} {
		got, rel, ok := ParseExecTrampoline([]byte(tc.src))
		if got != tc.want || rel != tc.rel || ok != tc.ok {
			t.Errorf("%q: %q %v %v, want %q %v %v", tc.src, got, rel, ok, tc.want, tc.rel, tc.ok)
		}
	}
}
