//go:build debiancuda

package debiancuda

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/image"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// trixiePython runs the root's own python3.13 in a chroot (through its
// ld.so: the root holds no /lib64 link) and returns its sys.path without
// the standard library.
func trixiePython(t *testing.T, root string) []string {
	t.Helper()
	out, err := exec.Command("env", "-i", "/usr/sbin/chroot", root, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
		"/usr/bin/python3.13", "-c", "import json, sys; print(json.dumps(sys.path))").CombinedOutput()
	if err != nil {
		t.Fatalf("python3.13 in a chroot of the root: %v\n%s", err, out)
	}
	var path []string
	if err := json.Unmarshal(out, &path); err != nil {
		t.Fatalf("python3.13 printed %q", out)
	}
	return slices.DeleteFunc(path, func(d string) bool {
		return d == "" || strings.HasSuffix(d, ".zip") || d == "/usr/lib/python3.13" || strings.HasSuffix(d, "/lib-dynload")
	})
}

// Trixie's own python3.13, with Debian's site.py, has the sys.path the
// model builds for /usr/bin/python3 in that root; and the torch it imports,
// Debian's python3-torch-cuda with its cp313 _C module, is the one judged.
func TestTrixiesPythonHasTheModelledSysPathAndImportsDebiansTorch(t *testing.T) {
	root := debianRoot(t)
	env := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"}
	found := pyenv.Find(fsroot.Root(root), env)
	e, ok := pyenv.EnvironmentOf(fsroot.Root(root), env, found.Environments, "/usr/bin/python3.13")
	if !ok || e.LibName() != "python3.13" {
		t.Fatalf("no python3.13 environment for /usr/bin/python3.13: %+v", found.Environments)
	}
	var model []string
	for _, en := range e.Path {
		model = append(model, en.Dir)
	}
	if real := trixiePython(t, root); !slices.Equal(model, real) {
		t.Errorf("sys.path of trixie's python3.13:\nmodel %q\nreal  %q", model, real)
	}
	res, _, warnings := image.LoadWithin(fsroot.Root(root), env, "/etc/gpu-preflight/image.json", 5*time.Minute)
	fws, py := image.Judge(fsroot.Root(root), env, res, []string{"python3", "train.py"})
	var judged []string
	for _, f := range fws {
		if f.NotJudged == "" {
			judged = append(judged, f.Name+" "+f.CUDAVersion+" "+strings.Join(f.ABI, ","))
		}
	}
	if py == nil || py.Interpreter != "/usr/bin/python3" || py.Version != "3.13" || !slices.Equal(judged, []string{"torch 12.4 cp313"}) {
		t.Errorf("python %+v judged %q (warnings %q), want Debian's torch for CUDA 12.4 built for cp313", py, judged, warnings)
	}
}
