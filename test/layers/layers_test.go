// Package layers holds the rule of docs/CONTRIBUTING.md, "How the packages
// fit": every package of the module has a layer, and imports only the
// layers its own may.
package layers

import (
	"bytes"
	"errors"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/gpu-preflight/gpu-preflight/"

// A layer is a set of packages (a path ending in "/..." is every package
// under it) and the layers they may import besides their own.
type layer struct {
	name    string
	pkgs    []string
	imports []string
}

// layers, bottom up. docs/CONTRIBUTING.md shows the same table; a new
// package is placed here.
var layers = []layer{
	{"internal", []string{"internal/..."}, nil},
	{"data", []string{"preflight/facts", "preflight/compat", "preflight/releases", "preflight/version", "preflight/gpuarch",
		"preflight/imageref", "preflight/cuda", "preflight/decision", "preflight/envvars", "preflight/require",
		"preflight/check/scenarios", "preflight/nccl", "preflight/transport"}, []string{"internal"}},
	{"gatherers", []string{"preflight/fsroot", "preflight/host", "preflight/container", "preflight/image", "preflight/pyenv",
		"preflight/ldso/...", "preflight/fatbin/...", "preflight/elfbound", "preflight/imageconfig", "preflight/identity",
		"preflight/nvml", "preflight/cudaprobe", "preflight/rdmaprobe", "preflight/gather", "preflight/launcher", "preflight/orchestrator", "preflight/rdma/..."}, []string{"internal", "data"}},
	{"rules", []string{"preflight/check", "preflight/policy"}, []string{"internal", "data"}},
	{"planners", []string{"preflight/advise", "preflight/affinity", "preflight/nodeclass"}, []string{"internal", "data", "rules"}},
	{"report", []string{"report/..."}, []string{"internal", "data", "gatherers", "rules", "planners"}},
	{"app", []string{"app"}, []string{"internal", "data", "gatherers", "rules", "planners", "report"}},
	{"cmd", []string{"cmd/..."}, []string{"internal", "data", "gatherers", "rules", "planners", "report", "app"}},
	// Not in the shim: its tests' helpers, tools and benchmarks, which may
	// import any layer and which no layer imports.
	{"support", []string{"test/...", "bench/...", "scripts/...", "docs/..."},
		[]string{"internal", "data", "gatherers", "rules", "planners", "report", "app", "cmd"}},
}

// layerOf is the layer of pkg (a path in the module), the most specific
// entry winning: preflight/check/scenarios is data, preflight/check rules.
func layerOf(pkg string) (layer, bool) {
	var best layer
	bestLen := -1
	for _, l := range layers {
		for _, p := range l.pkgs {
			prefix, tree := strings.CutSuffix(p, "/...")
			if (pkg == prefix || tree && strings.HasPrefix(pkg, prefix+"/")) && len(p) > bestLen {
				best, bestLen = l, len(p)
			}
		}
	}
	return best, bestLen >= 0
}

// packages lists the module's packages and what they import (not their
// tests), read with go/build as go list reads them: the files read are
// what go test's cache holds the result to.
func packages(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string][]string{}
	err = filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if dir != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && dir != root {
			return filepath.SkipDir // another module
		}
		p, err := build.ImportDir(dir, 0)
		var none *build.NoGoError
		if errors.As(err, &none) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, dir)
		pkgs[filepath.ToSlash(rel)] = p.Imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 20 {
		t.Fatalf("found %d packages in this module", len(pkgs))
	}
	return pkgs
}

// Every package has a layer: a new one is placed in the table.
func TestEveryPackageHasALayer(t *testing.T) {
	for pkg := range packages(t) {
		if _, ok := layerOf(pkg); !ok {
			t.Errorf("%s is in no layer: place it in the table (test/layers, docs/CONTRIBUTING.md)", pkg)
		}
	}
}

// A package imports its own layer and the layers its layer may: cmd -> app
// -> report -> preflight -> internal; in preflight planners -> rules ->
// data, and gatherers only data; internal nothing of the project but
// itself.
func TestPackagesImportOnlyTheLayersBelow(t *testing.T) {
	for pkg, imports := range packages(t) {
		from, ok := layerOf(pkg)
		if !ok {
			continue // TestEveryPackageHasALayer
		}
		for _, imp := range imports {
			rel, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			to, _ := layerOf(rel)
			if to.name != from.name && !slices.Contains(from.imports, to.name) {
				t.Errorf("%s (%s) imports %s (%s)", pkg, from.name, rel, to.name)
			}
		}
	}
}

// The rule itself: every layer a layer may import is one of the table's,
// and one below it, so the table cannot allow a cycle.
func TestLayersOnlyLookDown(t *testing.T) {
	for i, l := range layers {
		for _, name := range l.imports {
			j := slices.IndexFunc(layers, func(m layer) bool { return m.name == name })
			if j < 0 || j >= i {
				t.Errorf("layer %s may import %s, which is not a layer below it", l.name, name)
			}
		}
	}
}

// stillLong are the command's functions over the limit, each with where
// its work is going; the test fails once one is short, to strike it off.
var stillLong = map[string]string{}

// The command reads the command line and hands the work to app: its
// package stays small (maxCommandLines, tests aside) and so does each
// function in it (maxFunctionLines).
func TestTheCommandIsThin(t *testing.T) {
	const maxCommandLines, maxFunctionLines = 1200, 60
	p, err := build.ImportDir("../../cmd/gpu-preflight", 0)
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		path := filepath.Join(p.Dir, name)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(src, []byte("\n"))
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			_, excused := stillLong[fn.Name.Name]
			switch {
			case n > maxFunctionLines && !excused:
				t.Errorf("%s: %s is %d lines, over %d: its work belongs in app", name, fn.Name.Name, n, maxFunctionLines)
			case n <= maxFunctionLines && excused:
				t.Errorf("%s: %s is %d lines now: strike it from stillLong", name, fn.Name.Name, n)
			}
		}
	}
	if lines > maxCommandLines {
		t.Errorf("cmd/gpu-preflight is %d lines without its tests, over %d: the application belongs in app", lines, maxCommandLines)
	}
}

// report itself holds the record and its renderings; reading records back,
// logs, ledgers and trace live in its own packages.
func TestTheReportIsTheRecordAndItsRenderings(t *testing.T) {
	const maxReportLines = 1300
	p, err := build.ImportDir("../../report", 0)
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, name := range p.GoFiles {
		src, err := os.ReadFile(filepath.Join(p.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(src, []byte("\n"))
	}
	if lines > maxReportLines {
		t.Errorf("report is %d lines without its tests, over %d: what is not the record or its rendering belongs in a package of its own", lines, maxReportLines)
	}
}
