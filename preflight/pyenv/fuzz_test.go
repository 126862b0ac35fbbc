package pyenv

import (
	"path"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

func FuzzParsePyvenvCfg(f *testing.F) {
	f.Add([]byte(seedVenvCfg))
	f.Add([]byte(seedUvCfg))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := ParsePyvenvCfg(b)
		if strings.ContainsAny(c.Home, "\n") {
			t.Errorf("home spans lines: %q", c.Home)
		}
	})
}

func FuzzParsePth(f *testing.F) {
	f.Add([]byte(seedEasyInstall))
	f.Add([]byte(seedEditablePth))
	f.Add([]byte("/src/project/src\n")) // hatchling's _<name>.pth
	f.Fuzz(func(t *testing.T, b []byte) {
		lines, _ := ParsePth(b, "/sp")
		if len(lines) > MaxPthLines {
			t.Fatalf("%d lines", len(lines))
		}
		for _, l := range lines {
			if l.Dir != "" && !strings.HasPrefix(l.Dir, "/") {
				t.Errorf("relative dir %q", l.Dir)
			}
		}
	})
}

func FuzzParseEggLink(f *testing.F) {
	f.Add([]byte(seedEggLink))
	f.Fuzz(func(t *testing.T, b []byte) {
		if d := ParseEggLink(b); d != "" && !strings.HasPrefix(d, "/") {
			t.Errorf("relative %q", d)
		}
	})
}

func FuzzParseFinderMapping(f *testing.F) {
	f.Add([]byte(seedFinder))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, _ := ParseFinderMapping(b)
		if len(m) > MaxMappings {
			t.Fatalf("%d mappings", len(m))
		}
		for _, e := range m {
			if !strings.HasPrefix(e.Dir, "/") {
				t.Errorf("relative %q", e.Dir)
			}
		}
	})
}

func FuzzParseCondaMeta(f *testing.F) {
	f.Add([]byte(seedCondaMeta))
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, ok := ParseCondaMeta(b); ok && (p.Name == "" || p.Version == "") {
			t.Errorf("ok without name or version: %+v", p)
		}
	})
}

func FuzzParseShebang(f *testing.F) {
	f.Add([]byte("#!/opt/venv/bin/python3\n"))
	f.Add([]byte("#!/usr/bin/env python3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, ok := ParseShebang(b); ok && s.Interpreter == "" {
			t.Error("ok without an interpreter")
		}
	})
}

func FuzzPythonVersion(f *testing.F) {
	for _, s := range []string{"python3.13t", "python3.11", "python3.11d", "python3.13td", "python3", "python3.x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		v, _, ok := PythonVersion(name)
		if ok != strings.HasPrefix(v, "3.") || ok && strings.Trim(v[2:], "0123456789") != "" {
			t.Errorf("%q: %q %v", name, v, ok)
		}
	})
}

// A shell script's activation and the words of its first program are read
// from any bytes: every prefix found is a clean absolute path, and the words
// come from the script.
func FuzzShellScriptActivation(f *testing.F) {
	f.Add("#!/bin/bash\nexport PATH=\"/app/.pixi/envs/prod/bin:/usr/bin\"\nexport CONDA_PREFIX=\"/app/.pixi/envs/prod\"\nexec \"$@\"\n")
	f.Add("#!/bin/sh\nset -e\n. /opt/venv/bin/activate\nexec \"$@\"\n")
	f.Add("source /opt/conda/bin/activate train && NCCL_DEBUG=INFO exec python train.py")
	f.Add("eval \"$(micromamba shell hook --shell bash)\"\nmicromamba activate \"${ENV_NAME}\"\n")
	f.Add("conda run --no-capture-output -n train python train.py\npixi run -e prod python -m app\n")
	fd := &finder{root: fsroot.Root(f.TempDir()), env: map[string]string{}, seen: map[string]bool{}, read: map[string]bool{}}
	f.Fuzz(func(t *testing.T, script string) {
		if words, ok := shellScript([]string{"sh", "-c", script}); ok && (len(words) == 0 || !strings.Contains(script, words[0])) {
			t.Errorf("words %q from %q", words, script)
		}
		for line := range strings.Lines(script) {
			words := strings.Fields(line)
			for _, p := range append(fd.activation(words), fd.runIn(words)...) {
				if !strings.HasPrefix(p, "/") || path.Clean(p) != p {
					t.Errorf("prefix %q from %q", p, line)
				}
			}
		}
	})
}

func FuzzParseExecTrampoline(f *testing.F) {
	f.Add([]byte("#!/bin/sh\n'''exec' '/usr/bin/path to python3' \"$0\" \"$@\"\n' '''\n"))
	f.Add([]byte("#!/bin/sh\n'''exec' \"$(dirname -- \"$(realpath -- \"$0\")\")\"/'python3' \"$0\" \"$@\"\n' '''\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, rel, ok := ParseExecTrampoline(b); ok && (p == "" || rel == strings.HasPrefix(p, "/")) {
			t.Errorf("%q: %q relative %v", b, p, rel)
		}
	})
}
