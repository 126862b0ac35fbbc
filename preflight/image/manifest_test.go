package image

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin"
	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin/fatbintest"
)

var bakeTime = time.Date(2026, 11, 29, 12, 0, 0, 123, time.UTC)

// bakedImage is a tree with two frameworks, kernels and a stack, baked,
// with the manifest written where the shim looks for it.
func bakedImage(t testing.TB) (*tree, map[string]string, Manifest) {
	t.Helper()
	tr := paddleTree(t, condaSP, ptx(80, 7, 8))
	tr.file(debianSP+"/torch/version.py", torchVersionCU118)
	tr.so(debianSP+"/torch/lib/libtorch_cuda.so", []fatbintest.Entry{cubin(70), cubin(80), cubin(86), cubin(90)})
	tr.file("/usr/include/x86_64-linux-gnu/cudnn_version_v9.h", cudnnVersionH9)
	tr.link("/usr/include/cudnn_version.h", "/usr/include/x86_64-linux-gnu/cudnn_version_v9.h")
	tr.file("/usr/lib/x86_64-linux-gnu/libc.so.6", "")
	env := map[string]string{"NCCL_VERSION": "2.25.1-1", "PATH": "/usr/bin"}
	m, err := Bake(tr.Root(), env, BuildInfo{Version: "v1.2.3", Commit: "abc123", Time: bakeTime})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteManifest(tr.host(defaultManifestPath), m); err != nil {
		t.Fatal(err)
	}
	return tr, env, m
}

// noScan fails the test if Load reads any library's fatbins.
func noScan(t testing.TB) scanFileFunc {
	return func(path string) (fatbin.Result, error) {
		t.Errorf("Load opened kernel library %s although the manifest is valid", path)
		return fatbin.Result{}, nil
	}
}

func TestBakeRecordsLibrariesWithHashes(t *testing.T) {
	tr, _, m := bakedImage(t)
	if m.SchemaVersion != manifestSchemaVersion || m.BuiltAt != "2026-11-29T12:00:00.000000123Z" ||
		m.Tool.Version != "v1.2.3" || m.Tool.Commit != "abc123" {
		t.Errorf("header %+v %q %+v", m.SchemaVersion, m.BuiltAt, m.Tool)
	}
	if want := []string{"sm_70", "sm_80", "compute_80", "sm_86", "sm_90"}; !slices.Equal(m.Archs, want) {
		t.Errorf("archs %q, want %q", m.Archs, want)
	}
	if len(m.Libraries) != 2 {
		t.Fatalf("libraries %+v", m.Libraries)
	}
	for _, l := range m.Libraries {
		b, err := os.ReadFile(tr.host(l.Path))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		fi, _ := os.Stat(tr.host(l.Path))
		if l.SHA256 != hex.EncodeToString(sum[:]) || l.Size != int64(len(b)) || l.ModTime != fi.ModTime().UnixNano() {
			t.Errorf("library %+v", l)
		}
	}
	if m.Stack.NCCL.Version != "2.25.1" || m.Stack.CuDNN.Version != "9.1.0" {
		t.Errorf("stack %+v", m.Stack)
	}
	if !reflect.DeepEqual(m.Env, map[string]string{"NCCL_VERSION": "2.25.1-1", "PATH": "/usr/bin"}) {
		t.Errorf("env %v: only the variables the scan reads belong there", m.Env)
	}
}

func TestManifestFileRoundTrips(t *testing.T) {
	tr, _, m := bakedImage(t)
	got, err := loadManifest(tr.Root(), defaultManifestPath)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", got, m)
	}
	// The JSON carries what the issue asks for, under stable names.
	b, _ := os.ReadFile(tr.host(defaultManifestPath))
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schemaVersion", "builtAt", "tool", "stack", "frameworks", "archs", "libraries", "sitePackages", "inputs", "env"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("manifest has no %q", k)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(tr.host(defaultManifestPath)))
	if len(entries) != 1 {
		t.Errorf("WriteManifest left temporary files: %v", entries)
	}
}

// findings runs the two checks this package feeds on a fixed host: an H100
// on driver 535 (CUDA 12.2), and a V100.
func findings(res Result) []check.Finding {
	in := check.Input{
		Facts: facts.Facts{
			Host: facts.Host{Driver: facts.Driver{Version: "535.104.05", CUDAVersion: "12.2"}},
			Container: facts.Container{
				CUDA:       facts.CUDAToolkit{Version: "12.2"},
				Stack:      res.Stack,
				Frameworks: res.Frameworks,
			},
		},
		Visible: []facts.GPU{
			{Index: 0, Name: "NVIDIA H100 80GB HBM3", Brand: "Nvidia", ComputeCapability: "9.0"},
			{Index: 1, Name: "Tesla V100-SXM2-16GB", Brand: "Tesla", ComputeCapability: "7.0"},
		},
	}
	return []check.Finding{check.FrameworkCUDA.Run(in), check.GPUArch.Run(in)}
}

func TestLoadFromValidManifestDoesNotOpenLibraries(t *testing.T) {
	tr, env, _ := bakedImage(t)
	res, source, warnings := load(tr.Root(), env, defaultManifestPath, noScan(t), RuntimeScanBudget)
	if source != facts.ScanFromManifest || len(warnings) != 0 {
		t.Fatalf("source %q warnings %q", source, warnings)
	}
	fresh, _ := Scan(tr.Root(), env)
	if !reflect.DeepEqual(res, fresh) {
		t.Errorf("manifest result differs from a fresh scan:\n got %+v\nwant %+v", res, fresh)
	}
	got, want := findings(res), findings(fresh)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("findings differ:\n got %+v\nwant %+v", got, want)
	}
	// The fixture is not trivial: the H100 lacks sm_90 in libpaddle.so
	// and runs it only through compute_80 PTX JIT.
	if got[1].Status != check.Warn || !strings.Contains(got[1].Message, "sm_90 missing") {
		t.Errorf("gpu-arch %+v", got[1])
	}
}

func TestLoadAcceptsModTimesTruncatedToSecondsByImageExport(t *testing.T) {
	tr, env, m := bakedImage(t)
	// Export and extraction of the image layer keep whole seconds only.
	truncate := func(p string) {
		h, err := tr.Root().Resolve(p)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(h)
		if err != nil {
			t.Fatal(err)
		}
		sec := fi.ModTime().Truncate(time.Second)
		if err := os.Chtimes(h, sec, sec); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range m.Libraries {
		truncate(l.Path)
	}
	for _, in := range m.Inputs {
		if !in.Missing {
			truncate(in.Path)
		}
	}
	if _, source, warnings := load(tr.Root(), env, defaultManifestPath, noScan(t), RuntimeScanBudget); source != facts.ScanFromManifest {
		t.Errorf("source %q warnings %q", source, warnings)
	}
}

// touch sets p's modification time to a moment no test file has.
func touch(t *testing.T, tr *tree, p string) {
	t.Helper()
	old := time.Unix(1_000_000_000, 0)
	if err := os.Chtimes(tr.host(p), old, old); err != nil {
		t.Fatal(err)
	}
}

func TestLoadRescansWhenTheImageChanged(t *testing.T) {
	paddleLib := condaSP + "/paddle/base/libpaddle.so"
	tests := []struct {
		name   string
		change func(t *testing.T, tr *tree, env map[string]string)
		why    string
	}{
		{"library rewritten with another size", func(t *testing.T, tr *tree, _ map[string]string) {
			tr.so(paddleLib, []fatbintest.Entry{cubin(70), cubin(80), cubin(90)})
		}, "libpaddle.so size"},
		{"library touched", func(t *testing.T, tr *tree, _ map[string]string) {
			touch(t, tr, paddleLib)
		}, "libpaddle.so modified"},
		{"library removed", func(t *testing.T, tr *tree, _ map[string]string) {
			os.Remove(tr.host(paddleLib))
		}, "libpaddle.so"},
		{"kernel library added where none was", func(t *testing.T, tr *tree, _ map[string]string) {
			tr.so(debianSP+"/torch/lib/libc10_cuda.so", []fatbintest.Entry{cubin(90)})
		}, "torch/lib"}, // "torch/lib/libc10_cuda.so appeared", or its directory's listing changed when the second turned
		{"package installed into a site-packages directory", func(t *testing.T, tr *tree, _ map[string]string) {
			tr.file(debianSP+"/tensorflow/python/platform/build_info.py", tfBuildInfo121)
			touch(t, tr, debianSP)
		}, debianSP + " holds other files than at bake time"},
		{"CUDA library added to the multiarch library directory", func(t *testing.T, tr *tree, _ map[string]string) {
			tr.file("/usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0", "")
			touch(t, tr, "/usr/lib/x86_64-linux-gnu")
		}, "/usr/lib/x86_64-linux-gnu"},
		{"version file edited", func(t *testing.T, tr *tree, _ map[string]string) {
			tr.file(debianSP+"/torch/version.py", torchVersionCU124)
		}, "version.py size"},
		{"new site-packages directory", func(t *testing.T, tr *tree, _ map[string]string) {
			tr.dir("/usr/lib/python3.12/site-packages")
		}, "Python package directories"},
		{"scan environment changed", func(t *testing.T, tr *tree, env map[string]string) {
			env["NCCL_VERSION"] = "2.26.2-1"
		}, "NCCL_VERSION"},
		{"header appeared", func(t *testing.T, tr *tree, _ map[string]string) {
			tr.file("/usr/local/cuda/include/nccl.h", ncclH)
		}, "appeared"},
		{"manifest missing", func(t *testing.T, tr *tree, _ map[string]string) {
			os.Remove(tr.host(defaultManifestPath))
		}, "no image manifest"},
		{"manifest corrupt", func(t *testing.T, tr *tree, _ map[string]string) {
			tr.file(defaultManifestPath, "{")
		}, "unusable"},
		{"manifest from another schema", func(t *testing.T, tr *tree, _ map[string]string) {
			tr.file(defaultManifestPath, `{"schemaVersion": 99}`)
		}, "schema version 99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, env, _ := bakedImage(t)
			tt.change(t, tr, env)
			scanned := 0
			counting := func(p string) (fatbin.Result, error) { scanned++; return fatbin.ScanFile(p) }
			res, source, warnings := load(tr.Root(), env, defaultManifestPath, counting, RuntimeScanBudget)
			if source != facts.ScanFromImage || len(warnings) == 0 || !strings.Contains(warnings[0], tt.why) {
				t.Fatalf("source %q warnings %q, want a rescan because of %q", source, warnings, tt.why)
			}
			// A rescan reads again only the libraries that changed, or
			// all of them without a usable manifest: a readable one's
			// kernel scans are reused by file identity.
			changed := tt.name == "library rewritten with another size" || tt.name == "library touched" ||
				strings.HasPrefix(tt.name, "kernel library ") || strings.HasPrefix(tt.name, "manifest ")
			if changed != (scanned > 0) {
				t.Errorf("the rescan read %d libraries", scanned)
			}
			fresh, _ := Scan(tr.Root(), env)
			if !reflect.DeepEqual(res, fresh) {
				t.Errorf("rescan differs from a fresh scan")
			}
		})
	}
}

func TestBakeFailsWhenALibraryCannotBeHashed(t *testing.T) {
	tr := newTree(t)
	tr.file(debianSP+"/torch/version.py", torchVersionCU118)
	tr.so(debianSP+"/torch/lib/libtorch_cuda.so", []fatbintest.Entry{cubin(80)})
	// The scan sees the library; by the time it is hashed it is gone.
	scanThenRemove := func(p string) (fatbin.Result, error) {
		r, err := fatbin.ScanFile(p)
		os.Remove(p)
		return r, err
	}
	_, err := bake(tr.Root(), nil, BuildInfo{}, scanThenRemove)
	if err == nil || !strings.Contains(err.Error(), "libtorch_cuda.so") {
		t.Errorf("got %v, want an error naming the library", err)
	}
}

// The run-time cost of knowing the image: a fresh scan against reusing a
// valid manifest (which only stats what the bake looked at).
func BenchmarkScan(b *testing.B) {
	tr, env, _ := bakedImage(b)
	for b.Loop() {
		Scan(tr.Root(), env)
	}
}

func BenchmarkLoadManifest(b *testing.B) {
	tr, env, _ := bakedImage(b)
	for b.Loop() {
		if _, source, _ := Load(tr.Root(), env, defaultManifestPath); source != facts.ScanFromManifest {
			b.Fatal("manifest not used")
		}
	}
}

// The done-when case from files to finding: a PaddlePaddle
// 2.6.0.post118 tree whose libpaddle.so has sm_70 and sm_80 cubins, on an
// H100, with and without a compute_80 PTX entry (ISA 7.8, CUDA 11.8).
func TestPaddleOnH100FromScannedFiles(t *testing.T) {
	h100 := facts.GPU{Index: 0, Name: "NVIDIA H100 80GB HBM3", Brand: "Nvidia", ComputeCapability: "9.0"}
	run := func(tr *tree, driver, driverCUDA string) check.Finding {
		res, _ := Scan(tr.Root(), nil)
		return check.GPUArch.Run(check.Input{
			Facts: facts.Facts{
				Host:      facts.Host{Driver: facts.Driver{Version: driver, CUDAVersion: driverCUDA}},
				Container: facts.Container{Frameworks: res.Frameworks},
			},
			Visible: []facts.GPU{h100},
		})
	}
	expect := func(f check.Finding, status check.Status, contains ...string) {
		t.Helper()
		if f.Status != status {
			t.Errorf("got %s: %s, want %s", f.Status, f.Message, status)
		}
		for _, s := range contains {
			if !strings.Contains(f.Message, s) {
				t.Errorf("%q does not mention %q", f.Message, s)
			}
		}
	}
	cubins := newTree(t)
	cubins.file(debianSP+"/paddle/version/__init__.py", paddleVersion26)
	cubins.dir(debianSP + "/paddlepaddle_gpu-2.6.0.post118.dist-info")
	cubins.so(debianSP+"/paddle/base/libpaddle.so", []fatbintest.Entry{cubin(70), cubin(80)})
	expect(run(cubins, "535.104.05", "12.2"), check.Error, "sm_90 missing", "compiled: sm_70, sm_80", "paddlepaddle 2.6.0.post118")

	withPTX := paddleTree(t, debianSP, ptx(80, 7, 8))
	expect(run(withPTX, "535.104.05", "12.2"), check.Warn, "sm_90 missing", "JIT-compile compute_80 PTX at first launch")
	expect(run(withPTX, "515.65.01", "11.7"), check.Error, "sm_90 missing", "PTX ISA 7.8", "CUDA >= 11.8")
}

// What the NVIDIA Container Toolkit mounts on a GPU node (the driver's
// libraries and utilities, GSP firmware) is the host's: a baked manifest
// still holds when it appears, though the directory's time moved.
func TestManifestHoldsWhenTheRuntimeInjectsDriverFiles(t *testing.T) {
	tr, env, _ := bakedImage(t)
	lib := "/usr/lib/x86_64-linux-gnu"
	if _, err := tr.Root().Stat(lib); err != nil {
		t.Fatalf("the baked fixture has no %s to inject into: %v", lib, err)
	}
	for _, name := range []string{"libnvidia-ml.so.1", "libnvidia-ml.so.550.54.15", "libcuda.so.1", "libcuda.so.550.54.15",
		"libnvidia-ptxjitcompiler.so.550.54.15", "libcudadebugger.so.1"} {
		tr.file(lib+"/"+name, "")
	}
	tr.dir("/usr/lib/firmware/nvidia/550.54.15")
	touch(t, tr, lib)
	touch(t, tr, "/usr/lib")
	res, source, warnings := load(tr.Root(), env, defaultManifestPath, noScan(t), RuntimeScanBudget)
	if source != facts.ScanFromManifest || len(warnings) != 0 {
		t.Fatalf("source %q warnings %q: injected driver files made the manifest stale", source, warnings)
	}
	if len(res.Frameworks) == 0 {
		t.Error("the manifest's result lost its frameworks")
	}
}

func TestInjected(t *testing.T) {
	for _, tt := range []struct {
		dir, name string
		want      bool
	}{
		{"/usr/lib/x86_64-linux-gnu", "libnvidia-ml.so.1", true},
		{"/usr/lib/x86_64-linux-gnu", "libcuda.so.550.54.15", true},
		{"/usr/lib/x86_64-linux-gnu", "libcudart.so.12", false},
		{"/usr/lib/x86_64-linux-gnu", "libcudnn.so.9", false},
		{"/usr/lib/x86_64-linux-gnu", "libnccl.so.2", false},
		{"/usr/lib/x86_64-linux-gnu", "vdpau", true},
		{"/usr/lib", "firmware", true},
		{"/usr/local/lib", "firmware", false},
		{"/usr/bin", "nvidia-smi", true},
	} {
		if got := injected(tt.dir, tt.name); got != tt.want {
			t.Errorf("injected(%q, %q) = %v, want %v", tt.dir, tt.name, got, tt.want)
		}
	}
}

// A shell exports PWD and an exec-form start does not: the manifest holds
// across that, and goes stale only when the working directory holds a pixi
// environment the bake did not see.
func TestManifestComparesTheEnvironmentsPWDFindsNotPWD(t *testing.T) {
	tr, env, _ := bakedImage(t)
	withPWD := maps.Clone(env)
	withPWD["PWD"] = "/workspace"
	if _, source, warnings := load(tr.Root(), withPWD, defaultManifestPath, noScan(t), RuntimeScanBudget); source != facts.ScanFromManifest {
		t.Fatalf("PWD alone made the manifest stale: %q", warnings)
	}
	p := "/workspace/.pixi/envs/default"
	tr.dir(p + "/conda-meta")
	tr.file(p+"/bin/python3.12", "")
	tr.dir(p + "/lib/python3.12/site-packages")
	if _, source, warnings := load(tr.Root(), withPWD, defaultManifestPath, fatbin.ScanFile, RuntimeScanBudget); source != facts.ScanFromImage || !strings.Contains(strings.Join(warnings, "\n"), "Python package directories") {
		t.Errorf("a pixi environment under PWD: source %q, warnings %q", source, warnings)
	}
}

// The manifest, baked without a command, holds for a command whose Python
// the bake found, and goes stale for one that runs a venv no row finds:
// that venv's directories are not in it.
func TestManifestGoesStaleOnlyForACommandsEnvironmentItLacks(t *testing.T) {
	tr, env, _ := bakedImage(t)
	if _, source, warnings := load(tr.Root(), env, defaultManifestPath, noScan(t), RuntimeScanBudget, "python3", "train.py"); source != facts.ScanFromManifest {
		t.Fatalf("python3 on PATH made the manifest stale: %q", warnings)
	}
	tr.file("/usr/bin/python3.11", "")
	tr.file("/opt/venv/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n")
	tr.link("/opt/venv/bin/python", "/usr/bin/python3.11")
	tr.dir("/opt/venv/lib/python3.11/site-packages")
	if _, source, warnings := load(tr.Root(), env, defaultManifestPath, fatbin.ScanFile, RuntimeScanBudget, "/opt/venv/bin/python", "train.py"); source != facts.ScanFromImage || !strings.Contains(strings.Join(warnings, "\n"), "/opt/venv/lib/python3.11/site-packages") {
		t.Errorf("a venv only the command names: source %q, warnings %q", source, warnings)
	}
}
