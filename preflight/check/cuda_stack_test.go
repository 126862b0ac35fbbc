package check

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

const wheelCuDNN = "/usr/local/lib/python3.11/dist-packages/nvidia/cudnn/lib/libcudnn.so.9"

func cudnnLib(loaded facts.LibraryCopy, builtFor string, others ...facts.LibraryCopy) facts.CUDALibrary {
	return facts.CUDALibrary{Framework: "torch", Name: "libcudnn.so.9", Library: "libcudnn", Wheel: "nvidia-cudnn-cu12",
		Loaded: loaded, BuiltFor: builtFor, BuiltForSource: "torch-2.4.0.dist-info/METADATA (nvidia_cudnn_cu12==9.1.0.70)", Others: others}
}

func TestCUDAStack(t *testing.T) {
	wheel := facts.LibraryCopy{Path: wheelCuDNN, Version: "9.1.0.70", Via: "DT_RUNPATH", ViaObject: "/usr/local/lib/python3.11/dist-packages/torch/lib/libtorch_cuda.so"}
	condaFirst := facts.LibraryCopy{Path: "/opt/conda/lib/libcudnn.so.9", Version: "9.0.0", Via: "LD_LIBRARY_PATH"}
	condaAside := condaFirst
	condaAside.Via = ""
	systemFirst := facts.LibraryCopy{Path: "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", Version: "9.0.0", Via: "ld.so.cache"}
	cudnn8 := facts.LibraryCopy{Path: "/usr/local/cuda/lib64/libcudnn.so.8", Version: "8.9.7"}
	for _, tt := range []struct {
		name     string
		libs     []facts.CUDALibrary
		status   Status
		contains []string
	}{
		{"nothing followed", nil, Skip, nil},
		{"one stack, as built", []facts.CUDALibrary{cudnnLib(wheel, "9.1.0.70")}, Pass, []string{"libcudnn.so.9 9.1.0.70", wheelCuDNN}},
		{"newer than built", []facts.CUDALibrary{cudnnLib(facts.LibraryCopy{Path: wheelCuDNN, Version: "9.5.1", Via: "DT_RUNPATH"}, "9.1.0.70")}, Pass, nil},
		{"built-for given to fewer components", []facts.CUDALibrary{cudnnLib(wheel, "9.1")}, Pass, nil},
		{"an older copy first through LD_LIBRARY_PATH", []facts.CUDALibrary{cudnnLib(condaFirst, "9.1.0.70", wheel)}, Error, []string{
			"torch loads libcudnn.so.9 9.0.0 from /opt/conda/lib/libcudnn.so.9 (LD_LIBRARY_PATH)", "older than the 9.1.0.70 it was built against",
			"METADATA", "the copy it was built for, 9.1.0.70, is at " + wheelCuDNN, "take /opt/conda/lib out of LD_LIBRARY_PATH"}},
		{"an older system copy first", []facts.CUDALibrary{cudnnLib(systemFirst, "9.1.0.70")}, Error, []string{
			"ld.so.cache", "pip install 'nvidia-cudnn-cu12==9.1.0.70'", "upgrade the system's libcudnn"}},
		{"cuDNN 8 where torch was built for 9", []facts.CUDALibrary{cudnnLib(facts.LibraryCopy{Path: "/usr/local/cuda/lib64/libcudnn.so.9", Version: "8.9.7", Via: "LD_LIBRARY_PATH"}, "9.1.0.70")}, Error, []string{"8.9.7"}},
		{"a second version aside", []facts.CUDALibrary{cudnnLib(wheel, "9.1.0.70", condaAside)}, Warn, []string{
			"and the image holds another libcudnn: 9.0.0 at /opt/conda/lib/libcudnn.so.9", wheelCuDNN}},
		{"another major aside", []facts.CUDALibrary{cudnnLib(wheel, "9.1.0.70", cudnn8)}, Warn, []string{"8.9.7 at /usr/local/cuda/lib64/libcudnn.so.8"}},
		{"the same version twice is one stack", []facts.CUDALibrary{cudnnLib(wheel, "9.1.0.70", facts.LibraryCopy{Path: "/opt/cudnn/libcudnn.so.9", Version: "9.1.0.70"})}, Pass, nil},
		{"an unknown version is not judged", []facts.CUDALibrary{cudnnLib(facts.LibraryCopy{Path: wheelCuDNN, Via: "DT_RUNPATH"}, "9.1.0.70", condaAside)}, Pass, []string{"(version unknown)"}},
		{"a major-only copy is not called older", []facts.CUDALibrary{cudnnLib(facts.LibraryCopy{Path: wheelCuDNN, Version: "9", Via: "DT_RUNPATH"}, "9.1.0.70")}, Pass, nil},
		{"not found", []facts.CUDALibrary{cudnnLib(facts.LibraryCopy{}, "9.1.0.70")}, Warn, []string{"finds it nowhere", "pip install 'nvidia-cudnn-cu12==9.1.0.70'"}},
		{"the error wins over a warning elsewhere", []facts.CUDALibrary{
			cudnnLib(condaFirst, "9.1.0.70", wheel),
			{Framework: "torch", Name: "libnccl.so.2", Library: "libnccl", Loaded: facts.LibraryCopy{Path: "/a/libnccl.so.2", Version: "2.21.5", Via: "DT_RUNPATH"}, Others: []facts.LibraryCopy{{Path: "/b/libnccl.so.2", Version: "2.18.1"}}},
		}, Error, []string{"libcudnn.so.9 9.0.0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantFinding(t, cudaStack(input(facts.Host{}, facts.Container{CUDALibraries: tt.libs})), tt.status, tt.contains...)
		})
	}
}

func TestOlderThan(t *testing.T) {
	for _, tt := range []struct {
		have, need string
		older      bool
	}{
		{"9.0.0", "9.1.0.70", true}, {"9.1.0", "9.1.0.70", false}, {"9.1.0.70", "9.1.0.70", false},
		{"12.1.105", "12.4", true}, {"12.4.127", "12.4", false}, {"12", "12.4", false}, {"8", "9.1", true},
		{"2.18.1", "2.20.5", true}, {"x", "1", false},
	} {
		if got := olderThan(tt.have, tt.need); got != tt.older {
			t.Errorf("olderThan(%s, %s) = %v", tt.have, tt.need, got)
		}
	}
}
