package pyenv

import (
	"bytes"
	"encoding/json"
	"path"
	"strings"
	"unicode/utf8"
)

// The parsers in this file are pure: bytes in, facts out. Find does the
// reading. What each format is, and where it is defined, is in
// docs/python-environments.md.

// PyvenvCfg is what a virtual environment's pyvenv.cfg says to site.py.
type PyvenvCfg struct {
	// Home is the directory of the base interpreter the venv was made
	// from ("/usr/bin", "/usr/local/bin"); "" when not written.
	Home string
	// IncludeSystemSite is include-system-site-packages: site.py adds the
	// base interpreter's site-packages only when its value, lower-cased,
	// is exactly "true", and that is also the default when the key is
	// missing.
	IncludeSystemSite bool
	// Version is "version" (venv) or "version_info" (uv, virtualenv):
	// "3.11.2"; "" when neither is written.
	Version string
}

// ParsePyvenvCfg reads pyvenv.cfg as CPython's Lib/site.py venv() does:
// each line holding "=" is split at the first one, the key stripped and
// lower-cased, the value stripped; the last line of a key wins.
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

// PthLine is one meaningful line of a .pth file.
type PthLine struct {
	// Dir is the directory a path line names, made absolute against the
	// site directory as site.py's makepath does; "" for an import line.
	Dir string
	// Import is the text of an "import" line, which site.py executes and
	// this model does not.
	Import string
	// Finder is the module an import line installs as an editable-install
	// finder ("__editable___torch_2_5_0_finder" for setuptools' PEP 660
	// installs); "" when the import is anything else.
	Finder string
	// Line is the 1-based line number, for messages.
	Line int
}

// MaxPthLines bounds the lines read of one .pth file. Real ones hold one
// line (a distribution's own .pth, an editable install) up to a few
// hundred (easy-install.pth of an old image with many eggs).
const MaxPthLines = 4096

// ParsePth reads a .pth file in site directory sitedir as site.py's
// addpackage does: a line starting with "#" is skipped; one starting with
// "import " or "import\t" is code (returned as Import, never run); any
// other line, its trailing whitespace removed, is a path joined to
// sitedir. A blank line names sitedir itself, which is already on
// sys.path, and is left out. At most MaxPthLines lines are read; more is
// reported by truncated.
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

// editableFinder returns the module an import line of a setuptools
// editable install loads: setuptools' editable_wheel writes
// "import __editable___<name>_<version>_finder; __editable___..._finder.install()".
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

// ParseEggLink reads a .egg-link file, which setuptools' develop command
// writes: the project's directory on the first line, the relative path
// from it to the importable root ("." or "src") on the second. It returns
// the directory that is importable; "" when the first line is not an
// absolute path.
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

// Mapping is one entry of an editable finder's MAPPING: a top-level
// package name and the directory it is imported from.
type Mapping struct {
	Name, Dir string
}

// MaxMappings bounds the entries read of one MAPPING (a project has a
// handful of top-level packages).
const MaxMappings = 256

// ParseFinderMapping reads the MAPPING of a setuptools editable finder
// module (__editable___<name>_<version>_finder.py), which setuptools'
// _FINDER_TEMPLATE writes as the repr of a dict of strings:
//
//	MAPPING: dict[str, str] = {'torch': '/src/pytorch/torch'}
//
// Entries whose directory is not absolute are left out. ok is false when
// there is no MAPPING or it is not a dict of strings.
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

// CondaPackage is one package conda installed in a prefix, from its
// conda-meta/<name>-<version>-<build>.json record.
type CondaPackage struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Build   string `json:"build"`
}

// ParseCondaMeta reads a conda-meta record's name, version and build
// (conda's PrefixRecord: the package's index.json fields plus the files
// it installed, which are not read). ok is false when the record is not
// JSON or lacks a name or a version.
func ParseCondaMeta(src []byte) (CondaPackage, bool) {
	var p CondaPackage
	if err := json.Unmarshal(src, &p); err != nil || p.Name == "" || p.Version == "" {
		return CondaPackage{}, false
	}
	return p, true
}

// CondaMetaName splits a conda-meta file name, "<name>-<version>-<build>.json"
// (conda names a package's record by its dist string, and neither a
// version nor a build string holds a "-"), so that a record is chosen
// without opening every file.
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

// Shebang is the interpreter line of a script: "#!/opt/venv/bin/python3"
// or "#!/usr/bin/env python3".
type Shebang struct {
	// Interpreter is the program the kernel runs ("/usr/bin/env" is
	// followed: then Interpreter is the name env looks up on PATH).
	Interpreter string
	// ViaEnv is true when the line ran /usr/bin/env, so Interpreter is a
	// name to look up on PATH.
	ViaEnv bool
}

// ParseShebang reads the "#!" line at the start of src, as the kernel's
// binfmt_script does: the interpreter is the first word after "#!", and
// the rest of the line is one optional argument; /usr/bin/env's argument
// is the program it runs (its -S form is not followed).
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

// IsPythonName reports whether a program's file name is a CPython
// interpreter's: "python", "python3", "python3.11" (and a debug "python3.11d").
func IsPythonName(name string) bool {
	rest, ok := strings.CutPrefix(name, "python")
	if !ok {
		return false
	}
	if rest == "" || rest == "3" {
		return true
	}
	rest, ok = strings.CutPrefix(rest, "3.")
	rest = strings.TrimSuffix(rest, "d")
	return ok && rest != "" && strings.Trim(rest, "0123456789") == ""
}
