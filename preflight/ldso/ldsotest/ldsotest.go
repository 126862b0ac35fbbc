// Package ldsotest builds small shared libraries and programs with gcc for
// tests of the loader model: real ELF objects with the sonames, DT_NEEDED,
// DT_RPATH and DT_RUNPATH a test asks for.
package ldsotest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// Lib describes one object to build.
type Lib struct {
	Path    string   // relative to the build directory
	Soname  string   // -Wl,-soname; empty for a program
	Needs   []string // other objects it links against (their Paths)
	RunPath string   // DT_RUNPATH (-Wl,--enable-new-dtags -Wl,-rpath)
	RPath   string   // DT_RPATH (-Wl,--disable-new-dtags -Wl,-rpath)
}

// GCC returns the gcc to build with, failing the test when there is none.
func GCC(t testing.TB) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("ld.so is Linux's")
	}
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatal("gcc is needed to build the loader tests' libraries (scripts/deps.sh installs it):", err)
	}
	return cc
}

// Build compiles l under dir, a shared library when it has a soname, each
// defining a function named after its soname so that linking records DT_NEEDED.
func Build(t testing.TB, dir string, l Lib) string {
	t.Helper()
	cc := GCC(t)
	out := filepath.Join(dir, l.Path)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	src := out + ".c"
	var body strings.Builder
	syms := make([]string, len(l.Needs))
	for i, n := range l.Needs {
		syms[i] = Symbol(filepath.Base(n))
		fmt.Fprintf(&body, "int %s(void);\n", syms[i])
	}
	if l.Soname == "" {
		body.WriteString("int main(void){return 0")
	} else {
		fmt.Fprintf(&body, "int %s(void){return 0", Symbol(l.Soname))
	}
	for _, s := range syms {
		fmt.Fprintf(&body, "+%s()", s)
	}
	body.WriteString(";}\n")
	if err := os.WriteFile(src, []byte(body.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-o", out, src}
	if l.Soname != "" {
		args = append(args, "-shared", "-fPIC", "-Wl,-soname,"+l.Soname)
	}
	for _, n := range l.Needs {
		args = append(args, filepath.Join(dir, n))
	}
	if l.RunPath != "" {
		args = append(args, "-Wl,--enable-new-dtags", "-Wl,-rpath,"+l.RunPath)
	}
	if l.RPath != "" {
		args = append(args, "-Wl,--disable-new-dtags", "-Wl,-rpath,"+l.RPath)
	}
	if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %q: %v\n%s", args, err, b)
	}
	os.Remove(src)
	return out
}

var nonIdent = regexp.MustCompile(`[^A-Za-z0-9]`)

// Symbol is the function a library named name ("libcudnn.so.9") defines.
func Symbol(name string) string {
	base, _, _ := strings.Cut(name, ".so")
	return "f_" + nonIdent.ReplaceAllString(base, "_")
}
