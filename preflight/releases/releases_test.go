package releases

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
)

// Every row is complete: a framework advise reports, a CUDA version the
// compatibility tables know, an install line that names the row's version
// and CUDA flavour, targets the arch parser reads, and a source.
func TestEveryRowIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range builds() {
		name := b.Name() + " " + b.Install
		if !slices.Contains(Frameworks, b.Framework) {
			t.Errorf("%s: framework %q is not in Frameworks", name, b.Framework)
		}
		if _, ok := compat.MinDriver(b.CUDA); !ok {
			t.Errorf("%s: CUDA %q is not in the toolkit table", name, b.CUDA)
		}
		if b.Kind != Wheel && b.Kind != Image {
			t.Errorf("%s: kind %q", name, b.Kind)
		}
		if b.Source == "" {
			t.Errorf("%s: no source", name)
		}
		if b.Framework != "jax" && !strings.Contains(b.Install, b.Version) {
			t.Errorf("%s: install line does not name version %s", name, b.Version)
		}
		flavour := map[Kind]string{Wheel: cuTag(b.CUDA), Image: "cuda" + b.CUDA}[b.Kind]
		if b.Framework == "torch" || b.Framework == "paddlepaddle" {
			post := ".post" + strings.TrimPrefix(flavour, "cu")
			if !strings.Contains(b.Install, flavour) && !strings.Contains(b.Install, post) && !(b.Version == "2.6.1" && b.CUDA == "11.8") {
				t.Errorf("%s: install line does not name %s", name, flavour)
			}
		}
		for _, a := range b.Archs {
			if _, err := gpuarch.Parse(a); err != nil {
				t.Errorf("%s: arch %q: %v", name, a, err)
			}
		}
		if seen[b.Install] {
			t.Errorf("%s: install line twice", name)
		}
		seen[b.Install] = true
	}
}

// The builds are there: the Paddle CUDA 11.8 image and .post118 /
// .post120 wheels, the 3.x lines, PyTorch's cu118 ... cu130 indexes.
func TestTheTableHoldsTheBuildsUsersAskFor(t *testing.T) {
	var installs []string
	for _, b := range builds() {
		installs = append(installs, b.Install)
	}
	all := strings.Join(installs, "\n")
	for _, want := range []string{"paddle:3.0.0-gpu-cuda11.8-cudnn8.9-trt8.6", "paddlepaddle-gpu==2.6.2.post118",
		"paddlepaddle-gpu==2.6.2.post120", "paddlepaddle-gpu==3.0.0 -i", "whl/cu118", "whl/cu121", "whl/cu124",
		"whl/cu126", "whl/cu128", "whl/cu129", "whl/cu130", "tensorflow[and-cuda]==2.15", "jax[cuda12]", "jax[cuda13]"} {
		if !strings.Contains(all, want) {
			t.Errorf("no build installs %s", want)
		}
	}
}

func TestForOrdersNewestReleaseThenNewestCUDA(t *testing.T) {
	got := For("torch")
	if got[0].Version != "2.14" || got[0].CUDA != "13.2" {
		t.Errorf("first torch build %s", got[0].Name())
	}
	for i := 1; i < len(got); i++ {
		if Better(got[i], got[i-1]) {
			t.Errorf("%s after %s", got[i].Name(), got[i-1].Name())
		}
	}
	p := For("paddlepaddle")
	if i, j := indexOf(p, "3.0.0", "11.8", Wheel), indexOf(p, "3.0.0b2", "11.8", Wheel); i > j {
		t.Errorf("3.0.0 after 3.0.0b2")
	}
	if For("caffe") != nil {
		t.Error("unknown framework has builds")
	}
}

func indexOf(bs []Build, v, cuda string, k Kind) int {
	for i, b := range bs {
		if b.Version == v && b.CUDA == cuda && b.Kind == k {
			return i
		}
	}
	return -1
}

func TestNativeForKeepsBuildsTheDriverCUDACovers(t *testing.T) {
	got := NativeFor("paddlepaddle", "12.0")
	if len(got) == 0 {
		t.Fatal("no paddle build for CUDA 12.0")
	}
	for _, b := range got {
		if b.CUDA != "12.0" && !strings.HasPrefix(b.CUDA, "11.") {
			t.Errorf("%s is not native on CUDA 12.0", b.Name())
		}
	}
	if NativeFor("torch", "10.2") != nil {
		t.Error("a torch build for a CUDA 10.2 driver")
	}
}

func TestCUTag(t *testing.T) {
	for in, want := range map[string]string{"11.8": "cu118", "12.6.3": "cu126", "13.0": "cu130"} {
		if got := cuTag(in); got != want {
			t.Errorf("cuTag(%s) = %s", in, got)
		}
	}
}
