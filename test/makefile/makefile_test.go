// Package makefile checks the rules make reads from the Makefile and
// mk/*.mk, as `make -p` prints them after reading every file: a
// prerequisite written with a variable that another file sets later
// expands to nothing, and make then neither builds it first nor rebuilds
// when it changes, silently.
package makefile

import (
	"bufio"
	"bytes"
	"go/build/constraint"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// database is make's view of the repository's rules: each target's
// prerequisites, each variable's value, and each target's recipe lines.
type database struct {
	prereqs map[string][]string
	vars    map[string]string
	recipes map[string][]string
}

// readDatabase runs `make -pnq` in the repository root (print the
// database, run nothing) and reads the rules and variables from it.
func readDatabase(t *testing.T) database {
	t.Helper()
	cmd := exec.Command("make", "-pnq", "-f", "Makefile")
	cmd.Dir = root(t)
	var out bytes.Buffer
	cmd.Stdout = &out
	// -q exits 1 when a target is out of date: not a failure here.
	if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() > 1 {
		t.Fatalf("make -pnq: %v", err)
	}
	db := database{prereqs: map[string][]string{}, vars: map[string]string{}, recipes: map[string][]string{}}
	target := ""
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "\t"):
			if target != "" {
				db.recipes[target] = append(db.recipes[target], strings.TrimSpace(line))
			}
		case line == "":
			target = ""
		case strings.HasPrefix(line, "#"):
			// make's notes on the rule above, before its recipe
		case strings.Contains(line, " := ") || strings.Contains(line, " = "):
			name, value, _ := strings.Cut(strings.Replace(line, " := ", " = ", 1), " = ")
			db.vars[name] = value
		default:
			name, deps, ok := strings.Cut(line, ":")
			if !ok || strings.HasPrefix(deps, "=") {
				continue
			}
			target = name
			db.prereqs[name] = strings.Fields(strings.TrimPrefix(deps, ":"))
		}
	}
	if len(db.prereqs) == 0 {
		t.Fatalf("make -pnq printed no rules:\n%.2000s", out.String())
	}
	return db
}

// root is the repository root, where make runs.
var root = harness.Root

func (db database) requires(t *testing.T, target, prereq string) {
	t.Helper()
	deps, ok := db.prereqs[target]
	if !ok {
		t.Errorf("make has no rule for %s", target)
		return
	}
	if !slices.Contains(deps, prereq) {
		t.Errorf("%s does not depend on %s (its prerequisites: %.300q)", target, prereq, deps)
	}
}

// TestPrerequisitesNamedByAnotherFileAreThere: the suites and the release
// build depend on what mk/probe.mk and the Makefile name, whichever file
// names it.
func TestPrerequisitesNamedByAnotherFileAreThere(t *testing.T) {
	db := readDatabase(t)
	probe := db.vars["PROBE_BIN"]
	if probe == "" {
		t.Fatal("PROBE_BIN is not set")
	}
	db.requires(t, "test-e2e", probe)
	db.requires(t, "device-check", probe)
	for _, target := range []string{"bin/gpu-preflight", "dist/gpu-preflight-linux-%"} {
		db.requires(t, target, "cmd/gpu-preflight/main.go")
		db.requires(t, target, "go.mod")
	}
}

// TestEditingATestRebuildsNoBinary: no _test.go file is a prerequisite of
// anything make builds.
func TestEditingATestRebuildsNoBinary(t *testing.T) {
	db := readDatabase(t)
	for target, deps := range db.prereqs {
		for _, d := range deps {
			if strings.HasSuffix(d, "_test.go") {
				t.Errorf("%s depends on the test %s", target, d)
			}
		}
	}
}

// TestVetRunsOnceInLint: go vet and staticcheck run in lint and in no
// suite's recipe, and lint gives them every build tag a test file is
// behind, so no suite's files go unchecked.
func TestVetRunsOnceInLint(t *testing.T) {
	db := readDatabase(t)
	for target, recipe := range db.recipes {
		if target == "lint" {
			continue
		}
		for _, l := range recipe {
			if strings.Contains(l, " vet ") || strings.Contains(l, "STATICCHECK") || strings.Contains(l, "staticcheck") {
				t.Errorf("%s runs %q; vet and staticcheck belong to lint", target, l)
			}
		}
	}
	lint := strings.Join(db.recipes["lint"], "\n")
	for _, want := range []string{" vet ", "$(STATICCHECK)", "$(SUITE_TAGS)"} {
		if !strings.Contains(lint, want) {
			t.Errorf("lint's recipe has no %q:\n%s", want, lint)
		}
	}
	vetted := strings.Split(db.vars["SUITE_TAGS"], ",")
	for _, tag := range testTags(t) {
		if !slices.Contains(vetted, tag) {
			t.Errorf("test files are behind the build tag %q, which lint does not vet (SUITE_TAGS %q)", tag, db.vars["SUITE_TAGS"])
		}
	}
}

// testTags returns the tags the //go:build lines under test/ name.
func testTags(t *testing.T) []string {
	t.Helper()
	var tags []string
	err := filepath.WalkDir(filepath.Join(root(t), "test"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(data), "\n") {
			if !constraint.IsGoBuild(line) {
				continue
			}
			expr, err := constraint.Parse(line)
			if err != nil {
				t.Errorf("%s: %v", p, err)
				continue
			}
			expr.Eval(func(tag string) bool {
				if !slices.Contains(tags, tag) && tag != "cgo" && tag != "linux" {
					tags = append(tags, tag)
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tags) == 0 {
		t.Fatal("no build tag found under test/")
	}
	return tags
}

// TestBinariesDependOnTheirSources: every file of this module that goes
// into the shim or the NVML probe (go list -deps, with the tags the
// Makefile builds them with: Go, cgo and C files) is a prerequisite of the
// binary, so editing it rebuilds; and the top folder of each of the shim's
// is one Dockerfile.example copies into its build stage.
func TestBinariesDependOnTheirSources(t *testing.T) {
	db := readDatabase(t)
	dockerfile, err := os.ReadFile(filepath.Join(root(t), "Dockerfile.example"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct{ target, pkg, tags string }{
		{"bin/gpu-preflight", "./cmd/gpu-preflight", db.vars["GO_TAGS"]},
		{"bin/linux-%/gpu-preflight-nvml", "./cmd/gpu-preflight-nvml", ""},
	} {
		prereqs := db.prereqs[b.target]
		files := moduleFiles(t, b.pkg, b.tags)
		for _, rel := range files {
			if !slices.Contains(prereqs, rel) {
				t.Errorf("%s is built from %s, which is not one of its prerequisites", b.target, rel)
			}
			top, _, _ := strings.Cut(rel, "/")
			if b.pkg == "./cmd/gpu-preflight" && !strings.Contains(string(dockerfile), "\nCOPY "+top+" "+top+"\n") {
				t.Errorf("Dockerfile.example does not COPY %s, which holds the shim's %s", top, rel)
			}
		}
	}
}

// moduleFiles lists the files of this module that pkg is built from:
// its and its dependencies' Go, cgo, C and header files, and the files they
// embed, relative to the repository root. An embedded file may not exist
// yet (the probe binary the shim embeds is built by make), so go list runs
// with -e and a missing embed is accepted only as a file the list names;
// any other error fails the test.
func moduleFiles(t *testing.T, pkg, tags string) []string {
	t.Helper()
	format := `{{if .Module}}{{if .Module.Main}}{{$d := .Dir}}` +
		`{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .CgoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}` +
		`{{range .CFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .HFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}` +
		`{{range .EmbedPatterns}}{{$d}}/{{.}}{{"\n"}}{{end}}` +
		`{{with .Error}}error: {{.Err}}{{"\n"}}{{end}}{{end}}{{end}}`
	cmd := exec.Command("go", "list", "-e", "-deps", "-tags", tags, "-f", format, pkg)
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var files []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if msg, ok := strings.CutPrefix(line, "error: "); ok {
			if !strings.HasSuffix(msg, ": no matching files found") {
				t.Fatalf("go list -deps %s: %s", pkg, msg)
			}
			continue // an embedded file make has not built yet; it is listed as a pattern
		}
		if strings.ContainsAny(filepath.Base(line), "*?[") {
			t.Fatalf("go list -deps %s: embed pattern %s is a glob; list its files", pkg, line)
		}
		rel, err := filepath.Rel(root(t), line)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, rel)
	}
	if len(files) < 5 {
		t.Fatalf("go list -deps %s names %d files of this module", pkg, len(files))
	}
	return files
}
