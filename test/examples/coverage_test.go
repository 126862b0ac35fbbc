package examples

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// tested holds the repository files (relative, slash-separated) that a test
// of this run read (readRepoFile) or handed to a tool (testedPath). After a
// run of the whole suite every file under examples/ must be in it: a new
// example fails the suite until a test reads it.
var tested sync.Map

// testedPath returns the absolute path of rel for a tool to check (bash,
// shellcheck, python) and records that a test checks it.
func testedPath(t testing.TB, rel string) string {
	tested.Store(filepath.ToSlash(rel), true)
	return filepath.Join(harness.Root(t), rel)
}

// exampleBuilds are the folders under examples/ whose Dockerfile TestPodman
// (podman_test.go, make test-podman) builds, in this order, into the image
// named, and runs. They count as tested here: that suite's engine is the
// only reader of a Dockerfile that proves anything.
var exampleBuilds = []struct{ dir, image string }{
	{"examples/paddle", paddleImage},
	{"examples/pytorch", pytorchImage},
}

// Image names in the private storage of the podman suite. The shim's is the
// SHIM_IMAGE default of examples/*/Dockerfile.
const (
	exampleImage = "localhost/gpf-example:final"
	shimImage    = "gpu-preflight:dev"
	paddleImage  = "localhost/gpf-paddle:test"
	pytorchImage = "localhost/gpf-pytorch:test"
)

// hookMain, set by podman_test.go, makes the test binary act as the OCI
// hook when the engine runs it as one; it returns when it is not one.
var hookMain func()

func TestMain(m *testing.M) {
	if hookMain != nil {
		hookMain()
	}
	code := m.Run()
	if code == 0 && wholeSuite() {
		missing, err := untested()
		switch {
		case err != nil:
			fmt.Fprintf(os.Stderr, "FAIL: listing examples/: %v\n", err)
			code = 1
		case len(missing) > 0:
			for _, f := range missing {
				fmt.Fprintf(os.Stderr, "FAIL: %s is read by no test of this suite: add a test that reads it (readRepoFile or testedPath)\n", f)
			}
			code = 1
		}
	}
	os.Exit(code)
}

// wholeSuite reports whether every test ran: no -run, -skip or -list.
func wholeSuite() bool {
	for _, name := range []string{"test.run", "test.skip", "test.list"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}

// untested lists the files under examples/ that no test of this run read.
func untested() ([]string, error) {
	root, err := harness.RootDir()
	if err != nil {
		return nil, err
	}
	built := map[string]bool{}
	for _, b := range exampleBuilds {
		built[b.dir+"/Dockerfile"] = true
	}
	var missing []string
	err = filepath.WalkDir(filepath.Join(root, "examples"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if _, ok := tested.Load(rel); !ok && !built[rel] {
			missing = append(missing, rel)
		}
		return nil
	})
	sort.Strings(missing)
	return missing, err
}
