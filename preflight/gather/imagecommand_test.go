package gather

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/imageconfig"
)

// imageWithVenv is an unpacked image with a torch for /usr/bin/python3, a
// venv no PATH entry names, /app/train.py run by that venv's python, and a
// pixi environment under /workspace, each with a torch of its own.
func imageWithVenv(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"usr/bin/python3.12":  "",
		"opt/venv/pyvenv.cfg": "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n",
		"app/train.py":        "#!/opt/venv/bin/python\nimport torch\n",
		"workspace/.pixi/envs/prod/conda-meta/history": "",
		"workspace/.pixi/envs/prod/bin/python3.12":     "",
	}
	for _, sp := range []string{"usr/local/lib/python3.12/dist-packages", "opt/venv/lib/python3.12/site-packages", "workspace/.pixi/envs/prod/lib/python3.12/site-packages"} {
		files[sp+"/torch/__init__.py"] = ""
		files[sp+"/torch/version.py"] = "__version__ = '2.7.1'\ncuda = '12.6'\nhip = None\n"
		files[sp+"/torch/_C.cpython-312-x86_64-linux-gnu.so"] = ""
	}
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"usr/bin/python3": "python3.12", "opt/venv/bin/python": "/usr/bin/python3.12",
		"workspace/.pixi/envs/prod/bin/python": "python3.12"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// gatherImage gathers root as an unpacked image configured as im says, the
// way app.Config hands an image config to Gather.
func gatherImage(t *testing.T, root string, im imageconfig.Image) Result {
	t.Helper()
	env := envvars.Parse(im.Env)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, _ := Gather(ctx, Options{Root: fsroot.Root(root), ImageEnviron: &env, NVMLTimeout: time.Second,
		Command: im.Command, CommandFrom: im.CommandFrom, WorkDir: im.WorkDir})
	return res
}

func readImage(t *testing.T, name string) imageconfig.Image {
	t.Helper()
	im, err := imageconfig.Read(filepath.Join("../imageconfig/testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return im
}

// `CMD ["./train.py"]` under `WORKDIR /app` (buildah's config blob of
// cmd.Containerfile) runs /app/train.py, whose #! line names the venv's
// python: that is the Python judged, and the record says the command is
// the image config's.
func TestImageCmdRunsFromItsWorkingDirectory(t *testing.T) {
	res := gatherImage(t, imageWithVenv(t), readImage(t, "buildah-cmd-config.json"))
	judgedIn(t, res, "/opt/venv")
	py := res.Facts.Container.Python
	if py == nil || py.Interpreter != "/opt/venv/bin/python" || !strings.Contains(py.How, "#! line of /app/train.py") ||
		!strings.HasSuffix(py.How, "; the command is the image config's Cmd") {
		t.Fatalf("python = %+v, want /opt/venv/bin/python from /app/train.py's #! line, the image config's Cmd", py)
	}
}

// `WORKDIR /workspace` makes /workspace/.pixi/envs/prod the environment
// pixi's entrypoint activates, and the Cmd after gpu-preflight's own
// ENTRYPOINT runs its python (podman image inspect of preflight.Containerfile).
func TestImageWorkingDirectoryHoldsItsPixiEnvironment(t *testing.T) {
	res := gatherImage(t, imageWithVenv(t), readImage(t, "podman-inspect-preflight.json"))
	judgedIn(t, res, "/workspace/.pixi/envs/prod")
	py := res.Facts.Container.Python
	if py == nil || py.Interpreter != "/workspace/.pixi/envs/prod/bin/python" {
		t.Fatalf("python = %+v, want /workspace/.pixi/envs/prod/bin/python", py)
	}
}

// PWD in the image's Env is the shell's word for the working directory,
// and wins over WorkingDir: ./train.py is not under /, so python3 on PATH runs.
func TestImageEnvPWDWinsOverWorkingDir(t *testing.T) {
	im := readImage(t, "buildah-cmd-config.json")
	im.Env = append(im.Env, "PWD=/")
	judgedIn(t, gatherImage(t, imageWithVenv(t), im), "/usr")
}

// judgedIn fails unless the one torch judged is prefix's.
func judgedIn(t *testing.T, res Result, prefix string) {
	t.Helper()
	var judged []string
	for _, f := range res.Facts.Container.Judged() {
		judged = append(judged, f.Environment)
	}
	if len(judged) != 1 || judged[0] != prefix {
		t.Errorf("torch judged in %q, want %s's alone (python %+v)", judged, prefix, res.Facts.Container.Python)
	}
}
