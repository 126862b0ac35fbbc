package pyenv

import (
	"strings"
	"testing"
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
