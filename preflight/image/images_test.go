package image

import (
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/ldso/ldsotest"
)

// Images as they are built today (issue 36): CUDA 13's wheels, an
// interpreter per python3.Y, conda's own libraries, environments an
// entrypoint activates, free-threaded CPython, and copies Python cannot
// import. Each fixture names the upstream file it is laid out from.

// imageWant is what one image must give: the judged framework, the image's
// CUDA, cuDNN and NCCL, the Python that decided, and the copies not judged
// (a substring of why).
type imageWant struct {
	framework, version, cuda, environment string
	imageCUDA, cudnn, nccl                string
	interpreter                           string
	notJudged                             map[string]string // Location -> substring of NotJudged
}

type imageLayout struct {
	name  string
	build func(t *testing.T, tr *tree)
	env   map[string]string
	argv  []string
	want  imageWant
}

// torchPackage lays out a torch wheel's package: __init__.py, version.py
// and its _C extension module for a CPython ABI ("cpython-312").
func torchPackage(tr *tree, sp, version, cuda, soabi string) {
	tr.file(sp+"/torch/__init__.py", "")
	tr.file(sp+"/torch/version.py", torchVersionPy(version, cuda))
	tr.file(sp+"/torch/_C."+soabi+"-x86_64-linux-gnu.so", "")
}

// condaPrefix lays out a conda prefix (conda-meta/) with its interpreter.
func condaPrefix(tr *tree, p, name string) {
	tr.dir(p + "/conda-meta")
	tr.file(p+"/bin/"+name, "#!ELF")
	tr.link(p+"/bin/python", name)
}

// pixiTorches lays out pixi environments under /app (pixi's container
// guide), each with a torch of version and CUDA (name -> {version, cuda}).
func pixiTorches(tr *tree, envs map[string][2]string) {
	for env, v := range envs {
		p := "/app/.pixi/envs/" + env
		condaPrefix(tr, p, "python3.12")
		torchPackage(tr, p+"/lib/python3.12/site-packages", v[0], v[1], "cpython-312")
	}
}

// cu13Torch lays out PyPI's torch 2.11.0 (a CUDA 13.0 build) as pip
// installs it with its dependencies: cuda-toolkit 13.0.2's unsuffixed
// wheels in nvidia/cu13/lib, nvidia-cudnn-cu13 and nvidia-nccl-cu13 in
// their own directories (cuda_pathfinder's SITE_PACKAGES_LIBDIRS_LINUX),
// libtorch_cuda.so finding them through its DT_RUNPATH; versions from a
// pip freeze of torch 2.11.0+cu130.
func cu13Torch(t *testing.T, tr *tree, sp string) {
	t.Helper()
	rel := sp[1:]
	libs := map[string]string{
		"nvidia/cu13/lib/libcudart.so.13":   "libcudart.so.13",
		"nvidia/cu13/lib/libcublas.so.13":   "libcublas.so.13",
		"nvidia/cudnn/lib/libcudnn.so.9":    "libcudnn.so.9",
		"nvidia/nccl/lib/libnccl.so.2":      "libnccl.so.2",
		"nvidia/cu13/lib/libcusparse.so.12": "libcusparse.so.12",
	}
	var needs []string
	for p, soname := range libs {
		ldsotest.Build(t, tr.root, ldsotest.Lib{Path: rel + "/" + p, Soname: soname})
		needs = append(needs, rel+"/"+p)
	}
	for _, d := range []string{"nvidia_cuda_runtime-13.0.96", "nvidia_cublas-13.1.0.3", "nvidia_cusparse-12.6.3.3",
		"nvidia_cudnn_cu13-9.19.0.56", "nvidia_nccl_cu13-2.28.9"} {
		tr.file(sp+"/"+d+".dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-manylinux_2_27_x86_64\n")
	}
	tr.file(sp+"/nvidia/nccl/include/nccl.h", "#define NCCL_MAJOR 2\n#define NCCL_MINOR 28\n#define NCCL_PATCH 9\n")
	tr.file(sp+"/cuda_toolkit-13.0.2.dist-info/METADATA", cudaToolkitMetadata)
	tr.file(sp+"/torch-2.11.0.dist-info/METADATA", torchCU130Metadata)
	tr.file(sp+"/torch-2.11.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-manylinux_2_28_x86_64\n")
	torchPackage(tr, sp, "2.11.0+cu130", "13.0", "cpython-312")
	ldsotest.Build(t, tr.root, ldsotest.Lib{
		Path: rel + "/torch/lib/libtorch_cuda.so", Soname: "libtorch_cuda.so", Needs: needs,
		RunPath: "$ORIGIN/../../nvidia/cu13/lib:$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/nccl/lib:$ORIGIN",
	})
}

func TestImagesAsBuiltToday(t *testing.T) {
	const venvSP = "/opt/venv/lib/python3.12/site-packages"
	defaultPATH := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, l := range []imageLayout{
		{
			// `pip install torch` (PyPI's default is a CUDA 13.0 build from
			// 2.11) in a venv on PATH, as venv's docs activate one.
			name: "pip CUDA 13 torch",
			build: func(t *testing.T, tr *tree) {
				baseCPython(tr, "/usr/bin", "python3.12")
				venv(tr, "/opt/venv", "/usr/bin", "3.12.3", false)
				cu13Torch(t, tr, venvSP)
			},
			env:  map[string]string{"PATH": "/opt/venv/bin:" + defaultPATH},
			argv: []string{"python", "train.py"},
			want: imageWant{framework: "torch", version: "2.11.0+cu130", cuda: "13.0", environment: "/opt/venv",
				imageCUDA: "13.0", cudnn: "9.19.0.56", nccl: "2.28.9", interpreter: "/opt/venv/bin/python"},
		},
		{
			// jax[cuda13] (jax's setup.py: jax-cuda13-plugin[with-cuda];
			// jax_plugins/cuda/plugin_setup.py names the unsuffixed
			// toolkit wheels for CUDA 13, cuda_whl_sfx "", keeping CUDA
			// 12's floors): the plugin's major is its CUDA, the runtime
			// wheel the image's.
			name: "jax[cuda13]",
			build: func(t *testing.T, tr *tree) {
				baseCPython(tr, "/usr/local/bin", "python3.12")
				sp := "/usr/local/lib/python3.12/site-packages"
				tr.file(sp+"/jaxlib/__init__.py", "")
				tr.file(sp+"/jaxlib/version.py", "_version = \"0.7.2\"\n")
				tr.dir(sp + "/jaxlib-0.7.2.dist-info")
				tr.file(sp+"/jax_cuda13_plugin-0.7.2.dist-info/METADATA", "Metadata-Version: 2.1\nName: jax-cuda13-plugin\nVersion: 0.7.2\nRequires-Dist: jax-cuda13-pjrt==0.7.2\nProvides-Extra: with-cuda\nRequires-Dist: nvidia-cublas>=12.1.3.1; extra == \"with-cuda\"\nRequires-Dist: nvidia-cuda-runtime>=12.1.105; extra == \"with-cuda\"\nRequires-Dist: nvidia-cudnn-cu13<10.0,>=9.8; extra == \"with-cuda\"\nRequires-Dist: nvidia-nvvm; extra == \"with-cuda\"\n")
				tr.dir(sp + "/jax_cuda13_pjrt-0.7.2.dist-info")
				tr.file(sp+"/jax_plugins/xla_cuda13/__init__.py", "")
				tr.dir(sp + "/nvidia_cuda_runtime-13.0.96.dist-info")
				tr.dir(sp + "/nvidia_cudnn_cu13-9.13.0.50.dist-info")
				tr.file(sp+"/nvidia/cu13/lib/libcudart.so.13", "")
			},
			env:  map[string]string{"PATH": defaultPATH},
			argv: []string{"python3", "-m", "train"},
			want: imageWant{framework: "jax", version: "0.7.2", cuda: "13", environment: "/usr/local",
				imageCUDA: "13.0", cudnn: "9.13.0.50", interpreter: "/usr/local/bin/python3"},
		},
		{
			// conda-forge's pytorch in /opt/conda (pytorch-cpu-feedstock's
			// CUDA build): libtorch_cuda.so's DT_RUNPATH $ORIGIN/../../../..
			// is the prefix's lib, where conda-forge's cudnn and nccl
			// packages put libcudnn.so.9 and libnccl.so.2.
			name: "conda-forge torch",
			build: func(t *testing.T, tr *tree) {
				p := "/opt/conda"
				tr.file(p+"/bin/python3.12", "#!ELF")
				tr.link(p+"/bin/python", "python3.12")
				tr.file(p+"/conda-meta/cudnn-9.3.0.75-h93bb076_0.json", `{"name": "cudnn", "version": "9.3.0.75", "build": "h93bb076_0"}`)
				tr.file(p+"/conda-meta/nccl-2.23.4.1-h52f6c39_3.json", `{"name": "nccl", "version": "2.23.4.1", "build": "h52f6c39_3"}`)
				tr.file(p+"/conda-meta/cuda-cudart-12.6.77-h5888daf_0.json", `{"name": "cuda-cudart", "version": "12.6.77", "build": "h5888daf_0"}`)
				ldsotest.Build(t, tr.root, ldsotest.Lib{Path: "opt/conda/lib/libcudnn.so.9.3.0", Soname: "libcudnn.so.9"})
				tr.link(p+"/lib/libcudnn.so.9", "libcudnn.so.9.3.0")
				ldsotest.Build(t, tr.root, ldsotest.Lib{Path: "opt/conda/lib/libnccl.so.2.23.4", Soname: "libnccl.so.2"})
				tr.link(p+"/lib/libnccl.so.2", "libnccl.so.2.23.4")
				sp := p + "/lib/python3.12/site-packages"
				torchPackage(tr, sp, "2.5.1", "12.6", "cpython-312")
				tr.dir(sp + "/torch-2.5.1.dist-info")
				ldsotest.Build(t, tr.root, ldsotest.Lib{Path: sp[1:] + "/torch/lib/libtorch_cuda.so", Soname: "libtorch_cuda.so",
					Needs: []string{"opt/conda/lib/libcudnn.so.9.3.0", "opt/conda/lib/libnccl.so.2.23.4"}, RunPath: "$ORIGIN/../../../..:$ORIGIN"})
			},
			env:  map[string]string{"PATH": "/opt/conda/bin:" + defaultPATH},
			argv: []string{"python", "train.py"},
			want: imageWant{framework: "torch", version: "2.5.1", cuda: "12.6", environment: "/opt/conda",
				imageCUDA: "12.6", cudnn: "9.3.0.75", nccl: "2.23.4.1", interpreter: "/opt/conda/bin/python"},
		},
		{
			// micromamba-docker's multi_env example with ENV_NAME=env2
			// (its _activate_current_env.sh activates ${ENV_NAME}); env1
			// sorts first and holds a CPU torch.
			name: "micromamba ENV_NAME",
			build: func(t *testing.T, tr *tree) {
				for env, v := range map[string][3]string{"env1": {"2.5.1+cpu", "", "9.1.0.70"}, "env2": {"2.5.1", "12.4", "9.3.0.75"}} {
					p := "/opt/conda/envs/" + env
					tr.file(p+"/conda-meta/cudnn-"+v[2]+"-h93bb076_0.json", `{"name": "cudnn", "version": "`+v[2]+`", "build": "h93bb076_0"}`)
					tr.file(p+"/conda-meta/cuda-cudart-12.4.127-0.json", `{"name": "cuda-cudart", "version": "12.4.127", "build": "0"}`)
					tr.file(p+"/bin/python3.11", "#!ELF")
					tr.link(p+"/bin/python", "python3.11")
					torchPackage(tr, p+"/lib/python3.11/site-packages", v[0], v[1], "cpython-311")
				}
				tr.dir("/opt/conda/conda-meta")
			},
			env:  map[string]string{"PATH": defaultPATH, "MAMBA_ROOT_PREFIX": "/opt/conda", "ENV_NAME": "env2"},
			argv: []string{"python", "train.py"},
			want: imageWant{framework: "torch", version: "2.5.1", cuda: "12.4", environment: "/opt/conda/envs/env2",
				imageCUDA: "12.4", cudnn: "9.3.0.75", interpreter: "/opt/conda/envs/env2/bin/python",
				notJudged: map[string]string{"/opt/conda/envs/env1/lib/python3.11/site-packages/torch": "not on the sys.path of /opt/conda/envs/env2/bin/python"}},
		},
		{
			// pixi's container guide: the production stage copies
			// /app/.pixi/envs/prod into ubuntu:24.04 (no Python of its own)
			// and activates it from /app/entrypoint.sh (pixi shell-hook,
			// then exec "$@").
			name: "pixi production image",
			build: func(t *testing.T, tr *tree) {
				p := "/app/.pixi/envs/prod"
				tr.dir(p + "/conda-meta")
				tr.file(p+"/bin/python3.12", "#!ELF")
				tr.link(p+"/bin/python", "python3.12")
				torchPackage(tr, p+"/lib/python3.12/site-packages", "2.7.1", "12.8", "cpython-312")
				tr.file("/app/entrypoint.sh", "#!/bin/bash\nexport PATH=\"/app/.pixi/envs/prod/bin:$PATH\"\nexport CONDA_PREFIX=\"/app/.pixi/envs/prod\"\nexec \"$@\"\n")
			},
			env:  map[string]string{"PATH": defaultPATH},
			argv: []string{"/app/entrypoint.sh", "python", "-m", "my_project"},
			want: imageWant{framework: "torch", version: "2.7.1", cuda: "12.8", environment: "/app/.pixi/envs/prod",
				interpreter: "/app/.pixi/envs/prod/bin/python"},
		},
		{
			// Paddle's tools/dockerfile/Dockerfile.ubuntu20 (commit 0ab6998):
			// deadsnakes' python3.8 to 3.13, /usr/bin/python and python3
			// linked to python3.9; Paddle installed with python3.10 -m pip
			// lands in /usr/local/lib/python3.10/dist-packages.
			name: "Paddle, python3.10 beside python3",
			build: func(t *testing.T, tr *tree) {
				for _, v := range []string{"3.9", "3.10", "3.12"} {
					tr.file("/usr/bin/python"+v, "#!ELF")
				}
				tr.link("/usr/bin/python3", "python3.9")
				tr.link("/usr/bin/python", "python3.9")
				tr.dir("/usr/lib/python3/dist-packages")
				sp := "/usr/local/lib/python3.10/dist-packages"
				tr.file(sp+"/paddle/__init__.py", "")
				tr.file(sp+"/paddle/version/__init__.py", strings.ReplaceAll(paddleVersion26, "'11.8'", "'12.0'"))
				tr.file(sp+"/paddlepaddle_gpu-2.6.0.post120.dist-info/WHEEL", "Wheel-Version: 1.0\nTag: cp310-cp310-linux_x86_64\n")
			},
			env:  map[string]string{"PATH": defaultPATH},
			argv: []string{"python3.10", "train.py"},
			want: imageWant{framework: "paddlepaddle", version: "2.6.0.post120", cuda: "12.0", environment: "/usr",
				interpreter: "/usr/bin/python3.10"},
		},
		{
			// A free-threaded CPython (python.org's --disable-gil build:
			// bin/python3.13t, lib/python3.13t/site-packages, Lib/site.py's
			// abi_thread) beside the default build, and torch's cp313t
			// wheel (pytorch's FULL_PYTHON_VERSIONS has "3.13t").
			name: "free-threaded CPython",
			build: func(t *testing.T, tr *tree) {
				tr.file("/usr/local/bin/python3.13", "#!ELF")
				tr.file("/usr/local/bin/python3.13t", "#!ELF")
				tr.link("/usr/local/bin/python3", "python3.13")
				tr.dir("/usr/local/lib/python3.13/site-packages")
				sp := "/usr/local/lib/python3.13t/site-packages"
				torchPackage(tr, sp, "2.6.0+cu126", "12.6", "cpython-313t")
				tr.file(sp+"/torch-2.6.0+cu126.dist-info/WHEEL", "Wheel-Version: 1.0\nTag: cp313-cp313t-manylinux_2_28_x86_64\n")
			},
			env:  map[string]string{"PATH": defaultPATH},
			argv: []string{"python3.13t", "train.py"},
			want: imageWant{framework: "torch", version: "2.6.0+cu126", cuda: "12.6", environment: "/usr/local",
				interpreter: "/usr/local/bin/python3.13t"},
		},
		{
			// torch 2.9.0+cu130 from PyTorch's cu130 index: its METADATA
			// pins the unsuffixed toolkit wheels itself (pytorch/pytorch
			// .github/scripts/generate_binary_build_matrix.py,
			// PYTORCH_EXTRA_INSTALL_REQUIREMENTS["13.0"]), no cuda-toolkit.
			name: "torch +cu130 from the cu130 index",
			build: func(t *testing.T, tr *tree) {
				baseCPython(tr, "/usr/bin", "python3.12")
				venv(tr, "/opt/venv", "/usr/bin", "3.12.3", false)
				torchPackage(tr, venvSP, "2.9.0+cu130", "13.0", "cpython-312")
				tr.file(venvSP+"/torch-2.9.0+cu130.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 2.9.0+cu130\n"+
					"Requires-Dist: nvidia-cuda-runtime==13.0.48; platform_system == 'Linux' and platform_machine == 'x86_64'\n"+
					"Requires-Dist: nvidia-cudnn-cu13==9.13.0.50; platform_system == 'Linux' and platform_machine == 'x86_64'\n"+
					"Requires-Dist: nvidia-cublas==13.0.0.19; platform_system == 'Linux' and platform_machine == 'x86_64'\n"+
					"Requires-Dist: nvidia-nccl-cu13==2.27.7; platform_system == 'Linux' and platform_machine == 'x86_64'\n")
				for dist, file := range map[string]string{"nvidia_cuda_runtime-13.0.48": "nvidia/cu13/lib/libcudart.so.13",
					"nvidia_cublas-13.0.0.19": "nvidia/cu13/lib/libcublas.so.13", "nvidia_cudnn_cu13-9.13.0.50": "nvidia/cudnn/lib/libcudnn.so.9",
					"nvidia_nccl_cu13-2.27.7": "nvidia/nccl/lib/libnccl.so.2"} {
					tr.file(venvSP+"/"+dist+".dist-info/RECORD", file+",sha256=AAAA,1024\n")
					tr.file(venvSP+"/"+file, "")
				}
			},
			env:  map[string]string{"PATH": "/opt/venv/bin:" + defaultPATH},
			argv: []string{"python", "train.py"},
			want: imageWant{framework: "torch", version: "2.9.0+cu130", cuda: "13.0", environment: "/opt/venv",
				imageCUDA: "13.0", cudnn: "9.13.0.50", nccl: "2.27.7", interpreter: "/opt/venv/bin/python"},
		},
		{
			// torchrun, the console script pip writes for torch's
			// entry point (pytorch/pytorch setup.py, "torchrun =
			// torch.distributed.run:main"), run by path from a venv no
			// PATH entry names: its #! line is the venv's python, and the
			// venv is scanned because the command runs it. A CPU torch
			// in the system site is not judged.
			name: "torchrun from a venv off PATH",
			build: func(t *testing.T, tr *tree) {
				baseCPython(tr, "/usr/bin", "python3.12")
				venv(tr, "/opt/venv", "/usr/bin", "3.12.3", false)
				tr.file("/opt/venv/bin/torchrun", "#!/opt/venv/bin/python\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom torch.distributed.run import main\n")
				torchPackage(tr, venvSP, "2.5.1+cu124", "12.4", "cpython-312")
				torchPackage(tr, "/usr/local/lib/python3.12/dist-packages", "2.5.1+cpu", "", "cpython-312")
			},
			env:  map[string]string{"PATH": defaultPATH},
			argv: []string{"/opt/venv/bin/torchrun", "--nproc-per-node=8", "train.py"},
			want: imageWant{framework: "torch", version: "2.5.1+cu124", cuda: "12.4", environment: "/opt/venv",
				interpreter: "/opt/venv/bin/python",
				notJudged:   map[string]string{"/usr/local/lib/python3.12/dist-packages/torch": "not on the sys.path of /opt/venv/bin/python"}},
		},
		{
			// Paddle's images (tools/dockerfile/Dockerfile.ubuntu20) run
			// through a shell: the -c script's python3.10 runs it.
			name: "sh -c naming python3.10",
			build: func(t *testing.T, tr *tree) {
				for _, v := range []string{"3.9", "3.10"} {
					tr.file("/usr/bin/python"+v, "#!ELF")
				}
				tr.link("/usr/bin/python3", "python3.9")
				tr.dir("/usr/lib/python3/dist-packages")
				sp := "/usr/local/lib/python3.10/dist-packages"
				tr.file(sp+"/paddle/__init__.py", "")
				tr.file(sp+"/paddle/version/__init__.py", strings.ReplaceAll(paddleVersion26, "'11.8'", "'12.0'"))
				tr.dir(sp + "/paddlepaddle_gpu-2.6.0.post120.dist-info")
			},
			env:  map[string]string{"PATH": defaultPATH},
			argv: []string{"/bin/sh", "-c", "cd /workspace && exec python3.10 -m paddle.distributed.launch train.py"},
			want: imageWant{framework: "paddlepaddle", version: "2.6.0.post120", cuda: "12.0", environment: "/usr",
				interpreter: "/usr/bin/python3.10"},
		},
		{
			// pixi's container guide's build stage: `pixi install -e
			// prod` beside the default environment, and /app/entrypoint.sh
			// made of `pixi shell-hook -e prod -s bash` and `exec "$@"`:
			// the script's exports decide, so default's CPU torch is not
			// judged.
			name: "pixi entrypoint choosing one of two environments",
			build: func(t *testing.T, tr *tree) {
				pixiTorches(tr, map[string][2]string{"default": {"2.7.1+cpu", ""}, "prod": {"2.7.1", "12.8"}})
				tr.file("/app/entrypoint.sh", "#!/bin/bash\nexport PATH=\"/app/.pixi/envs/prod/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"\n"+
					"export CONDA_PREFIX=\"/app/.pixi/envs/prod\"\nexport PIXI_ENVIRONMENT_NAME=\"prod\"\nexec \"$@\"\n")
			},
			env:  map[string]string{"PATH": defaultPATH},
			argv: []string{"/app/entrypoint.sh", "python", "-m", "my_project"},
			want: imageWant{framework: "torch", version: "2.7.1", cuda: "12.8", environment: "/app/.pixi/envs/prod",
				interpreter: "/app/.pixi/envs/prod/bin/python",
				notJudged:   map[string]string{"/app/.pixi/envs/default/lib/python3.12/site-packages/torch": "not on the sys.path of /app/.pixi/envs/prod/bin/python"}},
		},
		{
			// conda-forge's CUDA 12 packages put the libraries in
			// $PREFIX/targets/x86_64-linux/lib (targets/sbsa-linux on
			// aarch64) and link each from $PREFIX/lib
			// (conda-forge/cuda-cudart-feedstock recipe/build.sh); torch's
			// RUNPATH reaches lib/, and with no conda-meta record the real
			// file's name gives 12.6.77.
			name: "conda-forge libcudart in targets/x86_64-linux/lib",
			build: func(t *testing.T, tr *tree) {
				p := "/opt/conda"
				condaPrefix(tr, p, "python3.12")
				ldsotest.Build(t, tr.root, ldsotest.Lib{Path: "opt/conda/targets/x86_64-linux/lib/libcudart.so.12.6.77", Soname: "libcudart.so.12"})
				tr.link(p+"/targets/x86_64-linux/lib/libcudart.so.12", "libcudart.so.12.6.77")
				tr.link(p+"/lib/libcudart.so.12", "../targets/x86_64-linux/lib/libcudart.so.12")
				sp := p + "/lib/python3.12/site-packages"
				torchPackage(tr, sp, "2.5.1", "12.6", "cpython-312")
				ldsotest.Build(t, tr.root, ldsotest.Lib{Path: sp[1:] + "/torch/lib/libtorch_cuda.so", Soname: "libtorch_cuda.so",
					Needs: []string{"opt/conda/targets/x86_64-linux/lib/libcudart.so.12.6.77"}, RunPath: "$ORIGIN/../../../..:$ORIGIN"})
			},
			env:  map[string]string{"PATH": "/opt/conda/bin:" + defaultPATH},
			argv: []string{"python", "train.py"},
			want: imageWant{framework: "torch", version: "2.5.1", cuda: "12.6", environment: "/opt/conda",
				imageCUDA: "12.6", interpreter: "/opt/conda/bin/python"},
		},
		{
			// The same prefix as files alone, no ELF to follow and no
			// cuda-cudart or cuda-version record in conda-meta: the newest
			// libcudart.so.12.X.Y of the framework's major in the
			// prefix's lib or targets is its runtime.
			name: "conda-forge libcudart without a conda-meta record",
			build: func(t *testing.T, tr *tree) {
				p := "/opt/conda"
				condaPrefix(tr, p, "python3.12")
				tr.file(p+"/targets/x86_64-linux/lib/libcudart.so.12.6.77", "")
				tr.file(p+"/targets/x86_64-linux/lib/libcudart.so.11.8.89", "")
				tr.link(p+"/lib/libcudart.so.12", "../targets/x86_64-linux/lib/libcudart.so.12.6.77")
				torchPackage(tr, p+"/lib/python3.12/site-packages", "2.5.1", "12.6", "cpython-312")
			},
			env:  map[string]string{"PATH": "/opt/conda/bin:" + defaultPATH},
			argv: []string{"python", "train.py"},
			want: imageWant{framework: "torch", version: "2.5.1", cuda: "12.6", environment: "/opt/conda",
				imageCUDA: "12.6", interpreter: "/opt/conda/bin/python"},
		},
	} {
		t.Run(l.name, func(t *testing.T) { checkImage(t, l) })
	}
}

// checkImage scans and judges l and holds the result to l.want.
func checkImage(t *testing.T, l imageLayout) {
	t.Helper()
	tr := newTree(t)
	l.build(t, tr)
	res, c, f, py := judgedOne(t, tr, l.env, l.argv, l.want.framework)
	w := l.want
	if f.Version != w.version || f.CUDAVersion != w.cuda || f.Environment != w.environment {
		t.Errorf("%s %s, CUDA %q, in %s; want %s, CUDA %q, in %s", f.Name, f.Version, f.CUDAVersion, f.Environment, w.version, w.cuda, w.environment)
	}
	if py == nil || py.Interpreter != w.interpreter {
		t.Errorf("python %+v, want %s", py, w.interpreter)
	}
	if img := ImageCUDA(c.Judged(), res.CUDASources, facts.CUDAToolkit{}, l.env); img.Version != w.imageCUDA {
		t.Errorf("image CUDA %q from %s, want %q", img.Version, img.Source, w.imageCUDA)
	}
	if res.Stack.CuDNN.Version != w.cudnn || res.Stack.NCCL.Version != w.nccl {
		t.Errorf("cuDNN %+v, NCCL %+v; want %q, %q", res.Stack.CuDNN, res.Stack.NCCL, w.cudnn, w.nccl)
	}
	for loc, why := range w.notJudged {
		found := false
		for _, fw := range c.Frameworks {
			if fw.Location == loc {
				found = true
				if !strings.Contains(fw.NotJudged, why) {
					t.Errorf("%s not judged because %q, want %q", loc, fw.NotJudged, why)
				}
			}
		}
		if !found {
			t.Errorf("no framework at %s among %+v", loc, c.Frameworks)
		}
	}
}

// No copy Python cannot import is judged, and the record says why: an
// orphaned dist-info (Paddle's install docs have the CPU wheel uninstalled
// after the GPU one went over it), a package left without __init__.py, a
// torch whose _C is built for another CPython, and a pyenv version no
// shim on PATH runs.
func TestCopiesPythonCannotImportAreNeverJudged(t *testing.T) {
	const sp = "/usr/local/lib/python3.12/site-packages"
	for _, tc := range []struct {
		name  string
		build func(tr *tree)
		argv  []string
		loc   string
		why   string
	}{
		{"orphaned dist-info", func(tr *tree) {
			tr.file(sp+"/paddlepaddle_gpu-2.6.2.post120.dist-info/METADATA", "Metadata-Version: 2.1\nName: paddlepaddle-gpu\nVersion: 2.6.2.post120\n")
		}, []string{"python3", "train.py"}, sp + "/paddle", "an orphaned dist-info"},
		{"package without __init__", func(tr *tree) {
			tr.dir(sp + "/paddlepaddle_gpu-2.6.2.post120.dist-info")
			tr.file(sp+"/paddle/libs/libflashattn.so", "")
		}, []string{"python3", "train.py"}, sp + "/paddle", "has neither __init__.py nor version nor version.py"},
		{"_C for CPython 3.10", func(tr *tree) {
			torchPackage(tr, sp, "2.4.0+cu121", "12.1", "cpython-310")
		}, []string{"python3", "train.py"}, sp + "/torch", "is built for cp310, and /usr/local/bin/python3 is CPython 3.12"},
		{"cp313t wheel on the default build", func(tr *tree) {
			tr.file("/usr/local/bin/python3.13", "#!ELF")
			tr.dir("/usr/local/lib/python3.13/site-packages")
			torchPackage(tr, "/usr/local/lib/python3.13t/site-packages", "2.6.0", "12.6", "cpython-313t")
			tr.file("/usr/local/bin/python3.13t", "#!ELF")
		}, []string{"python3.13", "train.py"}, "/usr/local/lib/python3.13t/site-packages/torch", "not on the sys.path of /usr/local/bin/python3.13"},
		{"pyenv version without shims on PATH", func(tr *tree) {
			v := "/root/.pyenv/versions/3.10.14"
			tr.file(v+"/bin/python3.10", "#!ELF")
			tr.link(v+"/bin/python3", "python3.10")
			torchPackage(tr, v+"/lib/python3.10/site-packages", "2.3.1+cu121", "12.1", "cpython-310")
		}, []string{"python3", "train.py"}, "/root/.pyenv/versions/3.10.14/lib/python3.10/site-packages/torch", "not on the sys.path of /usr/local/bin/python3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			baseCPython(tr, "/usr/local/bin", "python3.12")
			tr.dir(sp)
			tc.build(tr)
			env := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"}
			res, _ := Scan(tr.Root(), env)
			fws, py := Judge(tr.Root(), env, res, tc.argv)
			for _, f := range fws {
				if f.Location != tc.loc {
					continue
				}
				if f.NotJudged == "" || !strings.Contains(f.NotJudged, tc.why) {
					t.Errorf("%s not judged because %q, want %q (python %+v)", f.Location, f.NotJudged, tc.why, py)
				}
				return
			}
			t.Errorf("no framework at %s: %+v", tc.loc, fws)
		})
	}
}

// pixi's environments under /app with nothing saying which the entrypoint
// activates: both are candidates, each judged and named by its
// environment.
func TestEveryCandidateIsJudgedWhenTheEnvironmentCannotBeKnown(t *testing.T) {
	tr := newTree(t)
	pixiTorches(tr, map[string][2]string{"default": {"2.7.1+cpu", ""}, "cuda": {"2.7.1", "12.8"}})
	env := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"}
	res, _ := Scan(tr.Root(), env)
	fws, py := Judge(tr.Root(), env, res, []string{"python", "train.py"})
	if py == nil || py.Interpreter != "" || len(py.Candidates) != 2 {
		t.Fatalf("python %+v, want two candidates", py)
	}
	for _, f := range fws {
		if f.NotJudged != "" || !f.Candidate {
			t.Errorf("%s %s in %s: judged %v, candidate %v", f.Name, f.Version, f.Environment, f.NotJudged == "", f.Candidate)
		}
	}
}

// The CUDA 13 wheels a torch cu130 loads are found, versioned by their
// unsuffixed dist-info, and held to cuda-toolkit's pins.
func TestCUDA13WheelsAreLoadedAndPinned(t *testing.T) {
	tr := newTree(t)
	baseCPython(tr, "/usr/bin", "python3.12")
	venv(tr, "/opt/venv", "/usr/bin", "3.12.3", false)
	const sp = "/opt/venv/lib/python3.12/site-packages"
	cu13Torch(t, tr, sp)
	env := map[string]string{"PATH": "/opt/venv/bin:/usr/bin:/bin"}
	res, _ := Scan(tr.Root(), env)
	rt := findCUDALibrary(t, res, "libcudart.so.13")
	if rt.Loaded.Path != sp+"/nvidia/cu13/lib/libcudart.so.13" || rt.Loaded.Version != "13.0.96" || rt.Wheel != "nvidia-cuda-runtime" {
		t.Errorf("libcudart %+v", rt)
	}
	if rt.BuiltFor != "13.0.96" || !strings.Contains(rt.BuiltForSource, "cuda_toolkit-13.0.2.dist-info/METADATA") {
		t.Errorf("libcudart built for %q (%s), want cuda-toolkit's pin", rt.BuiltFor, rt.BuiltForSource)
	}
	if nccl := findCUDALibrary(t, res, "libnccl.so.2"); nccl.Loaded.Version != "2.28.9" || nccl.BuiltFor != "2.28.9" || nccl.Wheel != "nvidia-nccl-cu13" {
		t.Errorf("libnccl %+v", nccl)
	}
	if sp := findCUDALibrary(t, res, "libcusparse.so.12"); sp.Loaded.Version != "12.6.3.3" {
		t.Errorf("libcusparse %+v: a shared nvidia/cu13/lib file is versioned by its own wheel", sp)
	}
}
