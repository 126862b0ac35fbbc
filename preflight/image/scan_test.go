package image

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin/fatbintest"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// tree builds an image root in a temporary directory.
type tree struct {
	t    testing.TB
	root string
}

func newTree(t testing.TB) *tree {
	t.Helper()
	return &tree{t: t, root: t.TempDir()}
}

func (tr *tree) Root() fsroot.Root { return fsroot.Root(tr.root) }

func (tr *tree) host(p string) string { return filepath.Join(tr.root, filepath.FromSlash(p)) }

// file writes content at p inside the root.
func (tr *tree) file(p, content string) {
	tr.t.Helper()
	h := tr.host(p)
	if err := os.MkdirAll(filepath.Dir(h), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(h, []byte(content), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

// dir makes directory p inside the root.
func (tr *tree) dir(p string) {
	tr.t.Helper()
	if err := os.MkdirAll(tr.host(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
}

// link makes p a symbolic link to target (absolute targets are inside the root).
func (tr *tree) link(p, target string) {
	tr.t.Helper()
	if err := os.MkdirAll(filepath.Dir(tr.host(p)), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.Symlink(target, tr.host(p)); err != nil {
		tr.t.Fatal(err)
	}
}

// so writes a synthetic shared object with one fatbin container per list.
func (tr *tree) so(p string, containers ...[]fatbintest.Entry) {
	tr.t.Helper()
	if err := os.MkdirAll(filepath.Dir(tr.host(p)), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := fatbintest.WriteSO(tr.host(p), containers...); err != nil {
		tr.t.Fatal(err)
	}
}

func cubin(sm int) fatbintest.Entry { return fatbintest.Entry{Kind: fatbintest.Cubin, SM: sm} }

func ptx(sm, isaMajor, isaMinor int) fatbintest.Entry {
	return fatbintest.Entry{Kind: fatbintest.PTX, SM: sm, PTXMajor: isaMajor, PTXMinor: isaMinor}
}

const (
	debianSP = "/usr/local/lib/python3.10/dist-packages"
	condaSP  = "/opt/conda/envs/train/lib/python3.11/site-packages"
)

// paddleTree is the done-when case: PaddlePaddle 2.6.0.post118 whose
// libpaddle.so carries sm_70 and sm_80 cubins, plus extra entries, in
// each of its two fatbins.
func paddleTree(t testing.TB, sp string, extra ...fatbintest.Entry) *tree {
	tr := newTree(t)
	tr.file(sp+"/paddle/version/__init__.py", paddleVersion26)
	tr.dir(sp + "/paddlepaddle_gpu-2.6.0.post118.dist-info")
	tr.so(sp+"/paddle/base/libpaddle.so", append([]fatbintest.Entry{cubin(70), cubin(80)}, extra...), append([]fatbintest.Entry{cubin(70), cubin(80)}, extra...))
	return tr
}

func findFramework(t *testing.T, res Result, name string) facts.Framework {
	t.Helper()
	for _, f := range res.Frameworks {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("framework %s not found in %+v", name, res.Frameworks)
	return facts.Framework{}
}

func TestScanPaddleWheelWithKernels(t *testing.T) {
	tr := paddleTree(t, debianSP, ptx(80, 7, 8))
	res, warnings := Scan(tr.Root(), nil)
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	f := findFramework(t, res, "paddlepaddle")
	if f.Version != "2.6.0.post118" || f.CUDAVersion != "11.8" || f.CuDNNVersion != "8.6.0" {
		t.Errorf("got %+v", f)
	}
	if f.Source != debianSP+"/paddle/version/__init__.py" || f.Location != debianSP+"/paddle" {
		t.Errorf("source %q location %q", f.Source, f.Location)
	}
	if want := []string{"sm_70", "sm_80", "compute_80"}; !slices.Equal(f.Archs, want) {
		t.Errorf("archs %q, want %q", f.Archs, want)
	}
	if len(f.Kernels) != 1 {
		t.Fatalf("kernels %+v", f.Kernels)
	}
	k := f.Kernels[0]
	fi, err := os.Stat(tr.host(debianSP + "/paddle/base/libpaddle.so"))
	if err != nil {
		t.Fatal(err)
	}
	if k.Path != debianSP+"/paddle/base/libpaddle.so" || k.Size != fi.Size() || k.ModTime != fi.ModTime().UnixNano() || k.Error != "" {
		t.Errorf("kernel library %+v", k)
	}
	want := []facts.KernelImage{
		{Kind: "cubin", Arch: "sm_70", Count: 2},
		{Kind: "cubin", Arch: "sm_80", Count: 2},
		{Kind: "ptx", Arch: "compute_80", PTXVersion: "7.8", Count: 2},
	}
	if !slices.Equal(k.Images, want) {
		t.Errorf("images %+v, want %+v", k.Images, want)
	}
	// Both fatbins carry the same three images: one group of two.
	if len(k.Fatbins) != 1 || k.Fatbins[0].Count != 2 || len(k.Fatbins[0].Images) != 3 {
		t.Errorf("fatbins %+v, want one group of 2 with 3 images", k.Fatbins)
	}
}

func TestScanPaddlePostTagGivesCUDAWithoutVersionFile(t *testing.T) {
	tr := newTree(t)
	tr.dir(debianSP + "/paddle")
	tr.dir(debianSP + "/paddlepaddle_gpu-2.6.0.post118.dist-info")
	res, _ := Scan(tr.Root(), nil)
	f := findFramework(t, res, "paddlepaddle")
	if f.Version != "2.6.0.post118" || f.CUDAVersion != "11.8" || f.Source != debianSP+"/paddlepaddle_gpu-2.6.0.post118.dist-info" {
		t.Errorf("got %+v", f)
	}
}

func TestScanPaddle3RecordsArchsAndPhiLibraries(t *testing.T) {
	tr := newTree(t)
	sp := "/usr/lib/python3/dist-packages" // Debian's python3 directory
	tr.file(sp+"/paddle/version/__init__.py", paddleVersion30)
	tr.dir(sp + "/paddlepaddle_gpu-3.0.0.dist-info")
	tr.so(sp+"/paddle/libs/libphi_gpu.so", []fatbintest.Entry{cubin(80), cubin(90)})
	tr.so(sp+"/paddle/libs/libphi_core.so", []fatbintest.Entry{cubin(86)})
	tr.file(sp+"/paddle/libs/libflashattn.so", "not scanned")
	res, _ := Scan(tr.Root(), nil)
	f := findFramework(t, res, "paddlepaddle")
	if f.Version != "3.0.0" || f.CUDAVersion != "12.6" {
		t.Errorf("got %+v", f)
	}
	var paths []string
	for _, k := range f.Kernels {
		paths = append(paths, k.Path)
	}
	if want := []string{sp + "/paddle/libs/libphi_core.so", sp + "/paddle/libs/libphi_gpu.so"}; !slices.Equal(paths, want) {
		t.Errorf("kernel libraries %q, want %q", paths, want)
	}
	if want := []string{"sm_80", "sm_86", "sm_90"}; !slices.Equal(f.Archs, want) {
		t.Errorf("archs %q, want %q", f.Archs, want)
	}
}

func TestScanTorch(t *testing.T) {
	tr := newTree(t)
	tr.file(debianSP+"/torch/version.py", strings.ReplaceAll(strings.ReplaceAll(torchVersionCU118, "11.8", "12.1"), "cu118", "cu121"))
	tr.dir(debianSP + "/torch-2.1.0+cu121.dist-info")
	tr.so(debianSP+"/torch/lib/libtorch_cuda.so", []fatbintest.Entry{cubin(80), cubin(86), cubin(90), ptx(90, 8, 1)})
	tr.so(debianSP + "/torch/lib/libc10_cuda.so") // no device code
	res, _ := Scan(tr.Root(), nil)
	f := findFramework(t, res, "torch")
	if f.Version != "2.1.0+cu121" || f.CUDAVersion != "12.1" || f.Source != debianSP+"/torch/version.py" {
		t.Errorf("got %+v", f)
	}
	if want := []string{"sm_80", "sm_86", "sm_90", "compute_90"}; !slices.Equal(f.Archs, want) {
		t.Errorf("archs %q, want %q", f.Archs, want)
	}
	if len(f.Kernels) != 2 || len(f.Kernels[1].Images) != 0 {
		t.Errorf("kernels %+v", f.Kernels)
	}
}

func TestScanTorchFromDistInfoOnly(t *testing.T) {
	tr := newTree(t)
	tr.dir(debianSP + "/torch-2.1.0+cu118.dist-info")
	res, _ := Scan(tr.Root(), nil)
	f := findFramework(t, res, "torch")
	if f.Version != "2.1.0+cu118" || f.CUDAVersion != "11.8" {
		t.Errorf("got %+v", f)
	}
}

func TestScanTorchCPUBuild(t *testing.T) {
	tr := newTree(t)
	tr.file(debianSP+"/torch/version.py", torchVersionCPU)
	res, _ := Scan(tr.Root(), nil)
	if f := findFramework(t, res, "torch"); f.CUDAVersion != "" || f.Version != "2.1.0+cpu" {
		t.Errorf("got %+v", f)
	}
}

func TestScanTensorFlowInVirtualEnv(t *testing.T) {
	tr := newTree(t)
	sp := "/venv/lib/python3.11/site-packages"
	tr.file(sp+"/tensorflow/python/platform/build_info.py", tfBuildInfo121)
	tr.dir(sp + "/tensorflow-2.15.0.dist-info")
	tr.so(sp+"/tensorflow/libtensorflow_cc.so.2", []fatbintest.Entry{cubin(80), ptx(90, 8, 1)})
	res, _ := Scan(tr.Root(), map[string]string{"VIRTUAL_ENV": "/venv"})
	if !slices.Equal(res.SitePackages, []string{sp}) {
		t.Errorf("site-packages %q", res.SitePackages)
	}
	f := findFramework(t, res, "tensorflow")
	if f.Version != "2.15.0" || f.CUDAVersion != "12.1" || f.CuDNNVersion != "8" {
		t.Errorf("got %+v", f)
	}
	want := []string{"sm_52", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "compute_90"}
	if !slices.Equal(f.Archs, want) {
		t.Errorf("archs %q, want %q (recorded and scanned merged)", f.Archs, want)
	}
}

func TestScanTensorFlowWithoutVirtualEnvIsNotFound(t *testing.T) {
	tr := newTree(t)
	tr.file("/venv/lib/python3.11/site-packages/tensorflow/python/platform/build_info.py", tfBuildInfo121)
	if res, _ := Scan(tr.Root(), nil); len(res.Frameworks) != 0 || len(res.SitePackages) != 0 {
		t.Errorf("got %+v", res)
	}
}

func TestScanJaxlibLocalTag(t *testing.T) {
	tr := newTree(t)
	sp := "/opt/conda/lib/python3.10/site-packages"
	tr.dir(sp + "/jaxlib-0.4.28+cuda12.cudnn89.dist-info")
	tr.dir(sp + "/jaxlib")
	res, _ := Scan(tr.Root(), nil)
	f := findFramework(t, res, "jax")
	if f.Version != "0.4.28+cuda12.cudnn89" || f.CUDAVersion != "12" || f.CuDNNVersion != "8.9" {
		t.Errorf("got %+v", f)
	}
}

// jax's CUDA is what its plugin was built with (0.4.30: 12.3), not the
// newer runtime wheel pip resolved beside it, which is its CUDARuntime.
func TestScanJaxCUDAIsThePluginsBuildCUDA(t *testing.T) {
	tr := newTree(t)
	sp := "/workspace/pylibs" // on PYTHONPATH
	tr.dir(sp + "/jaxlib-0.4.30.dist-info")
	tr.dir(sp + "/jax_cuda12_plugin-0.4.30.dist-info")
	tr.dir(sp + "/jax_cuda12_pjrt-0.4.30.dist-info")
	tr.dir(sp + "/nvidia_cuda_runtime_cu12-12.4.127.dist-info")
	tr.dir(sp + "/nvidia_cudnn_cu12-9.1.0.70.dist-info")
	tr.so(sp+"/jax_plugins/xla_cuda12/xla_cuda_plugin.so", []fatbintest.Entry{cubin(80), cubin(90)})
	res, _ := Scan(tr.Root(), map[string]string{"PYTHONPATH": "/nonexistent:" + sp})
	f := findFramework(t, res, "jax")
	if f.Version != "0.4.30" || f.CUDAVersion != "12.3" || f.CUDARuntime != "12.4.127" || f.CuDNNVersion != "9.1.0.70" {
		t.Errorf("got %+v", f)
	}
	if want := []string{"sm_80", "sm_90"}; !slices.Equal(f.Archs, want) {
		t.Errorf("archs %q", f.Archs)
	}
	if res.Stack.CuDNN.Version != "9.1.0.70" {
		t.Errorf("cuDNN from the pip wheel: %+v", res.Stack.CuDNN)
	}
}

func TestScanFrameworksInEverySitePackages(t *testing.T) {
	tr := paddleTree(t, condaSP)
	tr.file(debianSP+"/torch/version.py", torchVersionCU118)
	res, _ := Scan(tr.Root(), nil)
	if want := []string{debianSP, condaSP}; !slices.Equal(res.SitePackages, want) {
		t.Errorf("site-packages %q, want %q", res.SitePackages, want)
	}
	var names []string
	for _, f := range res.Frameworks {
		names = append(names, f.Name+"@"+f.Location)
	}
	want := []string{"torch@" + debianSP + "/torch", "paddlepaddle@" + condaSP + "/paddle"}
	if !slices.Equal(names, want) {
		t.Errorf("frameworks %q, want %q", names, want)
	}
}

func TestSitePackagesLinkedTwiceIsListedOnce(t *testing.T) {
	tr := newTree(t)
	tr.dir("/usr/lib/python3.10/site-packages")
	tr.link("/usr/local/lib/python3.10/site-packages", "/usr/lib/python3.10/site-packages")
	got := sitePackageDirs(tr.Root(), nil, nil)
	if want := []string{"/usr/local/lib/python3.10/site-packages"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestScanCorruptKernelLibraryIsAWarningNotAFailure(t *testing.T) {
	tr := newTree(t)
	tr.file(debianSP+"/torch/version.py", torchVersionCU118)
	tr.file(debianSP+"/torch/lib/libtorch_cuda.so", "\x7fELF but not really")
	res, warnings := Scan(tr.Root(), nil)
	f := findFramework(t, res, "torch")
	if len(f.Kernels) != 1 || f.Kernels[0].Error == "" || len(warnings) == 0 {
		t.Errorf("kernels %+v warnings %q", f.Kernels, warnings)
	}
}

func TestStackFromSystemHeadersAndLibraries(t *testing.T) {
	tr := newTree(t)
	// cuDNN 9 from apt: the alternatives link to the multiarch header.
	tr.file("/usr/include/x86_64-linux-gnu/cudnn_version_v9.h", cudnnVersionH9)
	tr.link("/usr/include/cudnn_version.h", "/etc/alternatives/cudnn_version_h")
	tr.link("/etc/alternatives/cudnn_version_h", "/usr/include/x86_64-linux-gnu/cudnn_version_v9.h")
	tr.file("/usr/lib/x86_64-linux-gnu/libnccl.so.2.19.3", "")
	tr.link("/usr/lib/x86_64-linux-gnu/libnccl.so.2", "libnccl.so.2.19.3")
	tr.file("/usr/include/x86_64-linux-gnu/NvInferVersion.h", nvInferVersionH10)
	tr.file("/usr/lib/x86_64-linux-gnu/libnvinfer.so.10.3.0", "")
	res, _ := Scan(tr.Root(), map[string]string{"NCCL_VERSION": "2.18.1-1"})
	want := facts.Stack{
		CuDNN:    facts.Component{Version: "9.1.0", Source: "/usr/include/cudnn_version.h"},
		NCCL:     facts.Component{Version: "2.19.3", Source: "/usr/lib/x86_64-linux-gnu/libnccl.so.2.19.3"},
		TensorRT: facts.Component{Version: "10.3.0", Source: "/usr/include/x86_64-linux-gnu/NvInferVersion.h"},
	}
	if res.Stack != want {
		t.Errorf("got %+v\nwant %+v", res.Stack, want)
	}
}

func TestStackCuDNN7FromCudnnH(t *testing.T) {
	tr := newTree(t)
	tr.file("/usr/local/cuda/include/cudnn.h", cudnnH7)
	tr.file("/usr/local/cuda/lib64/libcudnn.so.7", "")
	res, _ := Scan(tr.Root(), nil)
	if res.Stack.CuDNN.Version != "7.6.5" {
		t.Errorf("got %+v", res.Stack.CuDNN)
	}
}

func TestStackFromPipWheelsCU12(t *testing.T) {
	tr := newTree(t)
	tr.file(debianSP+"/nvidia/cudnn/lib/libcudnn.so.9", "")
	tr.file(debianSP+"/nvidia/cudnn/include/cudnn_version.h", cudnnVersionH9)
	tr.dir(debianSP + "/nvidia_cudnn_cu12-9.1.0.70.dist-info")
	tr.file(debianSP+"/nvidia/nccl/lib/libnccl.so.2", "")
	tr.dir(debianSP + "/nvidia_nccl_cu12-2.20.5.dist-info")
	res, _ := Scan(tr.Root(), nil)
	if got := res.Stack.CuDNN; got.Version != "9.1.0.70" || got.Source != debianSP+"/nvidia_cudnn_cu12-9.1.0.70.dist-info" {
		t.Errorf("cuDNN %+v", got)
	}
	if got := res.Stack.NCCL; got.Version != "2.20.5" {
		t.Errorf("NCCL %+v", got)
	}
}

// CUDA 13's NCCL and cuDNN wheels keep their suffix and their own
// directories (nvidia-nccl-cu13 writes nvidia/nccl/lib, as -cu12 does);
// only the toolkit components share nvidia/cu13/lib.
func TestStackFromPipWheelsCU13Layout(t *testing.T) {
	tr := newTree(t)
	tr.file(debianSP+"/nvidia/nccl/include/nccl.h", ncclH)
	tr.file(debianSP+"/nvidia/nccl/lib/libnccl.so.2", "")
	tr.dir(debianSP + "/nvidia_nccl_cu13-2.28.9.dist-info")
	tr.file(debianSP+"/nvidia/cu13/lib/libnvJitLink.so.13", "")
	res, _ := Scan(tr.Root(), nil)
	if got := res.Stack.NCCL; got.Version != "2.28.9" || got.Source != debianSP+"/nvidia_nccl_cu13-2.28.9.dist-info" {
		t.Errorf("NCCL %+v", got)
	}
}

func TestStackMajorOnlyLibraryLosesToEnvironment(t *testing.T) {
	tr := newTree(t)
	tr.file(debianSP+"/nvidia/nccl/lib/libnccl.so.2", "")
	res, _ := Scan(tr.Root(), map[string]string{"NCCL_VERSION": "2.25.1-1"})
	if got := res.Stack.NCCL; got.Version != "2.25.1" || got.Source != "env:NCCL_VERSION" {
		t.Errorf("NCCL %+v", got)
	}
}

func TestStackFromEnvironmentOnly(t *testing.T) {
	tr := newTree(t)
	res, _ := Scan(tr.Root(), map[string]string{"NV_CUDNN_VERSION": "9.8.0.87-1", "CUDNN_VERSION": "8.9.5.29", "NCCL_VERSION": "2.25.1-1"})
	want := facts.Stack{
		CuDNN: facts.Component{Version: "9.8.0.87", Source: "env:NV_CUDNN_VERSION"},
		NCCL:  facts.Component{Version: "2.25.1", Source: "env:NCCL_VERSION"},
	}
	if res.Stack != want {
		t.Errorf("got %+v", res.Stack)
	}
}

func TestStackFromLDLibraryPath(t *testing.T) {
	tr := newTree(t)
	tr.file("/opt/nccl/lib/libnccl.so.2.21.5", "")
	res, _ := Scan(tr.Root(), map[string]string{"LD_LIBRARY_PATH": "/opt/nccl/lib:relative"})
	if got := res.Stack.NCCL; got.Version != "2.21.5" {
		t.Errorf("NCCL %+v", got)
	}
}

func TestScanEmptyImage(t *testing.T) {
	tr := newTree(t)
	res, warnings := Scan(tr.Root(), nil)
	if len(res.Frameworks) != 0 || res.Stack != (facts.Stack{}) || len(warnings) != 0 {
		t.Errorf("got %+v %q", res, warnings)
	}
}

// remove deletes p inside the root.
func (tr *tree) remove(p string) {
	tr.t.Helper()
	if err := os.Remove(tr.host(p)); err != nil {
		tr.t.Fatal(err)
	}
}
