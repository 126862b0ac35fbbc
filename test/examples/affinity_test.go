package examples

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"sigs.k8s.io/yaml"

	"github.com/gpu-preflight/gpu-preflight/preflight/affinity"
	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/check/scenarios"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/nodeclass"
	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// gfdLabels are the labels GPU Feature Discovery puts on a node
// (NVIDIA/k8s-device-plugin internal/lm/nvml.go newVersionLabeler and
// resource.go newArchitectureLabels): the driver version split at its dots
// (an absent revision is ""), the driver's CUDA version from NVML, the
// first GPU's compute capability, under the current and the deprecated
// names.
func gfdLabels(h facts.Host) map[string]string {
	d := h.Driver
	parts := strings.Split(d.Version, ".")
	rev := ""
	if len(parts) > 2 {
		rev = parts[2]
	}
	cudaMajor, cudaMinor, _ := strings.Cut(d.CUDAVersion, ".")
	ccMajor, ccMinor, _ := strings.Cut(h.GPUs[0].ComputeCapability, ".")
	return map[string]string{
		"nvidia.com/cuda.driver.major": parts[0], "nvidia.com/cuda.driver.minor": parts[1], "nvidia.com/cuda.driver.rev": rev,
		"nvidia.com/cuda.runtime.major": cudaMajor, "nvidia.com/cuda.runtime.minor": cudaMinor,
		"nvidia.com/cuda.driver-version.major": parts[0], "nvidia.com/cuda.driver-version.minor": parts[1],
		"nvidia.com/cuda.driver-version.revision": rev, "nvidia.com/cuda.driver-version.full": d.Version,
		"nvidia.com/cuda.runtime-version.major": cudaMajor, "nvidia.com/cuda.runtime-version.minor": cudaMinor,
		"nvidia.com/cuda.runtime-version.full": d.CUDAVersion,
		"nvidia.com/gpu.compute.major":         ccMajor, "nvidia.com/gpu.compute.minor": ccMinor,
		"nvidia.com/gpu.product": strings.ReplaceAll(h.GPUs[0].Name, " ", "-"),
		"nvidia.com/gpu.count":   fmt.Sprint(len(h.GPUs)),
	}
}

// officialRequirements reads the official images' NVIDIA_REQUIRE_CUDA
// values (preflight/require/testdata).
func officialRequirements(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(harness.Root(t), "preflight/require/testdata/nvidia_require_cuda.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "\t"); ok && !strings.HasPrefix(k, "#") {
			out[k] = v
		}
	}
	return out
}

// agreementImages are the images the affinity is generated for: the
// official CUDA images (their requirement, toolkit and cuda-compat
// library), a PyTorch build with its kernel targets, a legacy image, and a
// PREFLIGHT_REQUIRE that names a driver down to its revision.
func agreementImages(t *testing.T) map[string]affinity.Input {
	req := officialRequirements(t)
	official := func(full, compatDriver string) facts.Container {
		c := facts.Container{Env: map[string]string{}, CUDA: facts.CUDAToolkit{Version: full[:strings.LastIndex(full, ".")]},
			Requirements: []facts.Requirement{{Var: "NVIDIA_REQUIRE_CUDA", Value: req[full]}}}
		if compatDriver != "" {
			c.Compat = []facts.CompatLib{{Path: "/usr/local/cuda/compat/libcuda.so." + compatDriver, DriverVersion: compatDriver}}
		}
		return c
	}
	torch := official("12.8.1", "570.124.06")
	torch.Frameworks = []facts.Framework{{Name: "torch", Version: "2.7.0+cu128", CUDAVersion: "12.8",
		Archs: []string{"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"}}}
	paddle := official("11.8.0", "")
	paddle.Frameworks = []facts.Framework{{Name: "paddlepaddle", Version: "2.6.0", CUDAVersion: "11.8", Archs: []string{"sm_70", "sm_80"}}}
	return map[string]affinity.Input{
		"cuda-11.8.0":           {Container: official("11.8.0", "")},
		"cuda-12.2.2-compat":    {Container: official("12.2.2", "535.104.05")},
		"cuda-12.8.1-compat":    {Container: official("12.8.1", "570.124.06")},
		"cuda-12.8.1-no-compat": {Container: official("12.8.1", "")},
		"cuda-13.0.2-compat":    {Container: official("13.0.2", "580.82.07")},
		"torch-2.7-cu128":       {Container: torch},
		"paddle-2.6-cu118-sm70": {Container: paddle},
		"legacy-cuda-11.6":      {Container: facts.Container{Env: map[string]string{}, CUDA: facts.CUDAToolkit{Version: "11.6"}, Requirements: []facts.Requirement{{Var: "CUDA_VERSION", Value: "cuda>=11.6"}}}},
		"require-driver-revision": {Container: facts.Container{Env: map[string]string{}},
			Options: check.Options{ExtraRequire: "driver>=535.104.05,driver<550.54.14 driver>=570.26"}},
		// Under PREFLIGHT_POLICY=strict a warning (minor-version
		// compatibility, PTX JIT) stops the job too.
		"torch-2.7-cu128-strict": {Container: torch, Policy: policy.Strict},
		// PREFLIGHT_IGNORE=cuda-requirement lets the CUDA checks alone decide.
		"cuda-12.8.1-ignore-requirement": {Container: official("12.8.1", "570.124.06"), Ignore: map[string]bool{"cuda-requirement": true}},
	}
}

// decodeAffinity reads generated YAML strictly into Kubernetes' type.
func decodeAffinity(t *testing.T, doc string) corev1.Affinity {
	t.Helper()
	var a corev1.Affinity
	if err := yaml.UnmarshalStrict([]byte(doc), &a); err != nil {
		t.Fatalf("the generated affinity is not a strict corev1.Affinity: %v\n%s", err, doc)
	}
	return a
}

// checkVerdict runs the checks the affinity stands for on a node and
// decides as the shim does: PREFLIGHT_IGNORE, then the policy.
func checkVerdict(in affinity.Input, h facts.Host) (ok bool, blocking []string) {
	ci := check.Input{Facts: facts.Facts{Host: h, Container: in.Container}, Visible: h.GPUs, Options: in.Options}
	var fs []check.Finding
	for _, c := range []check.Check{check.CUDARequirement, check.CUDADriver, check.FrameworkCUDA, check.GPUArch} {
		fs = append(fs, c.Run(ci))
	}
	fs = policy.Ignore(fs, in.Ignore)
	d := policy.Decide(in.Policy, fs, policy.ExitCodes{Mismatch: 78, NodeFault: 75})
	for _, f := range fs {
		if d.Blocks(f.ID) {
			blocking = append(blocking, f.ID+": "+f.Message)
		}
	}
	return len(d.Blocking) == 0, blocking
}

// passesOnSomeBrand reports whether the node would pass with its GPUs of
// another brand (or of an unknown one): then only the brand, which no
// label carries, fails it.
func passesOnSomeBrand(in affinity.Input, h facts.Host) bool {
	for _, b := range append([]string{""}, nodeclass.Brands...) {
		g := append([]facts.GPU(nil), h.GPUs...)
		for i := range g {
			g[i].Brand = b
		}
		h.GPUs = g
		if ok, _ := checkVerdict(in, h); ok {
			return true
		}
	}
	return false
}

// The agreement: on every scenario node, labelled as GFD labels it, the
// generated affinity admits exactly the nodes the checks pass, except
// nodes that fail only because of the brand, which the affinity names as
// left out. Kubernetes' own matcher decides what the affinity admits.
func TestAffinityAgreesWithCheck(t *testing.T) {
	for name, in := range agreementImages(t) {
		labelSets := []affinity.Labels{affinity.CurrentLabels}
		if name == "cuda-12.8.1-compat" {
			// GFD before v0.15.0 publishes only these.
			labelSets = append(labelSets, affinity.DeprecatedLabels)
		}
		for _, labels := range labelSets {
			in.Labels = labels
			t.Run(name+"/"+labels.DriverMajor, func(t *testing.T) {
				a, err := affinity.For(in)
				if err != nil {
					t.Fatal(err)
				}
				doc := a.YAML("agreement test")
				k := decodeAffinity(t, doc)
				var sel *nodeaffinity.LazyErrorNodeSelector
				if !a.Unconstrained {
					if k.NodeAffinity == nil || k.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
						t.Fatalf("no required node selector:\n%s", doc)
					}
					sel = nodeaffinity.NewLazyErrorNodeSelector(k.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
				}
				brandLeftOut := len(a.LeftOut) > 0 && strings.Contains(a.LeftOut[0], "brand")
				admittedN, rejectedN := 0, 0
				for _, n := range scenarios.Nodes {
					node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: gfdLabels(n.Host)}}
					admitted := true
					if sel != nil {
						var err error
						if admitted, err = sel.Match(node); err != nil {
							t.Fatalf("%s: matcher: %v", n.Name, err)
						}
					}
					passes, failed := checkVerdict(in, n.Host)
					switch {
					case admitted && !passes:
						if !passesOnSomeBrand(in, n.Host) || !brandLeftOut {
							t.Errorf("%s admitted, but check fails it (brand left out: %v): %s\n%s", n.Name, brandLeftOut, strings.Join(failed, "; "), doc)
						}
						admittedN++
					case !admitted && passes:
						t.Errorf("%s rejected, but check passes it\n%s", n.Name, doc)
					case admitted:
						admittedN++
					default:
						rejectedN++
					}
				}
				t.Logf("%d nodes admitted, %d rejected", admittedN, rejectedN)
			})
		}
	}
}

// A node with an older, invalid or missing label set is never admitted by
// an affinity that constrains the driver.
func TestAffinityRejectsNodesWithoutGFDLabels(t *testing.T) {
	a, err := affinity.For(agreementImages(t)["cuda-12.8.1-compat"])
	if err != nil {
		t.Fatal(err)
	}
	k := decodeAffinity(t, a.YAML(""))
	sel := nodeaffinity.NewLazyErrorNodeSelector(k.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
	for _, labels := range []map[string]string{nil, {"nvidia.com/gpu.present": "true"}, {"nvidia.com/cuda.driver-version.major": "five-eighty"}} {
		if ok, _ := sel.Match(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: labels}}); ok {
			t.Errorf("labels %v admitted", labels)
		}
	}
}

// The example Job carries the affinity gpu-preflight generates for its
// image (CUDA 11.8 with the official image's NVIDIA_REQUIRE_CUDA), next to
// the podFailurePolicy that stops it when a node gets through anyway.
func TestKubernetesJobUsesTheGeneratedAffinity(t *testing.T) {
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(readRepoFile(t, "examples/kubernetes/job.yaml")), &job); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	env := []string{"PATH=/usr/bin:/bin", "CUDA_VERSION=11.8.0", "NVIDIA_REQUIRE_CUDA=" + officialRequirements(t)["11.8.0"],
		"PREFLIGHT_ROOT=" + empty, "PREFLIGHT_HOST_ROOT=" + empty}
	r := harness.Run(t, time.Minute, "", env, shim(t), "affinity")
	if r.Code != 0 {
		t.Fatalf("gpu-preflight affinity: exit %d: %s", r.Code, r.Stderr)
	}
	want := decodeAffinity(t, r.Stdout)
	got := job.Spec.Template.Spec.Affinity
	if got == nil || !reflect.DeepEqual(*got, want) {
		t.Errorf("job.yaml's affinity is not what gpu-preflight affinity prints for its image:\n%s", r.Stdout)
	}
	if job.Spec.PodFailurePolicy == nil {
		t.Error("job.yaml has the affinity but no podFailurePolicy")
	}
}
