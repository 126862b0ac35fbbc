package gather

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/imageconfig"
)

// Debian trixie's python3-torch-cuda image: no /usr/local/cuda, no
// CUDA_VERSION, the CUDA runtime is libcudart12's
// /usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127. The image's CUDA is
// 12.4 from the distribution, and cuda-driver judges it rather than
// skipping.
func TestDistributionCUDAIsTheImagesCUDAAndCUDADriverJudgesIt(t *testing.T) {
	root := t.TempDir()
	write := func(p, content string) {
		t.Helper()
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile("../host/testdata/version-535-proprietary.txt")
	if err != nil {
		t.Fatal(err)
	}
	write("proc/driver/nvidia/version", string(b))
	write("usr/bin/python3.13", "")
	write("usr/lib/python3/dist-packages/torch/version.py", "__version__ = '2.6.0'\ndebug = False\ncuda: Optional[str] = '12.4'\ngit_version = 'Unknown'\nhip: Optional[str] = None\n")
	write("usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127", "ELF")
	write("var/lib/dpkg/info/libcudart12:amd64.list", "/usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127\n")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, _ := Gather(ctx, Options{Root: fsroot.Root(root), Environ: envvars.Parse([]string{"PATH=/usr/bin:/bin"}), NVMLTimeout: time.Second, Command: []string{"python3", "train.py"}})
	c := res.Facts.Container.CUDA
	if c.Version != "12.4" || c.Kind != facts.CUDAFromDistribution || !strings.Contains(c.Source, "dpkg package libcudart12") {
		t.Fatalf("image CUDA %+v, want 12.4 from the distribution's libcudart12", c)
	}
	var f check.Finding
	for _, x := range check.Run(check.Input{Facts: res.Facts, Visible: res.Visible, Now: time.Unix(0, 0)}) {
		if x.ID == "cuda-driver" {
			f = x
		}
	}
	// Driver 535 supports CUDA 12.2: 12.4 runs through minor-version
	// compatibility, a warning that names where 12.4 came from.
	if f.Status != check.Warn || !strings.Contains(f.Message, "libcudart.so.12.4.127") {
		t.Errorf("cuda-driver %s: %q", f.Status, f.Message)
	}
}

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
