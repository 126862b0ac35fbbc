package image

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// standIn is a wheel named and laid out as NVIDIA's or a framework's, with
// files that stand in for its libraries.
type standIn struct {
	name, version string
	files         []string          // package files, relative to site-packages
	requires      []string          // install_requires
	extras        map[string]string // extras_require, one requirement each
}

// setupPy writes the stub project's setup.py: its files as package data of
// namespace packages, as NVIDIA's wheels ship nvidia/<dir>/lib.
func (w standIn) setupPy() string {
	var b strings.Builder
	b.WriteString("from setuptools import setup, find_namespace_packages\n")
	b.WriteString("setup(name=" + quote(w.name) + ", version=" + quote(w.version) + ",\n")
	b.WriteString("    packages=find_namespace_packages(), package_data={'': ['*', '*.so*']}, zip_safe=False,\n")
	b.WriteString("    install_requires=[")
	for _, r := range w.requires {
		b.WriteString(quote(r) + ", ")
	}
	b.WriteString("],\n    extras_require={")
	for e, r := range w.extras {
		b.WriteString(quote(e) + ": [" + quote(r) + "], ")
	}
	b.WriteString("})\n")
	return b.String()
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "\\'") + "'" }

// realPip returns the machine's python3 with pip, setuptools and wheel
// (Debian's python3-pip; scripts/deps.sh installs it).
func realPip(t *testing.T) string {
	t.Helper()
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import setuptools, wheel, pip").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s with pip, setuptools and wheel is needed (apt-get install python3-pip python3-venv): %v", python, err)
		}
		t.Skipf("no %s with pip, setuptools and wheel: %v", python, err)
	}
	return python
}

// The CUDA 13 layout as the real pip installs it, offline from local
// stand-in wheels: torch 2.11's requirements through cuda-toolkit's
// extras pull the unsuffixed nvidia-cuda-runtime into nvidia/cu13/lib,
// nvidia-cudnn-cu13 and nvidia-nccl-cu13 into their own directories; the
// scan finds the runtime, cuDNN and NCCL from the dist-infos pip wrote, and
// the runtime's file in the RECORD pip wrote.
func TestCUDA13WheelsAsTheRealPipInstallsThem(t *testing.T) {
	python := realPip(t)
	work := t.TempDir()
	wheels := filepath.Join(work, "wheels")
	build := []string{"-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-w", wheels}
	for _, w := range []standIn{
		{name: "nvidia-cuda-runtime", version: "13.0.96", files: []string{"nvidia/cu13/lib/libcudart.so.13", "nvidia/cu13/include/cuda_runtime_api.h"}},
		{name: "nvidia-cudnn-cu13", version: "9.19.0.56", files: []string{"nvidia/cudnn/lib/libcudnn.so.9"}},
		{name: "nvidia-nccl-cu13", version: "2.28.9", files: []string{"nvidia/nccl/lib/libnccl.so.2"}},
		{name: "cuda-toolkit", version: "13.0.2", extras: map[string]string{"cudart": "nvidia-cuda-runtime==13.0.96.*"}},
		{name: "torch", version: "2.11.0", files: []string{"torch/__init__.py", "torch/version.py"},
			requires: []string{"cuda-toolkit[cudart]==13.0.2", "nvidia-cudnn-cu13==9.19.0.56", "nvidia-nccl-cu13==2.28.9"}},
	} {
		src := filepath.Join(work, "src", w.name)
		for _, f := range w.files {
			content := ""
			if strings.HasSuffix(f, "version.py") {
				content = torchVersionPy("2.11.0+cu130", "13.0")
			}
			writeFile(t, filepath.Join(src, f), content)
		}
		writeFile(t, filepath.Join(src, "setup.py"), w.setupPy())
		build = append(build, src)
	}
	run(t, python, build...)
	tr := newTree(t)
	baseCPython(tr, "/usr/bin", "python3.11")
	run(t, python, "-m", "venv", "--without-pip", tr.host("/opt/venv"))
	run(t, python, "-m", "pip", "--python", tr.host("/opt/venv/bin/python"), "install", "-q", "--no-index", "--find-links", wheels, "torch")
	// The venv's interpreter links to this machine's; inside the root it
	// is the stand-in /usr/bin/python3.11.
	if err := os.Remove(tr.host("/opt/venv/bin/python")); err != nil {
		t.Fatal(err)
	}
	tr.link("/opt/venv/bin/python", "/usr/bin/python3.11")
	tr.file("/opt/venv/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n")

	const sp = "/opt/venv/lib/python3.11/site-packages"
	for _, p := range []string{sp + "/nvidia/cu13/lib/libcudart.so.13", sp + "/nvidia_cuda_runtime-13.0.96.dist-info/RECORD", sp + "/cuda_toolkit-13.0.2.dist-info/METADATA"} {
		if _, err := os.Stat(tr.host(p)); err != nil {
			t.Fatalf("pip did not lay out %s: %v", p, err)
		}
	}
	env := map[string]string{"PATH": "/opt/venv/bin:/usr/bin:/bin"}
	res, _ := Scan(tr.Root(), env)
	fws, py := Judge(tr.Root(), env, res, []string{"python", "train.py"})
	if len(fws) != 1 || fws[0].NotJudged != "" || fws[0].CUDARuntime != "13.0.96" {
		t.Fatalf("frameworks %+v (python %+v): want torch judged with the nvidia-cuda-runtime 13.0.96 runtime", fws, py)
	}
	if res.Stack.CuDNN.Version != "9.19.0.56" || res.Stack.NCCL.Version != "2.28.9" {
		t.Errorf("cuDNN %+v, NCCL %+v", res.Stack.CuDNN, res.Stack.NCCL)
	}
	record, err := os.ReadFile(tr.host(sp + "/nvidia_cuda_runtime-13.0.96.dist-info/RECORD"))
	if listed, size := recordRow(record, "nvidia/cu13/lib/libcudart.so.13"); err != nil || !listed || size != 0 {
		t.Errorf("the RECORD pip wrote lists libcudart.so.13: %v, size %d (%v)\n%s", listed, size, err, record)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, out)
	}
}
