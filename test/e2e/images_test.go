//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/ldso/ldsotest"
	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
)

// Issue 36's images through the shim: CUDA 13's wheels, the environment an
// entrypoint activates, and copies Python cannot import.

// imageTree writes files (path -> content; content "->X" is a symlink to X)
// under root.
func imageTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, s := range files {
		host := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(s, "->"); ok {
			err = os.Symlink(target, host)
		} else {
			err = os.WriteFile(host, []byte(s), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// imageRecord is the part of the record these tests read.
type imageRecord struct {
	Checks []struct{ ID, Status, Message string }
	Image  struct {
		CUDAVersion, CuDNNVersion, NCCLVersion string
		Frameworks                             []struct{ Name, Version, CUDAVersion, Environment, NotJudged string }
		Python                                 struct {
			Interpreter, How, Environment, Version string
		}
	}
}

func (r imageRecord) status(t *testing.T, id string) (string, string) {
	t.Helper()
	for _, c := range r.Checks {
		if c.ID == id {
			return c.Status, c.Message
		}
	}
	t.Fatalf("record has no %q check", id)
	return "", ""
}

// runRecord runs the shim on argv and returns its provenance record.
func runRecord(t *testing.T, env []string, prov string, argv ...string) (imageRecord, result) {
	t.Helper()
	r := run(t, 30*time.Second, env, shimBin(t), argv...)
	files, _ := filepath.Glob(filepath.Join(prov, "*.json"))
	if len(files) != 1 {
		t.Fatalf("%d records in %s (exit %d)\nstderr: %s", len(files), prov, r.code, r.stderr)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec imageRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("record %s: %v", files[0], err)
	}
	return rec, r
}

// runActivated runs argv, which must exit 0 with cpu-build passing (the
// CPU torch of an environment not activated is not judged), the Python
// being interpreter, chosen as how says.
func runActivated(t *testing.T, env []string, prov, interpreter, how string, argv ...string) imageRecord {
	t.Helper()
	rec, r := runRecord(t, env, prov, append([]string{"--"}, argv...)...)
	if r.code != 0 {
		t.Errorf("exit %d, want 0\nstderr: %s", r.code, r.stderr)
	}
	if status, msg := rec.status(t, "cpu-build"); status != "pass" {
		t.Errorf("cpu-build %s: %s (a CPU torch that does not run was judged)", status, msg)
	}
	if py := rec.Image.Python; py.Interpreter != interpreter || !strings.Contains(py.How, how) {
		t.Errorf("image.python = %+v, want %s, activated by %q", py, interpreter, how)
	}
	return rec
}

// PyPI's torch 2.11.0 (a CUDA 13.0 build) in a venv, with the wheels its
// METADATA pins through cuda-toolkit[...] (docs/cuda-stack.md, "The
// wheels"): the runtime in nvidia/cu13/lib, cuDNN and NCCL in their own.
// Driver 550 runs CUDA 12.4 at most, so cuda-driver stops the job before
// `python train.py` runs, and the record names the venv's python.
func TestShimCUDA13WheelsStopTheJobOnDriver550(t *testing.T) {
	const sp = "opt/venv/lib/python3.12/site-packages"
	prov := filepath.Join(t.TempDir(), "provenance")
	env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("550.127.05", 12040)),
		"PATH=/opt/venv/bin:/usr/local/bin:/usr/bin:/bin", "PREFLIGHT_PROVENANCE_DIR="+prov)
	root := envValue(env, "PREFLIGHT_ROOT")
	imageTree(t, root, map[string]string{
		"usr/bin/python3.12":                             "#!ELF",
		"usr/bin/python3":                                "->python3.12",
		"opt/venv/pyvenv.cfg":                            "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n",
		"opt/venv/bin/python3":                           "->/usr/bin/python3.12",
		"opt/venv/bin/python":                            "->python3",
		sp + "/torch/__init__.py":                        "",
		sp + "/torch/version.py":                         "__version__ = '2.11.0+cu130'\ncuda = '13.0'\nhip = None\n",
		sp + "/torch/_C.cpython-312-x86_64-linux-gnu.so": "",
		sp + "/torch-2.11.0.dist-info/METADATA": "Metadata-Version: 2.4\nName: torch\nVersion: 2.11.0\n" +
			"Requires-Dist: cuda-toolkit[cublas,cudart,nvrtc]==13.0.2; platform_system == \"Linux\"\n" +
			"Requires-Dist: nvidia-cudnn-cu13==9.19.0.56; platform_system == \"Linux\"\n" +
			"Requires-Dist: nvidia-nccl-cu13==2.28.9; platform_system == \"Linux\"\n",
		sp + "/cuda_toolkit-13.0.2.dist-info/METADATA": "Metadata-Version: 2.1\nName: cuda-toolkit\nVersion: 13.0.2\n" +
			"Provides-Extra: cudart\nRequires-Dist: nvidia-cuda-runtime==13.0.96.*; extra == \"cudart\"\n",
		sp + "/nvidia_cuda_runtime-13.0.96.dist-info/RECORD": "nvidia/cu13/lib/libcudart.so.13,,\n",
		sp + "/nvidia_cudnn_cu13-9.19.0.56.dist-info/RECORD": "nvidia/cudnn/lib/libcudnn.so.9,,\n",
		sp + "/nvidia_nccl_cu13-2.28.9.dist-info/RECORD":     "nvidia/nccl/lib/libnccl.so.2,,\n",
	})
	var needs []string
	for _, l := range []string{"nvidia/cu13/lib/libcudart.so.13", "nvidia/cudnn/lib/libcudnn.so.9", "nvidia/nccl/lib/libnccl.so.2"} {
		ldsotest.Build(t, root, ldsotest.Lib{Path: sp + "/" + l, Soname: filepath.Base(l)})
		needs = append(needs, sp+"/"+l)
	}
	ldsotest.Build(t, root, ldsotest.Lib{Path: sp + "/torch/lib/libtorch_cuda.so", Soname: "libtorch_cuda.so", Needs: needs,
		RunPath: "$ORIGIN/../../nvidia/cu13/lib:$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/nccl/lib"})

	rec, r := runRecord(t, env, prov, "--", "python", "train.py")
	if r.code != abortCode {
		t.Errorf("exit %d, want %d: driver 550 cannot run CUDA 13.0\nstderr: %s", r.code, abortCode, r.stderr)
	}
	if status, msg := rec.status(t, "cuda-driver"); status != "error" || !strings.Contains(msg, "13.0") {
		t.Errorf("cuda-driver %s: %s", status, msg)
	}
	im := rec.Image
	if im.CUDAVersion != "13.0" || im.CuDNNVersion != "9.19.0.56" || im.NCCLVersion != "2.28.9" {
		t.Errorf("image CUDA %q, cuDNN %q, NCCL %q; want 13.0, 9.19.0.56, 2.28.9", im.CUDAVersion, im.CuDNNVersion, im.NCCLVersion)
	}
	if im.Python.Interpreter != "/opt/venv/bin/python" || im.Python.Environment != "/opt/venv" || !strings.Contains(im.Python.How, "python") {
		t.Errorf("image.python = %+v, want /opt/venv/bin/python", im.Python)
	}
}

// micromamba-docker's multi_env example (its _activate_current_env.sh
// activates ${ENV_NAME}): env1 sorts first and holds a CPU torch, ENV_NAME
// chooses env2's CUDA one. The CUDA build is judged, env1's copy is
// recorded as not on that Python's sys.path, and no CPU-build warning
// follows. Beside it, an orphaned paddlepaddle-gpu dist-info (Paddle's
// install docs uninstall the CPU wheel after the GPU one) is never judged.
func TestShimJudgesTheEnvironmentENVNAMEActivates(t *testing.T) {
	prov := filepath.Join(t.TempDir(), "provenance")
	env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("580.95.05", 13000)),
		"MAMBA_ROOT_PREFIX=/opt/conda", "ENV_NAME=env2", "PREFLIGHT_PROVENANCE_DIR="+prov)
	files := map[string]string{"opt/conda/conda-meta/history": ""}
	for name, torch := range map[string][2]string{"env1": {"2.5.1+cpu", "None"}, "env2": {"2.5.1", "'12.4'"}} {
		p := "opt/conda/envs/" + name
		sp := p + "/lib/python3.11/site-packages"
		files[p+"/conda-meta/history"] = ""
		files[p+"/bin/python3.11"] = "#!ELF"
		files[p+"/bin/python"] = "->python3.11"
		files[sp+"/torch/__init__.py"] = ""
		files[sp+"/torch/version.py"] = "__version__ = '" + torch[0] + "'\ncuda = " + torch[1] + "\nhip = None\n"
		files[sp+"/torch/_C.cpython-311-x86_64-linux-gnu.so"] = ""
		files[sp+"/paddlepaddle_gpu-2.6.2.post120.dist-info/METADATA"] = "Metadata-Version: 2.1\nName: paddlepaddle-gpu\nVersion: 2.6.2.post120\n"
	}
	imageTree(t, envValue(env, "PREFLIGHT_ROOT"), files)

	rec := runActivated(t, env, prov, "/opt/conda/envs/env2/bin/python", "ENV_NAME=env2", "sh", "-c", "exit 0")
	judged := 0
	for _, f := range rec.Image.Frameworks {
		switch {
		case f.NotJudged == "":
			judged++
			if f.Name != "torch" || f.CUDAVersion != "12.4" || f.Environment != "/opt/conda/envs/env2" {
				t.Errorf("judged %+v, want env2's torch for CUDA 12.4", f)
			}
		case f.Name == "paddlepaddle" && !strings.Contains(f.NotJudged, "orphaned dist-info"):
			t.Errorf("paddlepaddle not judged because %q, want the orphaned dist-info named", f.NotJudged)
		}
	}
	if judged != 1 {
		t.Errorf("%d frameworks judged, want env2's torch alone: %+v", judged, rec.Image.Frameworks)
	}
}

// torch 2.9.0+cu130 from PyTorch's cu130 index (its METADATA pins
// nvidia-cuda-runtime==13.0.48 itself: pytorch/pytorch
// .github/scripts/generate_binary_build_matrix.py) in a venv that no PATH
// entry names, run through its torchrun console script, whose #! line pip
// writes as the venv's python. The venv is scanned because the command
// runs it; the CPU torch in the system site is not what runs, and driver
// 550 cannot run CUDA 13.0.
func TestShimScansTheVenvATorchrunShebangNames(t *testing.T) {
	const sp = "opt/venv/lib/python3.12/site-packages"
	prov := filepath.Join(t.TempDir(), "provenance")
	env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("550.127.05", 12040)), "PREFLIGHT_PROVENANCE_DIR="+prov)
	imageTree(t, envValue(env, "PREFLIGHT_ROOT"), map[string]string{
		"usr/bin/python3.12":                             "#!ELF",
		"usr/bin/python3":                                "->python3.12",
		"opt/venv/pyvenv.cfg":                            "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n",
		"opt/venv/bin/python3":                           "->/usr/bin/python3.12",
		"opt/venv/bin/python":                            "->python3",
		"opt/venv/bin/torchrun":                          "#!/opt/venv/bin/python\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom torch.distributed.run import main\n",
		sp + "/torch/__init__.py":                        "",
		sp + "/torch/version.py":                         "__version__ = '2.9.0+cu130'\ncuda = '13.0'\nhip = None\n",
		sp + "/torch/_C.cpython-312-x86_64-linux-gnu.so": "",
		sp + "/torch-2.9.0+cu130.dist-info/METADATA": "Metadata-Version: 2.1\nName: torch\nVersion: 2.9.0+cu130\n" +
			"Requires-Dist: nvidia-cuda-runtime==13.0.48; platform_system == 'Linux' and platform_machine == 'x86_64'\n",
		sp + "/nvidia_cuda_runtime-13.0.48.dist-info/RECORD":                              "nvidia/cu13/lib/libcudart.so.13,sha256=AAAA,1024\n",
		sp + "/nvidia/cu13/lib/libcudart.so.13":                                           "",
		"usr/local/lib/python3.12/dist-packages/torch/__init__.py":                        "",
		"usr/local/lib/python3.12/dist-packages/torch/version.py":                         "__version__ = '2.9.0+cpu'\ncuda = None\nhip = None\n",
		"usr/local/lib/python3.12/dist-packages/torch/_C.cpython-312-x86_64-linux-gnu.so": "",
	})

	rec, r := runRecord(t, env, prov, "--", "/opt/venv/bin/torchrun", "--nproc-per-node=8", "train.py")
	if r.code != abortCode {
		t.Errorf("exit %d, want %d: driver 550 cannot run CUDA 13.0\nstderr: %s", r.code, abortCode, r.stderr)
	}
	if status, msg := rec.status(t, "cuda-driver"); status != "error" || !strings.Contains(msg, "13.0") {
		t.Errorf("cuda-driver %s: %s", status, msg)
	}
	if py := rec.Image.Python; py.Interpreter != "/opt/venv/bin/python" || !strings.Contains(py.How, "#! line of /opt/venv/bin/torchrun") {
		t.Errorf("image.python = %+v, want the venv's python, from torchrun's #! line", py)
	}
	for _, f := range rec.Image.Frameworks {
		if judged := f.NotJudged == ""; judged != (f.Environment == "/opt/venv") {
			t.Errorf("%s %s in %s: not judged %q", f.Name, f.Version, f.Environment, f.NotJudged)
		}
	}
}

// An entrypoint script that sources a venv's activate before exec "$@"
// (venv's docs, "How venvs work") makes `python` the venv's, although the
// image's PATH names only the system's: the CPU build there is not judged,
// so cpu-build does not warn about it.
func TestShimJudgesTheVenvAnEntrypointScriptActivates(t *testing.T) {
	const sp = "opt/venv/lib/python3.11/site-packages"
	prov := filepath.Join(t.TempDir(), "provenance")
	// The command runs on this machine: a stand-in entrypoint.sh that
	// only execs "$@" sits last on PATH, after the image's.
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "entrypoint.sh"), []byte("#!/bin/sh\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("570.172.08", 12080)),
		"PATH=/usr/local/bin:/usr/bin:/bin:"+host, "PREFLIGHT_PROVENANCE_DIR="+prov)
	imageTree(t, envValue(env, "PREFLIGHT_ROOT"), map[string]string{
		"usr/bin/python3.11":                                       "#!ELF",
		"usr/bin/python3":                                          "->python3.11",
		"opt/venv/pyvenv.cfg":                                      "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n",
		"opt/venv/bin/python":                                      "->/usr/bin/python3.11",
		"opt/venv/bin/python3":                                     "->python",
		"opt/venv/bin/activate":                                    "# This file must be used with \"source bin/activate\" *from bash*\n",
		"usr/local/bin/entrypoint.sh":                              "#!/bin/sh\nset -e\n. /opt/venv/bin/activate\nexec \"$@\"\n",
		sp + "/torch/__init__.py":                                  "",
		sp + "/torch/version.py":                                   "__version__ = '2.7.1+cu126'\ncuda = '12.6'\nhip = None\n",
		sp + "/torch/_C.cpython-311-x86_64-linux-gnu.so":           "",
		"usr/local/lib/python3.11/dist-packages/torch/__init__.py": "",
		"usr/local/lib/python3.11/dist-packages/torch/version.py":  "__version__ = '2.7.1+cpu'\ncuda = None\nhip = None\n",
		"usr/local/lib/python3.11/dist-packages/torch/_C.cpython-311-x86_64-linux-gnu.so": "",
	})

	runActivated(t, env, prov, "/opt/venv/bin/python3", ". /opt/venv/bin/activate", "entrypoint.sh", "sh", "-c", "exit 0")
}

// `check --root IMAGE --image-config CONFIG` judges the Python the image's
// own command runs: a CPU torch for /usr/bin/python3, and a CUDA one in a
// venv no PATH entry names. The configs are imageconfig's testdata, made
// by buildah and umoci from its *.Containerfile: without a command,
// python3 on PATH decides and the CPU build is judged; with `ENTRYPOINT
// ["/opt/venv/bin/python", "train.py"]`, or `CMD ["./train.py"]` under
// `WORKDIR /app` with the venv's python on its #! line (umoci's bundle,
// --root BUNDLE), the venv's CUDA build is judged, and the record says
// whose command that is.
func TestShimCheckJudgesThePythonTheImageConfigsCommandRuns(t *testing.T) {
	const testdata = "../../preflight/imageconfig/testdata/"
	const sp = "opt/venv/lib/python3.12/site-packages"
	files := map[string]string{
		"usr/bin/python3.12":                             "#!ELF",
		"usr/bin/python3":                                "->python3.12",
		"opt/venv/pyvenv.cfg":                            "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n",
		"opt/venv/bin/python3":                           "->/usr/bin/python3.12",
		"opt/venv/bin/python":                            "->python3",
		"app/train.py":                                   "#!/opt/venv/bin/python\nimport torch\n",
		sp + "/torch/__init__.py":                        "",
		sp + "/torch/version.py":                         "__version__ = '2.7.1+cu126'\ncuda = '12.6'\nhip = None\n",
		sp + "/torch/_C.cpython-312-x86_64-linux-gnu.so": "",
		"usr/local/lib/python3.12/dist-packages/torch/__init__.py":                        "",
		"usr/local/lib/python3.12/dist-packages/torch/version.py":                         "__version__ = '2.7.1+cpu'\ncuda = None\nhip = None\n",
		"usr/local/lib/python3.12/dist-packages/torch/_C.cpython-312-x86_64-linux-gnu.so": "",
	}
	for _, tc := range []struct {
		name, config, interpreter, how string
		bundle                         bool
	}{
		{"NoCommand", "oci-image-config.json", "/usr/bin/python3", "python3 on PATH", false},
		{"Entrypoint", "buildah-entrypoint-config.json", "/opt/venv/bin/python", "the command, /opt/venv/bin/python; the command is the image config's Entrypoint and Cmd", false},
		{"CmdInWorkingDir", "umoci-cmd-config.json", "/opt/venv/bin/python", "the #! line of /app/train.py; the command is the runtime config's process.args", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("570.172.08", 12080)))
			root := envValue(env, "PREFLIGHT_ROOT")
			args := []string{"check", "--json", "--image-config", testdata + tc.config}
			if tc.bundle {
				root = filepath.Join(t.TempDir(), "bundle")
				b, err := os.ReadFile(testdata + tc.config)
				if err != nil {
					t.Fatal(err)
				}
				imageTree(t, root, map[string]string{"config.json": string(b)})
				args = []string{"check", "--json", "--root", root}
				root = filepath.Join(root, "rootfs")
			}
			imageTree(t, root, files)
			r := run(t, 30*time.Second, env, shimBin(t), args...)
			var rec imageRecord
			if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
				t.Fatalf("exit %d, no record: %v\nstderr: %s", r.code, err, r.stderr)
			}
			if py := rec.Image.Python; py.Interpreter != tc.interpreter || py.How != tc.how {
				t.Errorf("image.python = %+v, want %s: %s", py, tc.interpreter, tc.how)
			}
			status, msg := rec.status(t, "cpu-build")
			if cpu := tc.interpreter == "/usr/bin/python3"; (status == "pass") == cpu {
				t.Errorf("cpu-build %s: %s (judging the CPU torch: %v)", status, msg, cpu)
			}
		})
	}
}
