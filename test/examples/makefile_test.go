package examples

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// makeVars reads the variable assignments of the Makefile and mk/*.mk (as
// make includes them): NAME := v, NAME = v, NAME ?= v (first one wins) and
// NAME += v (appends), with backslash continuations. It is enough for the
// build variables; recipes and conditionals are ignored.
func makeVars(t *testing.T) map[string]string {
	t.Helper()
	files := []string{filepath.Join(repo(t), "Makefile")}
	mk, err := filepath.Glob(filepath.Join(repo(t), "mk", "*.mk"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(mk)
	files = append(files, mk...)
	vars := map[string]string{}
	assign := regexp.MustCompile(`^([A-Z_][A-Z0-9_]*)\s*(:=|\?=|\+=|=)\s*(.*)$`)
	for _, f := range files {
		rel, _ := filepath.Rel(repo(t), f)
		lines := strings.Split(readRepoFile(t, rel), "\n")
		for i := 0; i < len(lines); i++ {
			line := lines[i]
			for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
				i++
				line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(lines[i])
			}
			if strings.HasPrefix(line, "\t") {
				continue // a recipe line
			}
			m := assign.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			name, op, value := m[1], m[2], strings.TrimSpace(m[3])
			switch op {
			case "+=":
				vars[name] = strings.TrimSpace(vars[name] + " " + value)
			case "?=":
				if _, ok := vars[name]; !ok {
					vars[name] = value
				}
			default:
				vars[name] = value
			}
		}
	}
	return vars
}

// expandMake expands $(NAME) references with vars, recursively; unknown
// names are left as written, and a variable computed by $(shell ...) (the
// version and commit, overridable on the command line) becomes <NAME>.
func expandMake(s string, vars map[string]string) string {
	ref := regexp.MustCompile(`\$\(([A-Z_][A-Z0-9_]*)\)`)
	for range 10 {
		next := ref.ReplaceAllStringFunc(s, func(m string) string {
			name := m[2 : len(m)-1]
			if v, ok := vars[name]; ok {
				if strings.Contains(v, "$(shell") {
					return "<" + name + ">"
				}
				return v
			}
			return m
		})
		if next == s {
			break
		}
		s = next
	}
	return s
}

// makeRecipe returns the recipe lines of target in Makefile and mk/*.mk.
func makeRecipe(t *testing.T, target string) []string {
	t.Helper()
	files := []string{"Makefile"}
	mk, _ := filepath.Glob(filepath.Join(repo(t), "mk", "*.mk"))
	for _, f := range mk {
		files = append(files, "mk/"+filepath.Base(f))
	}
	for _, f := range files {
		lines := strings.Split(readRepoFile(t, f), "\n")
		for i, line := range lines {
			if !strings.HasPrefix(line, target+":") {
				continue
			}
			var recipe []string
			for _, r := range lines[i+1:] {
				if !strings.HasPrefix(r, "\t") {
					break
				}
				recipe = append(recipe, strings.TrimSpace(r))
			}
			return recipe
		}
	}
	t.Fatalf("no rule for %s in the Makefile or mk/*.mk", target)
	return nil
}

// goBuild is one `go build` command line.
type goBuild struct {
	env      map[string]string // VAR=value words before `go`
	trimpath bool
	tags     []string // sorted
	ldflags  string
	out      string
	pkg      string
}

// parseGoBuild reads a command line such as
// CGO_ENABLED=0 go build -trimpath -tags 'x' -ldflags '...' -o OUT ./cmd/x
// ($(GO) counts as go).
func parseGoBuild(line string) (goBuild, error) {
	words, err := Words(line)
	if err != nil {
		return goBuild{}, err
	}
	b := goBuild{env: map[string]string{}}
	i := 0
	for ; i < len(words) && strings.Contains(words[i], "=") && !strings.HasPrefix(words[i], "-"); i++ {
		k, v, _ := strings.Cut(words[i], "=")
		b.env[k] = v
	}
	if i+1 >= len(words) || (words[i] != "go" && words[i] != "$(GO)") || words[i+1] != "build" {
		return b, fmt.Errorf("not a go build command: %q", line)
	}
	for i += 2; i < len(words); i++ {
		w := words[i]
		next := func() (string, error) {
			if i+1 >= len(words) {
				return "", fmt.Errorf("%s without a value in %q", w, line)
			}
			i++
			return words[i], nil
		}
		switch w {
		case "-trimpath":
			b.trimpath = true
		case "-tags":
			v, err := next()
			if err != nil {
				return b, err
			}
			b.tags = strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
			sort.Strings(b.tags)
		case "-ldflags":
			if b.ldflags, err = next(); err != nil {
				return b, err
			}
		case "-o":
			if b.out, err = next(); err != nil {
				return b, err
			}
		default:
			if strings.HasPrefix(w, "-") {
				return b, fmt.Errorf("go build flag %s is not one the Makefile uses, in %q", w, line)
			}
			if b.pkg != "" {
				return b, fmt.Errorf("two packages (%s, %s) in %q", b.pkg, w, line)
			}
			b.pkg = w
		}
	}
	return b, nil
}

// ldflagParts splits -ldflags into its plain flags (-s -w) and the -X
// symbols it sets (without their values, which are build-time variables).
func ldflagParts(ldflags string) (plain, symbols []string) {
	f := strings.Fields(ldflags)
	for i := 0; i < len(f); i++ {
		if f[i] == "-X" && i+1 < len(f) {
			name, _, _ := strings.Cut(f[i+1], "=")
			symbols = append(symbols, name)
			i++
			continue
		}
		plain = append(plain, f[i])
	}
	sort.Strings(plain)
	sort.Strings(symbols)
	return plain, symbols
}

// makefileShimBuild is the `go build` of bin/gpu-preflight in the Makefile,
// with its variables expanded.
func makefileShimBuild(t *testing.T) goBuild {
	t.Helper()
	vars := makeVars(t)
	for _, line := range makeRecipe(t, "bin/gpu-preflight") {
		if strings.Contains(line, " build ") {
			b, err := parseGoBuild(expandMake(line, vars))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatal("no go build in the Makefile's bin/gpu-preflight recipe")
	return goBuild{}
}

// probeScriptBuild is the probe's `go build` and its cgo environment, from
// scripts/probe-build.sh (the sysroot build `make probe` runs).
func probeScriptBuild(t *testing.T) goBuild {
	t.Helper()
	script := readRepoFile(t, "scripts/probe-build.sh")
	m := regexp.MustCompile(`"\$go" (build [^\n]*)`).FindStringSubmatch(script)
	if m == nil {
		t.Fatal("no go build in scripts/probe-build.sh")
	}
	b, err := parseGoBuild("go " + strings.ReplaceAll(m[1], `"$out.tmp"`, "OUT"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"CGO_ENABLED", "CGO_CFLAGS"} {
		v := regexp.MustCompile(name + `=("[^"]*"|\S+)`).FindStringSubmatch(script)
		if v == nil {
			t.Fatalf("scripts/probe-build.sh does not set %s", name)
		}
		b.env[name] = strings.Trim(v[1], `"`)
	}
	return b
}

func TestMakefileReading(t *testing.T) {
	// The readers above must see what the Makefile says, or every
	// comparison with it proves nothing.
	vars := makeVars(t)
	if !strings.Contains(vars["LDFLAGS"], "buildinfo.Version") {
		t.Errorf("LDFLAGS = %q", vars["LDFLAGS"])
	}
	if vars["PROBE_EMBED"] == "" {
		t.Error("PROBE_EMBED not found in mk/probe.mk")
	}
	b := makefileShimBuild(t)
	if b.env["CGO_ENABLED"] != "0" || b.pkg != "./cmd/gpu-preflight" || b.out != "$@" || len(b.tags) == 0 {
		t.Errorf("the Makefile's shim build read as %+v", b)
	}
	p := probeScriptBuild(t)
	if p.env["CGO_ENABLED"] != "1" || p.pkg != "./cmd/gpu-preflight-nvml" {
		t.Errorf("the probe build read as %+v", p)
	}
}
