package image

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin/fatbintest"
	"github.com/gpu-preflight/gpu-preflight/preflight/ldso/ldsotest"
)

// withFatbin adds a .nv_fatbin section holding containers to the gcc-built
// object at host path p, as nvcc's device code sits in a real library.
func withFatbin(t *testing.T, p string, containers ...[]fatbintest.Entry) {
	t.Helper()
	dir := t.TempDir()
	so := filepath.Join(dir, "synthetic.so")
	if err := fatbintest.WriteSO(so, containers...); err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	data, err := f.Section(".nv_fatbin").Data()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	sec := filepath.Join(dir, "nv_fatbin")
	if err := os.WriteFile(sec, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("objcopy", "--add-section", ".nv_fatbin="+sec,
		"--set-section-flags", ".nv_fatbin=alloc,readonly", p).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
}

// Debian's layout: torch/_C links libtorch_python, which links the kernel
// libraries in the multiarch directory, none of them in torch/lib. The
// scan follows the closure from the extension module and records every
// library with a fatbin, with why it is there, and the one the framework
// opens on first use as lazy.
func TestKernelsFollowTheLoadClosureFromTheExtensionModule(t *testing.T) {
	tr := newTree(t)
	tr.file(debianSP+"/torch/version.py", torchVersionCU124)
	lib := "usr/lib/x86_64-linux-gnu/"
	sp := strings.TrimPrefix(debianSP, "/")
	for _, l := range []ldsotest.Lib{
		{Path: lib + "libnccl.so.2", Soname: "libnccl.so.2"},
		{Path: lib + "libcusolver.so.11", Soname: "libcusolver.so.11"},
		{Path: lib + "libtorch_cuda.so.2.6", Soname: "libtorch_cuda.so.2.6", Needs: []string{lib + "libnccl.so.2"}},
		{Path: lib + "libtorch_python.so.2.6", Soname: "libtorch_python.so.2.6", Needs: []string{lib + "libtorch_cuda.so.2.6"}},
		{Path: sp + "/torch/_C.cpython-313-x86_64-linux-gnu.so", Soname: "_C.cpython-313-x86_64-linux-gnu.so", Needs: []string{lib + "libtorch_python.so.2.6"}, RunPath: "$ORIGIN/lib"},
		{Path: sp + "/torch/lib/libtorch_cuda_linalg.so", Soname: "libtorch_cuda_linalg.so.2.6", Needs: []string{lib + "libcusolver.so.11"}},
	} {
		ldsotest.Build(t, tr.root, l)
	}
	withFatbin(t, tr.host("/"+lib+"libtorch_cuda.so.2.6"), []fatbintest.Entry{cubin(80), cubin(90), ptx(90, 8, 4)})
	withFatbin(t, tr.host("/"+lib+"libnccl.so.2"), []fatbintest.Entry{cubin(80), cubin(90)})
	withFatbin(t, tr.host("/"+lib+"libcusolver.so.11"), []fatbintest.Entry{cubin(80), cubin(90)})
	res, _ := Scan(tr.Root(), nil)
	f := findFramework(t, res, "torch")
	got := map[string]string{}
	for _, k := range f.Kernels {
		if len(k.Images) > 0 {
			lazy := ""
			if k.Lazy {
				lazy = " lazy"
			}
			got[k.Soname] = k.Why + lazy
		}
	}
	want := map[string]string{
		"libtorch_cuda.so.2.6": "DT_NEEDED of /" + lib + "libtorch_python.so.2.6",
		"libnccl.so.2":         "DT_NEEDED of /" + lib + "libtorch_cuda.so.2.6",
		"libcusolver.so.11":    "DT_NEEDED of " + debianSP + "/torch/lib/libtorch_cuda_linalg.so lazy",
	}
	if len(got) != len(want) {
		t.Errorf("kernel libraries %q, want %q", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
	if len(f.Archs) == 0 {
		t.Error("no archs recorded")
	}
}
