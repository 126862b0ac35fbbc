package image

import (
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// The layouts real images have, each built as the tool that writes it lays
// it out (the upstream file each follows is named in its comment), and for
// each what the preflight must conclude: the framework, its version, its
// CUDA build and kind of build, the environment it is found in, and the
// image's CUDA. docs/python-environments.md describes the rules.

// layoutWant is what one layout must give.
type layoutWant struct {
	framework, version, cuda, build string
	environment, kind               string
	pathFrom                        string // a substring of Framework.PathFrom
	imageCUDA, imageCUDAKind        string
	runtime                         string // Framework.CUDARuntime, when the layout states one
}

type layout struct {
	name    string
	build   func(t *testing.T, tr *tree)
	env     map[string]string
	argv    []string
	toolkit facts.CUDAToolkit // what preflight/container read of /usr/local/cuda
	want    layoutWant
}

// torchVersionPy is torch/version.py as tools/generate_torch_version.py
// writes it (pytorch/pytorch tools/generate_torch_version.py, the
// f.write lines of __version__, debug, cuda, git_version, hip).
func torchVersionPy(version, cuda string) string {
	c := "None"
	if cuda != "" {
		c = "'" + cuda + "'"
	}
	return "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n" +
		"__version__ = '" + version + "'\ndebug = False\ncuda: Optional[str] = " + c +
		"\ngit_version = '2236df1770800ffea5697b11b0bb0d910b2e59e1'\nhip: Optional[str] = None\n"
}

// baseCPython is a python.org or Debian interpreter the venvs point at.
func baseCPython(tr *tree, bin, name string) {
	tr.file(bin+"/"+name, "#!ELF")
	tr.link(bin+"/python3", name)
}

// venv lays out what CPython's Lib/venv/__init__.py creates
// (EnvBuilder.create: create_configuration writes pyvenv.cfg with home,
// include-system-site-packages and version; setup_python links
// bin/python3 to the base executable; the purelib
// lib/pythonX.Y/site-packages is created empty).
func venv(tr *tree, prefix, home, version string, system bool) string {
	inc := "false"
	if system {
		inc = "true"
	}
	tr.file(prefix+"/pyvenv.cfg", "home = "+home+"\ninclude-system-site-packages = "+inc+"\nversion = "+version+"\n")
	xy := version[:strings.LastIndex(version, ".")]
	tr.link(prefix+"/bin/python3", home+"/python"+xy)
	tr.link(prefix+"/bin/python", "python3")
	sp := prefix + "/lib/python" + xy + "/site-packages"
	tr.dir(sp)
	return sp
}

// judgedOne scans and judges the image in tr for argv and returns the one
// copy of framework judged.
func judgedOne(t *testing.T, tr *tree, env map[string]string, argv []string, framework string) (Result, facts.Container, facts.Framework, *facts.Python) {
	t.Helper()
	res, warnings := Scan(tr.Root(), env, argv...)
	fws, py := Judge(tr.Root(), env, res, argv)
	c := facts.Container{Frameworks: fws}
	var judged []facts.Framework
	for _, f := range c.Judged() {
		if f.Name == framework {
			judged = append(judged, f)
		}
	}
	if len(judged) != 1 {
		t.Fatalf("judged %s: %+v\nall: %+v\nwarnings %q; python %+v", framework, judged, fws, warnings, py)
	}
	return res, c, judged[0], py
}

func TestFrameworkLayoutsFromUpstreamTemplates(t *testing.T) {
	for _, l := range []layout{
		{
			// `python -m venv /opt/venv` then `ENV PATH=/opt/venv/bin:$PATH`
			// (venv's docs, "How venvs work": activation only puts bin on
			// PATH), and the torch cu121 wheel from pip with its nvidia-*
			// wheels, their libraries found through torch's DT_RUNPATH.
			name: "venv via PATH only",
			build: func(t *testing.T, tr *tree) {
				baseCPython(tr, "/usr/bin", "python3.11")
				sp := venv(tr, "/opt/venv", "/usr/bin", "3.11.2", false)
				pipTorch(t, tr, sp)
			},
			env:  map[string]string{"PATH": "/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			argv: []string{"python", "train.py"},
			want: layoutWant{framework: "torch", version: "2.4.0+cu121", cuda: "12.1", build: facts.BuildCUDA,
				environment: "/opt/venv", kind: pyenv.KindVenv, pathFrom: "site-packages",
				imageCUDA: "12.1", imageCUDAKind: facts.CUDAFromRuntime, runtime: "12.1.105"},
		},
		{
			// uv's Docker guide: WORKDIR /app, `uv sync` makes /app/.venv,
			// ENV PATH="/app/.venv/bin:$PATH"; uv writes pyvenv.cfg with
			// home, implementation, uv, version_info and
			// include-system-site-packages = false (uv's
			// crates/uv-virtualenv/src/virtualenv.rs, the pyvenv.cfg
			// keys). The PyPI torch wheel has no +cu tag: its version.py
			// says the CUDA, the nvidia-cuda-runtime-cu12 dist-info the
			// runtime.
			name: "uv /app/.venv",
			build: func(t *testing.T, tr *tree) {
				baseCPython(tr, "/usr/local/bin", "python3.12")
				tr.file("/app/.venv/pyvenv.cfg", "home = /usr/local/bin\nimplementation = CPython\nuv = 0.5.11\nversion_info = 3.12.8\ninclude-system-site-packages = false\nprompt = app\n")
				tr.link("/app/.venv/bin/python", "/usr/local/bin/python3.12")
				tr.link("/app/.venv/bin/python3", "python")
				sp := "/app/.venv/lib/python3.12/site-packages"
				tr.file(sp+"/torch/version.py", torchVersionPy("2.5.1", "12.4"))
				tr.dir(sp + "/torch-2.5.1.dist-info")
				tr.dir(sp + "/nvidia_cuda_runtime_cu12-12.4.127.dist-info")
			},
			env:  map[string]string{"PATH": "/app/.venv/bin:/usr/local/bin:/usr/bin:/bin"},
			argv: []string{"python", "-m", "app.train"},
			want: layoutWant{framework: "torch", version: "2.5.1", cuda: "12.4", build: facts.BuildCUDA,
				environment: "/app/.venv", kind: pyenv.KindVenv, pathFrom: "site-packages",
				imageCUDA: "12.4", imageCUDAKind: facts.CUDAFromRuntime, runtime: "12.4.127"},
		},
		{
			// Miniconda's installer run as root: its default prefix is
			// ~/miniconda3 (the installer's -p default, $HOME/miniconda3),
			// not on PATH; `conda install pytorch pytorch-cuda=12.1 -c
			// pytorch -c nvidia` adds NVIDIA's cuda-cudart package, whose
			// conda-meta record and lib/libcudart.so.12.1.105 state the
			// runtime.
			name: "/root/miniconda3",
			build: func(t *testing.T, tr *tree) {
				p := "/root/miniconda3"
				tr.file(p+"/bin/python3.11", "#!ELF")
				tr.link(p+"/bin/python", "python3.11")
				tr.file(p+"/conda-meta/cuda-cudart-12.1.105-0.json", `{"name": "cuda-cudart", "version": "12.1.105", "build": "0", "files": ["lib/libcudart.so.12.1.105"]}`)
				tr.file(p+"/conda-meta/pytorch-2.3.1-py3.11_cuda12.1_cudnn8.9.2_0.json", `{"name": "pytorch", "version": "2.3.1", "build": "py3.11_cuda12.1_cudnn8.9.2_0"}`)
				tr.file(p+"/lib/libcudart.so.12.1.105", "ELF")
				tr.link(p+"/lib/libcudart.so.12", "libcudart.so.12.1.105")
				sp := p + "/lib/python3.11/site-packages"
				tr.file(sp+"/torch/version.py", torchVersionPy("2.3.1", "12.1"))
				tr.dir(sp + "/torch-2.3.1.dist-info")
			},
			want: layoutWant{framework: "torch", version: "2.3.1", cuda: "12.1", build: facts.BuildCUDA,
				environment: "/root/miniconda3", kind: pyenv.KindConda, pathFrom: "site-packages",
				imageCUDA: "12.1", imageCUDAKind: facts.CUDAFromRuntime, runtime: "12.1.105"},
		},
		{
			// Miniforge installed with -p /opt/miniforge3 and put on PATH;
			// conda-forge's pytorch for CUDA 12.6 and its cuda-cudart
			// (the conda-meta record is named <name>-<version>-<build>.json,
			// conda's PrefixRecord).
			name: "/opt/miniforge3",
			build: func(t *testing.T, tr *tree) {
				p := "/opt/miniforge3"
				tr.file(p+"/bin/python3.12", "#!ELF")
				tr.link(p+"/bin/python3", "python3.12")
				tr.file(p+"/conda-meta/cuda-cudart-12.6.77-h5888daf_0.json", `{"name": "cuda-cudart", "version": "12.6.77", "build": "h5888daf_0"}`)
				tr.file(p+"/conda-meta/cuda-version-12.6-h7480c83_3.json", `{"name": "cuda-version", "version": "12.6", "build": "h7480c83_3"}`)
				sp := p + "/lib/python3.12/site-packages"
				tr.file(sp+"/torch/version.py", torchVersionPy("2.5.1", "12.6"))
				tr.dir(sp + "/torch-2.5.1.dist-info")
			},
			env:  map[string]string{"PATH": "/opt/miniforge3/bin:/usr/bin:/bin"},
			argv: []string{"python3", "train.py"},
			want: layoutWant{framework: "torch", version: "2.5.1", cuda: "12.6", build: facts.BuildCUDA,
				environment: "/opt/miniforge3", kind: pyenv.KindConda, pathFrom: "site-packages",
				imageCUDA: "12.6", imageCUDAKind: facts.CUDAFromRuntime, runtime: "12.6.77"},
		},
		{
			// pyenv's README ("Set up your shell environment"): PYENV_ROOT,
			// $PYENV_ROOT/shims on PATH, `pyenv global 3.11.9` writing
			// $PYENV_ROOT/version; PaddlePaddle 2.6.0 for CUDA 12.0 with
			// its write_version_py module. The distribution's libcudart
			// (Ubuntu's libcudart12 12.0.146) is the image's CUDA.
			name: "pyenv",
			build: func(t *testing.T, tr *tree) {
				pr := "/root/.pyenv"
				tr.file(pr+"/version", "3.11.9\n")
				tr.file(pr+"/shims/python", "#!/usr/bin/env bash\nexec \"/root/.pyenv/libexec/pyenv\" exec \"$program\" \"$@\"\n")
				v := pr + "/versions/3.11.9"
				tr.file(v+"/bin/python3.11", "#!ELF")
				tr.link(v+"/bin/python3", "python3.11")
				sp := v + "/lib/python3.11/site-packages"
				tr.file(sp+"/paddle/version/__init__.py", strings.ReplaceAll(paddleVersion26, "'11.8'", "'12.0'"))
				tr.dir(sp + "/paddlepaddle_gpu-2.6.0.post120.dist-info")
				tr.file("/usr/lib/x86_64-linux-gnu/libcudart.so.12.0.146", "ELF")
				tr.link("/usr/lib/x86_64-linux-gnu/libcudart.so.12", "libcudart.so.12.0.146")
				tr.file("/var/lib/dpkg/info/libcudart12:amd64.list", "/usr/lib/x86_64-linux-gnu/libcudart.so.12.0.146\n")
			},
			env:  map[string]string{"PYENV_ROOT": "/root/.pyenv", "PATH": "/root/.pyenv/shims:/root/.pyenv/bin:/usr/bin:/bin"},
			argv: []string{"python", "train.py"},
			want: layoutWant{framework: "paddlepaddle", version: "2.6.0.post120", cuda: "12.0", build: facts.BuildCUDA,
				environment: "/root/.pyenv/versions/3.11.9", kind: pyenv.KindPyenv, pathFrom: "site-packages",
				imageCUDA: "12.0", imageCUDAKind: facts.CUDAFromDistribution},
		},
		{
			// `pip install --user` as USER user: site.py's user site,
			// ~/.local/lib/pythonX.Y/site-packages (Lib/site.py
			// _getuserbase and _get_path), next to Debian's python3.11.
			// CUDA_VERSION from an nvidia/cuda base stays below the
			// runtime wheel.
			name: "/home/user/.local",
			build: func(t *testing.T, tr *tree) {
				baseCPython(tr, "/usr/bin", "python3.11")
				tr.dir("/usr/lib/python3/dist-packages")
				tr.file("/usr/lib/python3.11/os.py", "")
				sp := "/home/user/.local/lib/python3.11/site-packages"
				tr.file(sp+"/torch/version.py", torchVersionPy("2.3.1+cu121", "12.1"))
				tr.dir(sp + "/torch-2.3.1+cu121.dist-info")
				tr.dir(sp + "/nvidia_cuda_runtime_cu12-12.1.105.dist-info")
			},
			env:  map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin", "CUDA_VERSION": "12.1.1"},
			argv: []string{"python3", "train.py"},
			want: layoutWant{framework: "torch", version: "2.3.1+cu121", cuda: "12.1", build: facts.BuildCUDA,
				environment: "/home/user/.local", kind: pyenv.KindUser, pathFrom: "user site",
				imageCUDA: "12.1", imageCUDAKind: facts.CUDAFromRuntime, runtime: "12.1.105"},
		},
		{
			// `python setup.py develop` (setuptools'
			// setuptools/command/develop.py, install_for_development):
			// <name>.egg-link names the checkout, easy-install.pth puts it
			// on sys.path, the checkout holds torch/ and torch.egg-info/.
			// pytorch/pytorch's Dockerfile builds under /opt/conda.
			name: "egg-link",
			build: func(t *testing.T, tr *tree) {
				p := "/opt/conda"
				tr.file(p+"/bin/python3.10", "#!ELF")
				tr.link(p+"/bin/python", "python3.10")
				tr.dir(p + "/conda-meta")
				sp := p + "/lib/python3.10/site-packages"
				tr.file(sp+"/torch.egg-link", "/workspace/pytorch\n.")
				tr.file(sp+"/easy-install.pth", "/workspace/pytorch\n")
				tr.file("/workspace/pytorch/torch/version.py", torchVersionPy("2.6.0a0+git1eba9b3", "12.4"))
				tr.dir("/workspace/pytorch/torch.egg-info")
			},
			env:     map[string]string{"PATH": "/opt/conda/bin:/usr/bin:/bin"},
			argv:    []string{"python", "train.py"},
			toolkit: facts.CUDAToolkit{Version: "12.4", Full: "12.4.1", Source: "/usr/local/cuda/version.json", Kind: facts.CUDAFromToolkit},
			want: layoutWant{framework: "torch", version: "2.6.0a0+git1eba9b3", cuda: "12.4", build: facts.BuildCUDA,
				environment: "/opt/conda", kind: pyenv.KindConda, pathFrom: ".pth /opt/conda/lib/python3.10/site-packages/easy-install.pth",
				imageCUDA: "12.4", imageCUDAKind: facts.CUDAFromToolkit},
		},
		{
			// `python setup.py install` as pytorch/pytorch's Dockerfile
			// ran it (setuptools' easy_install: a
			// torch-<version>-py3.10-linux-x86_64.egg directory with
			// EGG-INFO/, listed in easy-install.pth between the
			// sys.__plen and sys.__egginsert lines). CUDA 11.8 from
			// conda's cudatoolkit package.
			name: ".egg directory",
			build: func(t *testing.T, tr *tree) {
				p := "/opt/conda"
				tr.file(p+"/bin/python3.10", "#!ELF")
				tr.link(p+"/bin/python", "python3.10")
				tr.file(p+"/conda-meta/cudatoolkit-11.8.0-h6a678d5_0.json", `{"name": "cudatoolkit", "version": "11.8.0", "build": "h6a678d5_0"}`)
				sp := p + "/lib/python3.10/site-packages"
				egg := sp + "/torch-2.1.0a0+git7bcf7da-py3.10-linux-x86_64.egg"
				tr.file(sp+"/easy-install.pth", "import sys; sys.__plen = len(sys.path)\n./torch-2.1.0a0+git7bcf7da-py3.10-linux-x86_64.egg\n"+
					"import sys; new = sys.path[sys.__plen:]; del sys.path[sys.__plen:]; p = getattr(sys, '__egginsert', 0); sys.path[p:p] = new; sys.__egginsert = p + len(new)\n")
				tr.file(egg+"/EGG-INFO/PKG-INFO", "Metadata-Version: 2.1\nName: torch\nVersion: 2.1.0a0+git7bcf7da\n")
				tr.file(egg+"/torch/version.py", torchVersionPy("2.1.0a0+git7bcf7da", "11.8"))
			},
			env:  map[string]string{"PATH": "/opt/conda/bin:/usr/bin:/bin"},
			argv: []string{"python", "train.py"},
			want: layoutWant{framework: "torch", version: "2.1.0a0+git7bcf7da", cuda: "11.8", build: facts.BuildCUDA,
				environment: "/opt/conda", kind: pyenv.KindConda, pathFrom: "easy-install.pth",
				imageCUDA: "11.8", imageCUDAKind: facts.CUDAFromRuntime, runtime: "11.8.0"},
		},
		{
			// `pip install -e .` with setuptools >= 64 (PEP 660):
			// setuptools/command/editable_wheel.py writes
			// __editable__.<name>-<version>.pth importing
			// __editable___<name>_<version>_finder, whose MAPPING maps
			// torch to the checkout (setuptools 66.1.1, Debian bookworm's:
			// _FINDER_TEMPLATE at line 753, "MAPPING = {mapping!r}" at
			// line 761; newer releases annotate it "MAPPING: dict[str,
			// str] ="); the dist-info stays in site-packages. The CUDA
			// must come from the real package's version.py. (pyenv's
			// TestEditableInstallsFromRealSetuptoolsAndPip makes one with
			// the real pip and setuptools.)
			name: "PEP 660 setuptools finder",
			build: func(t *testing.T, tr *tree) {
				baseCPython(tr, "/usr/bin", "python3.11")
				sp := venv(tr, "/opt/venv", "/usr/bin", "3.11.2", false)
				tr.file(sp+"/__editable__.torch-2.5.0a0+gitabc1234.pth", "import __editable___torch_2_5_0a0_gitabc1234_finder; __editable___torch_2_5_0a0_gitabc1234_finder.install()")
				tr.file(sp+"/__editable___torch_2_5_0a0_gitabc1234_finder.py", "from __future__ import annotations\nimport sys\n\nMAPPING: dict[str, str] = {'torch': '/src/pytorch/torch', 'torchgen': '/src/pytorch/torchgen'}\nNAMESPACES: dict[str, list[str]] = {}\nPATH_PLACEHOLDER = '__editable___torch_2_5_0a0_gitabc1234_finder' + \".__path_hook__\"\n")
				tr.file(sp+"/torch-2.5.0a0+gitabc1234.dist-info/direct_url.json", `{"dir_info": {"editable": true}, "url": "file:///src/pytorch"}`)
				tr.file("/src/pytorch/torch/version.py", torchVersionPy("2.5.0a0+gitabc1234", "12.4"))
				tr.dir("/src/pytorch/torchgen")
			},
			env:     map[string]string{"PATH": "/opt/venv/bin:/usr/bin:/bin"},
			argv:    []string{"python", "train.py"},
			toolkit: facts.CUDAToolkit{Version: "12.4", Full: "12.4.1", Source: "/usr/local/cuda/version.json", Kind: facts.CUDAFromToolkit},
			want: layoutWant{framework: "torch", version: "2.5.0a0+gitabc1234", cuda: "12.4", build: facts.BuildCUDA,
				environment: "/opt/venv", kind: pyenv.KindVenv, pathFrom: "editable finder",
				imageCUDA: "12.4", imageCUDAKind: facts.CUDAFromToolkit},
		},
		{
			// hatchling's editable wheel (hatchling/builders/wheel.py,
			// build_editable_detection: a _<name>.pth holding the project's
			// source directory), here a JAX checkout whose jax_plugins,
			// jaxlib and plugin dist-infos sit in that directory; jax
			// 0.4.30's CUDA 12 plugin was built with CUDA 12.3 (.bazelrc
			// at jax-v0.4.30), the runtime wheel beside it is 12.5.
			name: "hatch .pth",
			build: func(t *testing.T, tr *tree) {
				baseCPython(tr, "/usr/local/bin", "python3.11")
				sp := venv(tr, "/opt/venv", "/usr/local/bin", "3.11.9", false)
				tr.file(sp+"/_jaxproj.pth", "/src/jaxproj/src\n")
				d := "/src/jaxproj/src"
				tr.dir(d + "/jaxlib-0.4.30.dist-info")
				tr.dir(d + "/jax_cuda12_plugin-0.4.30.dist-info")
				tr.dir(d + "/jax_cuda12_pjrt-0.4.30.dist-info")
				tr.dir(d + "/jax_plugins/xla_cuda12")
				tr.dir(d + "/nvidia_cuda_runtime_cu12-12.5.82.dist-info")
			},
			env:  map[string]string{"PATH": "/opt/venv/bin:/usr/bin:/bin"},
			argv: []string{"python", "train.py"},
			want: layoutWant{framework: "jax", version: "0.4.30", cuda: "12.3", build: facts.BuildCUDA,
				environment: "/opt/venv", kind: pyenv.KindVenv, pathFrom: ".pth /opt/venv/lib/python3.11/site-packages/_jaxproj.pth",
				imageCUDA: "12.5", imageCUDAKind: facts.CUDAFromRuntime, runtime: "12.5.82"},
		},
		{
			// A venv with include-system-site-packages = false over
			// Debian's python3-torch-cuda (torch 2.6, CUDA 12.4, in
			// /usr/lib/python3/dist-packages, libcudart12 12.4.127): the
			// venv's own torch cu121 is judged, the system's is not.
			name: "include-system-site-packages = false shadowing",
			build: func(t *testing.T, tr *tree) {
				baseCPython(tr, "/usr/bin", "python3.11")
				tr.file("/usr/lib/python3/dist-packages/torch/version.py", torchVersionPy("2.6.0", "12.4"))
				tr.file("/usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127", "ELF")
				sp := venv(tr, "/opt/venv", "/usr/bin", "3.11.2", false)
				tr.file(sp+"/torch/version.py", torchVersionPy("2.5.1+cu121", "12.1"))
				tr.dir(sp + "/torch-2.5.1+cu121.dist-info")
				tr.dir(sp + "/nvidia_cuda_runtime_cu12-12.1.105.dist-info")
			},
			env:  map[string]string{"PATH": "/opt/venv/bin:/usr/bin:/bin"},
			argv: []string{"python", "train.py"},
			want: layoutWant{framework: "torch", version: "2.5.1+cu121", cuda: "12.1", build: facts.BuildCUDA,
				environment: "/opt/venv", kind: pyenv.KindVenv, pathFrom: "site-packages",
				imageCUDA: "12.1", imageCUDAKind: facts.CUDAFromRuntime, runtime: "12.1.105"},
		},
		{
			// jax's ROCm plugins (jaxlib/tools/build_gpu_kernels_wheel.py
			// prepare_wheel_rocm: jax_rocm{version}_plugin) in the system
			// site of the rocm/jax images.
			name: "jax ROCm plugin",
			build: func(t *testing.T, tr *tree) {
				baseCPython(tr, "/usr/local/bin", "python3.10")
				sp := "/usr/local/lib/python3.10/site-packages"
				tr.dir(sp + "/jaxlib-0.4.35.dist-info")
				tr.dir(sp + "/jax_rocm60_plugin-0.4.35.dist-info")
				tr.dir(sp + "/jax_rocm60_pjrt-0.4.35.dist-info")
				tr.dir(sp + "/jax_plugins/xla_rocm60")
			},
			env:  map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"},
			argv: []string{"python3", "train.py"},
			want: layoutWant{framework: "jax", version: "0.4.35", cuda: "", build: facts.BuildROCm,
				environment: "/usr/local", kind: pyenv.KindSystem, pathFrom: "site-packages"},
		},
		{
			// AMD's tensorflow-rocm wheel: its dist-info gives the
			// version, build_info.py says is_rocm_build (TensorFlow's
			// tensorflow/tools/build_info/gen_build_info.py).
			name: "tensorflow-rocm",
			build: func(t *testing.T, tr *tree) {
				baseCPython(tr, "/usr/bin", "python3.10")
				tr.dir("/usr/lib/python3/dist-packages")
				sp := "/usr/local/lib/python3.10/dist-packages"
				tr.dir(sp + "/tensorflow_rocm-2.16.1.dist-info")
				tr.file(sp+"/tensorflow/python/platform/build_info.py", "import collections\nbuild_info = collections.OrderedDict([('cpu_compiler', '/usr/lib/llvm-17/bin/clang'), ('is_cuda_build', False), ('is_rocm_build', True), ('is_tensorrt_build', False), ('rocm_version', '6.1.0')])\n")
			},
			env:  map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"},
			argv: []string{"python3", "train.py"},
			want: layoutWant{framework: "tensorflow", version: "2.16.1", cuda: "", build: facts.BuildROCm,
				environment: "/usr", kind: pyenv.KindSystem, pathFrom: "site-packages"},
		},
	} {
		t.Run(l.name, func(t *testing.T) {
			tr := newTree(t)
			l.build(t, tr)
			res, c, f, _ := judgedOne(t, tr, l.env, l.argv, l.want.framework)
			w := l.want
			if f.Version != w.version || f.CUDAVersion != w.cuda || f.Build != w.build {
				t.Errorf("%s %s, CUDA %q, build %q; want %s, CUDA %q, build %q", f.Name, f.Version, f.CUDAVersion, f.Build, w.version, w.cuda, w.build)
			}
			if f.Environment != w.environment || f.EnvironmentKind != w.kind || !strings.Contains(f.PathFrom, w.pathFrom) {
				t.Errorf("environment %s (%s), from %q; want %s (%s), from %q", f.Environment, f.EnvironmentKind, f.PathFrom, w.environment, w.kind, w.pathFrom)
			}
			if w.runtime != "" && f.CUDARuntime != w.runtime {
				t.Errorf("CUDA runtime %q (%s), want %q", f.CUDARuntime, f.CUDARuntimeSource, w.runtime)
			}
			img := ImageCUDA(c.Judged(), res.CUDASources, l.toolkit, l.env)
			if img.Version != w.imageCUDA || img.Kind != w.imageCUDAKind {
				t.Errorf("image CUDA %q from %q (%s), want %q from %q", img.Version, img.Kind, img.Source, w.imageCUDA, w.imageCUDAKind)
			}
		})
	}
}

// The system site's torch is not judged for a venv that excludes it, even
// when the venv holds no torch of its own.
func TestVenvWithoutSystemSiteDoesNotJudgeTheSystemsFramework(t *testing.T) {
	tr := newTree(t)
	baseCPython(tr, "/usr/bin", "python3.11")
	tr.file("/usr/lib/python3/dist-packages/torch/version.py", torchVersionPy("2.6.0", "12.4"))
	sp := venv(tr, "/opt/venv", "/usr/bin", "3.11.2", false)
	tr.dir(sp + "/numpy-2.1.0.dist-info")
	env := map[string]string{"PATH": "/opt/venv/bin:/usr/bin:/bin"}
	res, _ := Scan(tr.Root(), env)
	fws, _ := Judge(tr.Root(), env, res, []string{"python", "train.py"})
	if len(fws) != 1 || !strings.Contains(fws[0].NotJudged, "include-system-site-packages = false") {
		t.Errorf("frameworks %+v: the system torch must be recorded, not judged", fws)
	}
	// The same image with the venv including the system site judges it.
	tr.file("/opt/venv/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = true\nversion = 3.11.2\n")
	res, _ = Scan(tr.Root(), env)
	fws, _ = Judge(tr.Root(), env, res, []string{"python", "train.py"})
	if len(fws) != 1 || fws[0].NotJudged != "" || fws[0].PathFrom != pyenv.FromBaseSite {
		t.Errorf("frameworks %+v: with the system site included its torch is judged, from the base site", fws)
	}
}

// A console script (torchrun) runs the Python its #! line names: that
// interpreter's environment decides, not the first python3 on PATH.
func TestConsoleScriptsShebangPicksTheInterpreter(t *testing.T) {
	tr := newTree(t)
	baseCPython(tr, "/usr/bin", "python3.11")
	tr.file("/usr/lib/python3/dist-packages/torch/version.py", torchVersionPy("2.6.0", "12.4"))
	sp := venv(tr, "/opt/venv", "/usr/bin", "3.11.2", false)
	tr.file(sp+"/torch/version.py", torchVersionPy("2.5.1+cu121", "12.1"))
	// pip's launcher (distlib's ScriptMaker) writes the venv's python.
	tr.file("/opt/venv/bin/torchrun", "#!/opt/venv/bin/python3\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom torch.distributed.run import main\n")
	env := map[string]string{"PATH": "/usr/bin:/bin"} // the venv is not on PATH
	res, _ := Scan(tr.Root(), env)
	fws, note := Judge(tr.Root(), env, res, []string{"/opt/venv/bin/torchrun", "--nproc-per-node=8", "train.py"})
	for _, f := range fws {
		if (f.NotJudged == "") != (f.Version == "2.5.1+cu121") {
			t.Errorf("%s %s judged=%v (%s): want only the venv's torch judged (%s)", f.Name, f.Version, f.NotJudged == "", f.NotJudged, note)
		}
	}
}
