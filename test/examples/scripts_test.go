package examples

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// shellScripts lists the examples' shell scripts: *.sh, *.sbatch, and any
// file whose first line is a bash or sh shebang.
func shellScripts(t *testing.T) []string {
	t.Helper()
	var out []string
	root := filepath.Join(harness.Root(t), "examples")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		first, _, _ := strings.Cut(string(data), "\n")
		if strings.HasSuffix(p, ".sh") || strings.HasSuffix(p, ".sbatch") ||
			strings.HasPrefix(first, "#!") && (strings.Contains(first, "bash") || strings.HasSuffix(first, "/sh")) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestShellScriptsParseAndPassShellcheck(t *testing.T) {
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Fatal("shellcheck is not installed: run `make deps` as root (scripts/deps.sh installs Debian's shellcheck)")
	}
	scripts := shellScripts(t)
	if len(scripts) < 2 {
		t.Fatalf("found %d scripts under examples/, want the Slurm scripts at least", len(scripts))
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, s := range scripts {
		rel, _ := filepath.Rel(harness.Root(t), s)
		testedPath(t, rel)
		t.Run(rel, func(t *testing.T) {
			if r := harness.Run(t, time.Minute, harness.Root(t), env, "bash", "-n", s); r.Code != 0 {
				t.Errorf("bash -n: exit %d\n%s", r.Code, r.Stderr)
			}
			if r := harness.Run(t, time.Minute, harness.Root(t), env, "shellcheck", "--shell=bash", "--severity=style", s); r.Code != 0 {
				t.Errorf("shellcheck: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
		})
	}
}

// TestSlurmScriptsReachTheRecord: the scripts run the shim at the path the
// Dockerfiles install it, keep the task environment (SLURM_* is what the
// record's orchestrator.slurm reads), and keep the records on a volume.
func TestSlurmScriptsReachTheRecord(t *testing.T) {
	scripts, _ := filepath.Glob(filepath.Join(harness.Root(t), "examples/slurm/*.sbatch"))
	if len(scripts) == 0 {
		t.Fatal("no examples/slurm/*.sbatch")
	}
	for _, s := range scripts {
		data, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		name := filepath.Base(s)
		if !strings.Contains(text, shimPath+" -- ") {
			t.Errorf("%s does not run %s -- CMD", name, shimPath)
		}
		var code []string // the lines that run, without comments
		for _, l := range strings.Split(text, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "#") {
				code = append(code, l)
			}
		}
		for _, bad := range []string{"--cleanenv", "--export=NONE", "--containall"} {
			if strings.Contains(strings.Join(code, "\n"), bad) {
				t.Errorf("%s uses %s, which keeps SLURM_* out of the container", name, bad)
			}
		}
		if !strings.Contains(text, ":/var/log/gpu-preflight") {
			t.Errorf("%s does not mount a directory at /var/log/gpu-preflight (PREFLIGHT_PROVENANCE_DIR)", name)
		}
		if !strings.Contains(text, "#SBATCH") || !strings.Contains(text, "srun ") {
			t.Errorf("%s is not an sbatch script that runs srun", name)
		}
	}
}

// TestTrainingScriptsCompile byte-compiles the examples' train.py files.
func TestTrainingScriptsCompile(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is not installed: apt-get install python3-minimal (the examples' train.py files are checked with py_compile)")
	}
	for _, f := range []struct{ path, imports string }{
		{"examples/paddle/train.py", "import paddle"},
		{"examples/pytorch/train.py", "import torch"},
	} {
		if !strings.Contains(readRepoFile(t, f.path), f.imports+"\n") {
			t.Errorf("%s does not %s", f.path, f.imports)
		}
		// Compile to a throwaway file: no __pycache__ in the checkout.
		code := "import py_compile,sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)"
		r := harness.Run(t, time.Minute, harness.Root(t), []string{"PATH=/usr/bin:/bin"}, py, "-c", code, filepath.Join(harness.Root(t), f.path), filepath.Join(t.TempDir(), "train.pyc"))
		if r.Code != 0 {
			t.Errorf("%s does not compile:\n%s", f.path, r.Stderr)
		}
	}
}

// TestSlurmScriptsActOnTheExitCode runs each sbatch script with srun and
// sbatch replaced by stubs: a node fault (75) resubmits the script away from
// the node, at most twice; a mismatch (78) and success do not; the script
// exits with srun's status every time.
func TestSlurmScriptsActOnTheExitCode(t *testing.T) {
	scripts, _ := filepath.Glob(filepath.Join(harness.Root(t), "examples/slurm/*.sbatch"))
	if len(scripts) == 0 {
		t.Fatal("no examples/slurm/*.sbatch")
	}
	nodeFault := runNodeFault(t).Code
	mismatch := runAbort(t).Code
	for _, s := range scripts {
		for _, tt := range []struct {
			status, tries int
			resubmit      bool
		}{
			{nodeFault, 0, true},
			{nodeFault, 1, true},
			{nodeFault, 2, false},
			{mismatch, 0, false},
			{0, 0, false},
		} {
			name := fmt.Sprintf("%s/exit-%d/tries-%d", filepath.Base(s), tt.status, tt.tries)
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				stubs := filepath.Join(dir, "bin")
				if err := os.Mkdir(stubs, 0o755); err != nil {
					t.Fatal(err)
				}
				calls := filepath.Join(dir, "sbatch-calls")
				for file, body := range map[string]string{
					"srun":   fmt.Sprintf("#!/bin/sh\nexit %d\n", tt.status),
					"sbatch": "#!/bin/sh\necho \"$@\" >>" + calls + "\n",
				} {
					if err := os.WriteFile(filepath.Join(stubs, file), []byte(body), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				env := []string{"PATH=" + stubs + ":/usr/bin:/bin", "HOME=" + dir,
					"SLURM_JOB_ID=4242", "SLURM_JOB_NODELIST=gpu-node-7",
					"GPU_PREFLIGHT_NODE_RETRIES=" + strconv.Itoa(tt.tries)}
				r := harness.Run(t, time.Minute, dir, env, "bash", s)
				if r.Code != tt.status {
					t.Errorf("exit %d, want srun's %d\nstderr: %s", r.Code, tt.status, r.Stderr)
				}
				data, _ := os.ReadFile(calls)
				want := ""
				if tt.resubmit {
					want = fmt.Sprintf("--exclude=gpu-node-7 --export=ALL,GPU_PREFLIGHT_NODE_RETRIES=%d %s\n", tt.tries+1, s)
				}
				if string(data) != want {
					t.Errorf("sbatch called with %q, want %q\nstderr: %s", data, want, r.Stderr)
				}
			})
		}
	}
}
