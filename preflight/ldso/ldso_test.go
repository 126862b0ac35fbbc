package ldso

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/ldso/ldsotest"
)

// The loader-order tests build small libraries with gcc, run a program
// that needs them under the real ld.so with LD_DEBUG=libs, and compare
// which file ld.so opened for each soname, and at which step of its
// search, with what Load says for the same files.

type lib = ldsotest.Lib

func gcc(t *testing.T) string { return ldsotest.GCC(t) }

func build(t *testing.T, _ string, dir string, l lib, _ bool) { ldsotest.Build(t, dir, l) }

// found is what ld.so said about one Soname: the file it opened and the
// search step that listed that file's directory.
type found struct{ path, via string }

var (
	findRe   = regexp.MustCompile(`find library=(\S+) \[\d+\]; searching`)
	searchRe = regexp.MustCompile(`search path=\S*\s+\((LD_LIBRARY_PATH|RUNPATH from file .*|RPATH from file .*|system search path)\)`)
	cacheRe  = regexp.MustCompile(`search cache=`)
	tryRe    = regexp.MustCompile(`trying file=(\S+)`)
	initRe   = regexp.MustCompile(`calling init: (\S+)`)
)

// realLoader runs prog with LD_DEBUG=libs and returns, per soname ld.so
// searched for, the file it loaded and the step that found it.
func realLoader(t *testing.T, prog string, ldLibraryPath string) map[string]found {
	t.Helper()
	cmd := exec.Command(prog)
	cmd.Env = []string{"LD_DEBUG=libs"}
	if ldLibraryPath != "" {
		cmd.Env = append(cmd.Env, "LD_LIBRARY_PATH="+ldLibraryPath)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", prog, err, out)
	}
	inits := map[string]bool{}
	for _, m := range initRe.FindAllStringSubmatch(string(out), -1) {
		inits[m[1]] = true
	}
	res := map[string]found{}
	var name, via string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := findRe.FindStringSubmatch(line); m != nil {
			name, via = m[1], ""
			continue
		}
		if m := searchRe.FindStringSubmatch(line); m != nil {
			// ld.so keeps "$ORIGIN/../x" uncleaned in the names it
			// prints; the model cleans them.
			via = m[1]
			if rest, ok := strings.CutPrefix(via, "RUNPATH from file "); ok {
				via = "RUNPATH from file " + filepath.Clean(rest)
			} else if rest, ok := strings.CutPrefix(via, "RPATH from file "); ok {
				via = "RPATH from file " + filepath.Clean(rest)
			}
			continue
		}
		if cacheRe.MatchString(line) {
			via = "cache"
			continue
		}
		if m := tryRe.FindStringSubmatch(line); m != nil && name != "" && inits[m[1]] {
			res[name] = found{filepath.Clean(m[1]), via}
		}
	}
	return res
}

// modelVia turns Load's step into ld.so's LD_DEBUG wording.
func modelVia(o Object) string {
	switch o.Via {
	case ViaLibraryPath:
		return "LD_LIBRARY_PATH"
	case ViaRunPath:
		return "RUNPATH from file " + o.By
	case ViaRPath:
		return "RPATH from file " + o.By
	case ViaCache:
		return "cache"
	case ViaSystem:
		return "system search path"
	}
	return o.Via
}

func hostEnv(t *testing.T, ldLibraryPath string) Env {
	t.Helper()
	b, err := os.ReadFile("/etc/ld.so.cache")
	if err != nil {
		t.Fatal(err)
	}
	cache, err := ParseCache(b)
	if err != nil {
		t.Fatal(err)
	}
	return Env{LibraryPath: splitPath(ldLibraryPath), Cache: cache, SystemDirs: DebianSystemDirs("x86_64-linux-gnu"), LibDir: "lib/x86_64-linux-gnu"}
}

func TestLoadOrderMatchesTheRealLoader(t *testing.T) {
	cc := gcc(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("the system directories below are amd64 Debian's")
	}
	for _, tt := range []struct {
		name   string
		libs   []lib
		prog   lib
		ldpath []string // relative to the test directory
	}{
		{
			// torch's case: the wheel's RUNPATH names nvidia/cudnn/lib, and
			// LD_LIBRARY_PATH names an older copy; LD_LIBRARY_PATH wins.
			name: "LD_LIBRARY_PATH before DT_RUNPATH",
			libs: []lib{
				{Path: "site/nvidia/cudnn/lib/libcudnn.so.9", Soname: "libcudnn.so.9"},
				{Path: "usr/local/cuda/lib64/libcudnn.so.9", Soname: "libcudnn.so.9"},
			},
			prog:   lib{Path: "site/torch/lib/prog", Needs: []string{"site/nvidia/cudnn/lib/libcudnn.so.9"}, RunPath: "$ORIGIN/../../nvidia/cudnn/lib"},
			ldpath: []string{"usr/local/cuda/lib64"},
		},
		{
			name: "DT_RUNPATH when LD_LIBRARY_PATH has no copy",
			libs: []lib{
				{Path: "site/nvidia/cudnn/lib/libcudnn.so.9", Soname: "libcudnn.so.9"},
				{Path: "other/libcudnn.so.9", Soname: "libcudnn.so.9"},
			},
			prog:   lib{Path: "site/torch/lib/prog", Needs: []string{"site/nvidia/cudnn/lib/libcudnn.so.9"}, RunPath: "$ORIGIN/../../nvidia/cudnn/lib"},
			ldpath: []string{"empty"},
		},
		{
			name: "DT_RPATH before LD_LIBRARY_PATH",
			libs: []lib{
				{Path: "rp/libnccl.so.2", Soname: "libnccl.so.2"},
				{Path: "ld/libnccl.so.2", Soname: "libnccl.so.2"},
			},
			prog:   lib{Path: "bin/prog", Needs: []string{"rp/libnccl.so.2"}, RPath: "$ORIGIN/../rp"},
			ldpath: []string{"ld"},
		},
		{
			// A dependency's dependency is searched with the DT_RUNPATH of
			// the object that needs it, not of the program.
			name: "a dependency's own DT_RUNPATH",
			libs: []lib{
				{Path: "b/libcublasLt.so.12", Soname: "libcublasLt.so.12"},
				{Path: "a/libcublas.so.12", Soname: "libcublas.so.12", Needs: []string{"b/libcublasLt.so.12"}, RunPath: "$ORIGIN/../b"},
			},
			prog: lib{Path: "bin/prog", Needs: []string{"a/libcublas.so.12"}, RunPath: "$ORIGIN/../a"},
		},
		{
			// DT_RPATH is inherited down the chain of objects without
			// DT_RUNPATH.
			name: "the program's DT_RPATH serves its dependency's dependency",
			libs: []lib{
				{Path: "c/libcusparse.so.12", Soname: "libcusparse.so.12"},
				{Path: "a/libcusolver.so.11", Soname: "libcusolver.so.11", Needs: []string{"c/libcusparse.so.12"}},
			},
			prog: lib{Path: "bin/prog", Needs: []string{"a/libcusolver.so.11"}, RPath: "$ORIGIN/../a:$ORIGIN/../c"},
		},
		{
			// ...but not into an object that has DT_RUNPATH: then its
			// dependency is looked up in LD_LIBRARY_PATH.
			name: "DT_RUNPATH stops the inherited DT_RPATH",
			libs: []lib{
				{Path: "c/libcusparse.so.12", Soname: "libcusparse.so.12"},
				{Path: "ld/libcusparse.so.12", Soname: "libcusparse.so.12"},
				{Path: "a/libcusolver.so.11", Soname: "libcusolver.so.11", Needs: []string{"c/libcusparse.so.12"}, RunPath: "/nonexistent"},
			},
			prog:   lib{Path: "bin/prog", Needs: []string{"a/libcusolver.so.11"}, RPath: "$ORIGIN/../a:$ORIGIN/../c"},
			ldpath: []string{"ld"},
		},
		{
			// A venv's torch wheel: torch/lib's objects name the nvidia-*
			// wheels' lib folders in DT_RUNPATH, relative to $ORIGIN, and
			// the image's /usr/local/cuda copy is not on any search path.
			name: "a venv's torch finds the nvidia wheels through its DT_RUNPATH",
			libs: []lib{
				{Path: "venv/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12", Soname: "libcublas.so.12"},
				{Path: "venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2", Soname: "libnccl.so.2"},
				{Path: "usr/local/cuda/lib64/libcublas.so.12", Soname: "libcublas.so.12"},
			},
			prog: lib{Path: "venv/lib/python3.11/site-packages/torch/lib/prog",
				Needs:   []string{"venv/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12", "venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2"},
				RunPath: "$ORIGIN/../../nvidia/cublas/lib:$ORIGIN/../../nvidia/nccl/lib"},
		},
		{
			// A conda environment: the CUDA libraries are in the prefix's
			// lib/, which a package's objects under site-packages reach
			// through a search path relative to $ORIGIN (conda-build makes
			// every path relative to the prefix), and LD_LIBRARY_PATH names
			// another copy after it. The test's directory is named after
			// the case, so the object's own folder holds a "$": ld.so copies
			// $ORIGIN's value as it is, and so must the model.
			name: "conda's prefix lib/ through $ORIGIN/../../../..",
			libs: []lib{
				{Path: "opt/conda/lib/libcudart.so.12", Soname: "libcudart.so.12"},
				{Path: "opt/conda/lib/libnccl.so.2", Soname: "libnccl.so.2", Needs: []string{"opt/conda/lib/libcudart.so.12"}, RunPath: "$ORIGIN"},
				{Path: "usr/local/cuda/lib64/libcudart.so.12", Soname: "libcudart.so.12"},
			},
			prog: lib{Path: "opt/conda/lib/python3.11/site-packages/torch/lib/prog",
				Needs: []string{"opt/conda/lib/libcudart.so.12", "opt/conda/lib/libnccl.so.2"},
				RPath: "$ORIGIN/../../../.."},
			ldpath: []string{"usr/local/cuda/lib64"},
		},
		{
			// A soname already loaded is reused: the second copy is never
			// opened, whatever the second object's search path says.
			name: "an already-loaded soname is reused",
			libs: []lib{
				{Path: "x/libcudart.so.12", Soname: "libcudart.so.12"},
				{Path: "y/libcudart.so.12", Soname: "libcudart.so.12"},
				{Path: "y/libnccl.so.2", Soname: "libnccl.so.2", Needs: []string{"y/libcudart.so.12"}, RunPath: "$ORIGIN"},
			},
			prog: lib{Path: "bin/prog", Needs: []string{"x/libcudart.so.12", "y/libnccl.so.2"}, RunPath: "$ORIGIN/../x:$ORIGIN/../y"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, l := range tt.libs {
				build(t, cc, dir, l, false)
			}
			build(t, cc, dir, tt.prog, true)
			var ld []string
			for _, p := range tt.ldpath {
				d := filepath.Join(dir, p)
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
				ld = append(ld, d)
			}
			ldpath := strings.Join(ld, ":")
			prog := filepath.Join(dir, tt.prog.Path)
			real := realLoader(t, prog, ldpath)
			model := Load(RootFS{Root: fsroot.Root("/")}, hostEnv(t, ldpath), nil, []string{prog})
			checked := 0
			for _, o := range model {
				if o.Via == ViaPath {
					continue // the program itself
				}
				// Every object, libc.so.6 from the cache included.
				r, ok := real[o.Name]
				checked++
				if !ok || r.path != o.Path || r.via != modelVia(o) {
					t.Errorf("%s: ld.so loaded %q (%s), the model %q (%s)", o.Name, r.path, r.via, o.Path, modelVia(o))
				}
			}
			if checked < len(tt.libs) {
				t.Fatalf("nothing compared: ld.so said %v, the model %+v", real, model)
			}
		})
	}
}

// IsFile completes FS for the tests, which model a real root without the
// image scan's cache.
func (r RootFS) IsFile(p string) bool {
	fi, err := r.Root.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
