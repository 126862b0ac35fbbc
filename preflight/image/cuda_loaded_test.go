package image

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/ldso"
	"github.com/gpu-preflight/gpu-preflight/preflight/ldso/ldsotest"
)

const pipSP = "/usr/local/lib/python3.11/dist-packages"

// pipTorch lays out a torch cu12 wheel as pip installs it: torch's CUDA
// library with the wheel's DT_RUNPATH into the nvidia-* wheels beside it,
// those wheels' libraries under their real sonames, their dist-info, and
// torch's METADATA pinning them.
func pipTorch(t testing.TB, tr *tree, sp string) {
	t.Helper()
	ldsotest.Build(t, tr.root, ldsotest.Lib{Path: sp[1:] + "/nvidia/cudnn/lib/libcudnn.so.9", Soname: "libcudnn.so.9"})
	ldsotest.Build(t, tr.root, ldsotest.Lib{Path: sp[1:] + "/nvidia/cuda_runtime/lib/libcudart.so.12", Soname: "libcudart.so.12"})
	tr.dir(sp + "/nvidia_cudnn_cu12-9.1.0.70.dist-info")
	tr.dir(sp + "/nvidia_cuda_runtime_cu12-12.1.105.dist-info")
	tr.file(sp+"/torch/version.py", torchVersionCU121)
	tr.file(sp+"/torch-2.4.0.dist-info/METADATA", torchMetadata)
	ldsotest.Build(t, tr.root, ldsotest.Lib{
		Path: sp[1:] + "/torch/lib/libtorch_cuda.so", Soname: "libtorch_cuda.so",
		Needs:   []string{sp[1:] + "/nvidia/cudnn/lib/libcudnn.so.9", sp[1:] + "/nvidia/cuda_runtime/lib/libcudart.so.12"},
		RunPath: "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/cuda_runtime/lib:$ORIGIN",
	})
}

// condaCuDNN puts a conda environment's cuDNN 9.0.0 in /opt/conda/lib.
func condaCuDNN(t testing.TB, tr *tree) {
	ldsotest.Build(t, tr.root, ldsotest.Lib{Path: "opt/conda/lib/libcudnn.so.9.0.0", Soname: "libcudnn.so.9"})
	tr.link("/opt/conda/lib/libcudnn.so.9", "libcudnn.so.9.0.0")
}

const torchVersionCU121 = `__version__ = '2.4.0+cu121'
debug = False
cuda: Optional[str] = '12.1'
git_version = 'e4ee3be4063b7c430974252fdf7db42273388d86'
hip: Optional[str] = None
`

func findCUDALibrary(t *testing.T, res Result, name string) facts.CUDALibrary {
	t.Helper()
	for _, l := range res.CUDALibraries {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("%s not among %+v", name, res.CUDALibraries)
	return facts.CUDALibrary{}
}

func TestCUDAStackPipWheelsOneStack(t *testing.T) {
	tr := newTree(t)
	pipTorch(t, tr, pipSP)
	res, warnings := Scan(tr.Root(), nil)
	if len(warnings) != 0 {
		t.Errorf("warnings %q", warnings)
	}
	cudnn := findCUDALibrary(t, res, "libcudnn.so.9")
	want := facts.LibraryCopy{Path: pipSP + "/nvidia/cudnn/lib/libcudnn.so.9", Version: "9.1.0.70",
		VersionSource: pipSP + "/nvidia_cudnn_cu12-9.1.0.70.dist-info", Via: ldso.ViaRunPath, ViaObject: pipSP + "/torch/lib/libtorch_cuda.so"}
	if cudnn.Loaded != want || len(cudnn.Others) != 0 || cudnn.Framework != "torch" || cudnn.Library != "libcudnn" {
		t.Errorf("cudnn %+v, want loaded %+v and no other copy", cudnn, want)
	}
	if cudnn.BuiltFor != "9.1.0.70" || cudnn.BuiltForSource != pipSP+"/torch-2.4.0.dist-info/METADATA (nvidia_cudnn_cu12==9.1.0.70)" {
		t.Errorf("cudnn built for %q from %q", cudnn.BuiltFor, cudnn.BuiltForSource)
	}
	if rt := findCUDALibrary(t, res, "libcudart.so.12"); rt.Loaded.Version != "12.1.105" || rt.BuiltFor != "12.1.105" {
		t.Errorf("cudart %+v", rt)
	}
}

// A conda environment's older cuDNN on LD_LIBRARY_PATH comes before the
// wheel's DT_RUNPATH: it is the copy torch loads.
func TestCUDAStackCondaOnLDLibraryPathWins(t *testing.T) {
	tr := newTree(t)
	pipTorch(t, tr, pipSP)
	condaCuDNN(t, tr)
	res, _ := Scan(tr.Root(), map[string]string{"LD_LIBRARY_PATH": "/usr/local/nvidia/lib64:/opt/conda/lib"})
	cudnn := findCUDALibrary(t, res, "libcudnn.so.9")
	if cudnn.Loaded.Path != "/opt/conda/lib/libcudnn.so.9" || cudnn.Loaded.Version != "9.0.0" || cudnn.Loaded.Via != ldso.ViaLibraryPath {
		t.Errorf("loaded %+v, want conda's 9.0.0 through LD_LIBRARY_PATH", cudnn.Loaded)
	}
	if len(cudnn.Others) != 1 || cudnn.Others[0].Path != pipSP+"/nvidia/cudnn/lib/libcudnn.so.9" || cudnn.Others[0].Version != "9.1.0.70" || cudnn.Others[0].Via != "" {
		t.Errorf("others %+v, want the wheel's 9.1.0.70", cudnn.Others)
	}
}

// torch installed apart from its nvidia-* wheels (another sys.path entry):
// its DT_RUNPATH finds nothing, so torch/__init__.py preloads the wheels'
// libraries from sys.path.
func TestCUDAStackTorchPreloadsFromSysPath(t *testing.T) {
	tr := newTree(t)
	wheels := "/workspace/pylibs"
	ldsotest.Build(t, tr.root, ldsotest.Lib{Path: wheels[1:] + "/nvidia/cudnn/lib/libcudnn.so.9", Soname: "libcudnn.so.9"})
	tr.dir(wheels + "/nvidia_cudnn_cu12-9.1.0.70.dist-info")
	tr.file(debianSP+"/torch/version.py", torchVersionCU121)
	ldsotest.Build(t, tr.root, ldsotest.Lib{
		Path: debianSP[1:] + "/torch/lib/libtorch_global_deps.so", Soname: "libtorch_global_deps.so",
		Needs: []string{wheels[1:] + "/nvidia/cudnn/lib/libcudnn.so.9"}, RunPath: "$ORIGIN/../../nvidia/cudnn/lib",
	})
	res, _ := Scan(tr.Root(), map[string]string{"PYTHONPATH": wheels})
	cudnn := findCUDALibrary(t, res, "libcudnn.so.9")
	if cudnn.Loaded.Path != wheels+"/nvidia/cudnn/lib/libcudnn.so.9" || cudnn.Loaded.Via != ldso.ViaPreload {
		t.Errorf("loaded %+v, want torch's preload from %s", cudnn.Loaded, wheels)
	}
}

// A library no search step finds is recorded as not found.
func TestCUDAStackMissingLibrary(t *testing.T) {
	tr := newTree(t)
	tr.file(debianSP+"/torch/version.py", torchVersionCU121)
	ldsotest.Build(t, tr.root, ldsotest.Lib{Path: "tmp/libnccl.so.2", Soname: "libnccl.so.2"})
	ldsotest.Build(t, tr.root, ldsotest.Lib{Path: debianSP[1:] + "/torch/lib/libtorch_cuda.so", Soname: "libtorch_cuda.so", Needs: []string{"tmp/libnccl.so.2"}})
	tr.remove("/tmp/libnccl.so.2")
	res, _ := Scan(tr.Root(), nil)
	if n := findCUDALibrary(t, res, "libnccl.so.2"); n.Loaded.Path != "" {
		t.Errorf("loaded %+v", n.Loaded)
	}
}

// BenchmarkCUDAStackScan is a whole scan of a pip torch image with a second
// cuDNN in a conda environment on LD_LIBRARY_PATH:
//
//	go test ./preflight/image/ -run '^$' -bench CUDAStackScan -benchmem
func BenchmarkCUDAStackScan(b *testing.B) {
	tr := newTree(b)
	pipTorch(b, tr, pipSP)
	condaCuDNN(b, tr)
	env := map[string]string{"LD_LIBRARY_PATH": "/opt/conda/lib"}
	b.ResetTimer()
	for b.Loop() {
		if res, _ := Scan(tr.Root(), env); len(res.CUDALibraries) != 2 {
			b.Fatalf("%+v", res.CUDALibraries)
		}
	}
}
