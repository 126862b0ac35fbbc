package pyenv

import (
	"bytes"
	"encoding/json"
	"path"
	"strings"
	"unicode/utf8"
)

// PyvenvCfg is what a venv's pyvenv.cfg says to site.py: home, the base
// interpreter's directory; include-system-site-packages, true only for
// "true" (any case) or when missing; version or version_info (uv).
type PyvenvCfg struct {
	Home              string
	IncludeSystemSite bool
	Version           string
}

// ParsePyvenvCfg reads pyvenv.cfg as CPython's Lib/site.py venv() does;
// the last line of a key wins.
func ParsePyvenvCfg(src []byte) PyvenvCfg {
	c := PyvenvCfg{IncludeSystemSite: true}
	for line := range bytes.Lines(src) {
		k, v, ok := bytes.Cut(line, []byte("="))
		if !ok {
			continue
		}
		key := strings.ToLower(strings.TrimSpace(string(k)))
		val := strings.TrimSpace(string(v))
		switch key {
		case "include-system-site-packages":
			c.IncludeSystemSite = strings.ToLower(val) == "true"
		case "home":
			c.Home = val
		case "version", "version_info":
			c.Version = val
		}
	}
	return c
}

// PthLine is one meaningful line of a .pth file: the directory a path line
// names (absolute, as site.py's makepath makes it), or an import line
// (never run) and the editable finder module it installs, if any.
type PthLine struct {
	Dir, Import, Finder string
	Line                int
}

// MaxPthLines bounds the lines read of one .pth file.
const MaxPthLines = 4096

// ParsePth reads a .pth file in sitedir as site.py's addpackage does: "#"
// lines are skipped, "import" lines are code, any other line is a path
// joined to sitedir. Past MaxPthLines lines it reports truncated.
func ParsePth(src []byte, sitedir string) (lines []PthLine, truncated bool) {
	n := 0
	for raw := range bytes.Lines(src) {
		n++
		if n > MaxPthLines {
			return lines, true
		}
		if bytes.HasPrefix(raw, []byte("#")) {
			continue
		}
		if bytes.HasPrefix(raw, []byte("import ")) || bytes.HasPrefix(raw, []byte("import\t")) {
			s := strings.TrimSpace(string(raw))
			lines = append(lines, PthLine{Import: s, Finder: editableFinder(s), Line: n})
			continue
		}
		s := strings.TrimRight(string(raw), " \t\r\n\v\f")
		if s == "" || strings.ContainsRune(s, 0) || !utf8.ValidString(s) {
			continue
		}
		dir := s
		if !strings.HasPrefix(dir, "/") {
			dir = path.Join(sitedir, dir)
		}
		lines = append(lines, PthLine{Dir: path.Clean(dir), Line: n})
	}
	return lines, false
}

// editableFinder returns the module an import line of setuptools'
// editable_wheel loads: "import __editable___<name>_<version>_finder; ...".
func editableFinder(line string) string {
	rest, _ := strings.CutPrefix(line, "import")
	rest = strings.TrimLeft(rest, " \t")
	end := strings.IndexFunc(rest, func(r rune) bool { return !isIdent(r) })
	mod := rest
	if end >= 0 {
		mod = rest[:end]
	}
	if strings.HasPrefix(mod, "__editable__") && strings.HasSuffix(mod, "_finder") {
		return mod
	}
	return ""
}

func isIdent(r rune) bool {
	return r == '_' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
}

// ParseEggLink returns the importable directory a .egg-link file of
// setuptools' develop names: its first line, an absolute path, joined with
// its second ("." or "src"); "" when there is none.
func ParseEggLink(src []byte) string {
	first, rest, _ := bytes.Cut(src, []byte("\n"))
	dir := strings.TrimSpace(string(first))
	if !strings.HasPrefix(dir, "/") || strings.ContainsRune(dir, 0) || !utf8.ValidString(dir) {
		return ""
	}
	second, _, _ := bytes.Cut(rest, []byte("\n"))
	if rel := strings.TrimSpace(string(second)); rel != "" && !strings.HasPrefix(rel, "/") && utf8.ValidString(rel) {
		return path.Clean(path.Join(dir, rel))
	}
	return path.Clean(dir)
}

// Mapping is a top-level package and the directory it is imported from.
type Mapping struct {
	Name, Dir string
}

// MaxMappings bounds the entries read of one MAPPING.
const MaxMappings = 256

// ParseFinderMapping reads the MAPPING setuptools' _FINDER_TEMPLATE writes
// into an editable finder module, the repr of a dict of strings, leaving out
// relative directories; ok is false for no MAPPING or another type.
func ParseFinderMapping(src []byte) (out []Mapping, ok bool) {
	m, found := ModuleAssignments(src)["MAPPING"]
	if !found || m.kind != litDict {
		return nil, false
	}
	for _, pair := range m.items {
		name, isStr := pair.items[0].Str()
		dir, isStrToo := pair.items[1].Str()
		if !isStr || !isStrToo {
			return nil, false
		}
		if strings.HasPrefix(dir, "/") && len(out) < MaxMappings {
			out = append(out, Mapping{Name: name, Dir: path.Clean(dir)})
		}
	}
	return out, true
}

// CondaPackage is one package conda installed, from its conda-meta record.
type CondaPackage struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Build   string `json:"build"`
}

// ParseCondaMeta reads a conda-meta record (conda's PrefixRecord); ok is
// false without a name or a version.
func ParseCondaMeta(src []byte) (CondaPackage, bool) {
	var p CondaPackage
	if err := json.Unmarshal(src, &p); err != nil || p.Name == "" || p.Version == "" {
		return CondaPackage{}, false
	}
	return p, true
}

// CondaMetaName splits a conda-meta file name, "<name>-<version>-<build>.json"
// (neither version nor build holds a "-"), to choose a record unopened.
func CondaMetaName(file string) (name, version string, ok bool) {
	base, ok := strings.CutSuffix(file, ".json")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(base, '-')
	if i <= 0 {
		return "", "", false
	}
	j := strings.LastIndexByte(base[:i], '-')
	if j <= 0 || j+1 == i {
		return "", "", false
	}
	return base[:j], base[j+1 : i], true
}

// Shebang is a script's interpreter; ViaEnv: a name /usr/bin/env looks up.
type Shebang struct {
	Interpreter string
	ViaEnv      bool
}

// ParseShebang reads the "#!" line at the start of src as the kernel's
// binfmt_script does, following /usr/bin/env (not its -S form).
func ParseShebang(src []byte) (Shebang, bool) {
	rest, ok := bytes.CutPrefix(src, []byte("#!"))
	if !ok {
		return Shebang{}, false
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) == 0 || !strings.HasPrefix(f[0], "/") {
		return Shebang{}, false
	}
	if path.Base(f[0]) == "env" {
		if len(f) < 2 || strings.HasPrefix(f[1], "-") {
			return Shebang{}, false
		}
		return Shebang{Interpreter: f[1], ViaEnv: true}, true
	}
	return Shebang{Interpreter: path.Clean(f[0])}, true
}

const relocated = `"$(dirname -- "$(realpath -- "$0")")"/`

// ParseExecTrampoline reads the Python a "#!/bin/sh" console script execs
// from its second line (pypa/distlib's _build_shebang, uv's relocatable
// venvs; dirRel: beside the script).
func ParseExecTrampoline(src []byte) (interpreter string, dirRel, ok bool) {
	_, rest, _ := bytes.Cut(src, []byte("\n"))
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	word, found := strings.CutPrefix(string(line), "'''exec' ")
	if !found {
		return "", false, false
	}
	word, dirRel = strings.CutPrefix(word, relocated)
	if word == "" {
		return "", false, false
	}
	if q := word[0]; q == '"' || q == '\'' {
		var closed bool
		word, _, closed = strings.Cut(word[1:], string(q))
		if !closed {
			return "", false, false
		}
	} else {
		word, _, _ = strings.Cut(word, " ")
	}
	if word == "" || dirRel == strings.HasPrefix(word, "/") || strings.ContainsAny(word, "$`") {
		return "", false, false
	}
	return word, dirRel, true
}

// IsPythonName reports whether a file name is a CPython interpreter's:
// python, python3, python3.11, python3.13t, python3.11d, python3.13td.
func IsPythonName(name string) bool {
	if name == "python" || name == "python3" {
		return true
	}
	_, _, ok := PythonVersion(name)
	return ok
}

// PythonVersion reads X.Y from a versioned interpreter's or lib directory's
// name, "python3.13t" -> "3.13" and free-threaded (sys.abiflags' "t").
func PythonVersion(name string) (xy string, freeThreaded, ok bool) {
	rest, found := strings.CutPrefix(name, "python3.")
	if !found {
		return "", false, false
	}
	rest = strings.TrimSuffix(rest, "d")
	rest, freeThreaded = strings.CutSuffix(rest, "t")
	if rest == "" || strings.Trim(rest, "0123456789") != "" {
		return "", false, false
	}
	return "3." + rest, freeThreaded, true
}
