//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/cuda"
	ft "github.com/gpu-preflight/gpu-preflight/preflight/fatbin/fatbintest"
	"github.com/gpu-preflight/gpu-preflight/test/fakecuda"
	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

// The CUDA smoke test (issue 16) end to end: the shim with its embedded
// probe, in init and kernel mode, against the fake libcuda.so.1 found
// through LD_LIBRARY_PATH as the job would find it, and against Debian's
// real libcuda1.

var (
	fakeCUDAOnce           sync.Once
	fakeCUDADir, compatDir string
	fakeCUDAErr            error
)

// fakeCUDA builds the fake libcuda.so.1 once per test binary, and a second
// copy that plays FAKE_CUDA_COMPAT_SCENARIO; it returns their directories.
func fakeCUDA(t *testing.T) (host, compat string) {
	t.Helper()
	fakeCUDAOnce.Do(func() {
		var dir string
		if dir, fakeCUDAErr = os.MkdirTemp("", "e2e-fakecuda-"); fakeCUDAErr != nil {
			return
		}
		fakeCUDADir, compatDir = filepath.Join(dir, "host"), filepath.Join(dir, "compat")
		for _, d := range []string{fakeCUDADir, compatDir} {
			if fakeCUDAErr = os.MkdirAll(d, 0o755); fakeCUDAErr != nil {
				return
			}
		}
		if _, fakeCUDAErr = fakecuda.Build(fakeCUDADir); fakeCUDAErr == nil {
			_, fakeCUDAErr = fakecuda.BuildCompat(compatDir)
		}
	})
	if fakeCUDAErr != nil {
		t.Fatalf("building the fake libcuda.so.1: %v", fakeCUDAErr)
	}
	return fakeCUDADir, compatDir
}

// cudaRecord is the part of the record the CUDA tests read.
type cudaRecord struct {
	Host struct {
		CUDA struct {
			Mode, Outcome, Error, Library string
			DriverAPIVersion              int
			DeviceCount                   int
			Devices                       []struct {
				Ordinal            int
				Name, UUID, Result string
				TotalBytes         uint64
				FreeBytes          uint64
				Steps              []struct{ Step, Error string }
			}
			Fatbin *struct {
				Library, Framework, Error string
				Targets                   []string
			}
		}
	}
	Checks []struct {
		ID, Status, Message, Remedy string
		NodeFault                   bool
	}
	Decision struct {
		Action   string
		ExitCode int
	}
}

func (r cudaRecord) finding(t *testing.T) (status, text string, nodeFault bool) {
	t.Helper()
	for _, c := range r.Checks {
		if c.ID == "cuda" {
			return c.Status, c.Message + " | " + c.Remedy, c.NodeFault
		}
	}
	t.Fatalf("record has no cuda check: %+v", r.Checks)
	return "", "", false
}

// cudaRun is one `gpu-preflight check --json` with the CUDA check in mode.
type cudaRun struct {
	rec     cudaRecord
	res     result
	ledger  string // what the fake held when the probe ended
	tag     string
	elapsed time.Duration
}

// cudaSetup is how a CUDA test runs the shim.
type cudaSetup struct {
	mode     string
	scenario fakecuda.Scenario
	compat   *fakecuda.Scenario // a compat copy first on the library path
	libPath  string             // LD_LIBRARY_PATH instead of the fakes'
	root     string             // PREFLIGHT_ROOT (an image with a framework)
	gpus     int                // H100s the fake NVML reports; 0: no NVML
	extra    []string
}

func runCUDA(t *testing.T, s cudaSetup) cudaRun {
	t.Helper()
	host, compat := fakeCUDA(t)
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	s.scenario.Ledger = ledger
	scen, err := s.scenario.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	libPath := host
	extra := []string{"PREFLIGHT_CUDA_CHECK=" + s.mode, fakecuda.EnvScenario + "=" + scen}
	if s.compat != nil {
		c := *s.compat
		c.Ledger = ledger
		p, err := c.Write(dir)
		if err != nil {
			t.Fatal(err)
		}
		libPath = compat + ":" + host
		extra = append(extra, fakecuda.EnvCompatScenario+"="+p)
	}
	if s.libPath != "" {
		libPath = s.libPath
	}
	tag := marker(t)
	extra = append(extra, "LD_LIBRARY_PATH="+libPath, tag)
	var env []string
	if s.gpus > 0 {
		nv := fakenvml.H100x8("550.54.15", 12040)
		nv.System["count"] = fmt.Sprint(s.gpus)
		nv.GPUs = nv.GPUs[:s.gpus]
		env = shimEnv(t, fakeLibrary(t), &nv, extra...)
	} else {
		root := s.root
		if root == "" {
			root = t.TempDir()
		}
		env, _ = boundedEnv(t, root, append([]string{"PREFLIGHT_PROVENANCE_DIR=off"}, extra...)...)
	}
	if s.root != "" {
		env = append(env, "PREFLIGHT_ROOT="+s.root)
	}
	env = append(env, s.extra...)
	r := run(t, 30*time.Second, env, shimBin(t), "check", "--json")
	var rec cudaRecord
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
		t.Fatalf("check --json (exit %d) printed no record: %v\nstderr: %s", r.code, err, r.stderr)
	}
	schematest.Validate(t, []byte(r.stdout))
	held, _ := os.ReadFile(ledger)
	if left := processesWith(tag); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
	return cudaRun{rec: rec, res: r, ledger: strings.TrimSpace(string(held)), tag: tag, elapsed: r.elapsed}
}

// released is what the fake holds after a probe that gave everything back.
const released = "contexts 0 modules 0 allocations 0"

// Success on 1 and 8 GPUs, in both modes: the check passes, every device
// is in the record with its memory, the contexts, modules and allocations
// are all given back before the job starts, and the job starts.
func TestCUDASucceedsOnOneAndEightGPUs(t *testing.T) {
	for _, n := range []int{1, 8} {
		for _, mode := range []string{"init", "kernel"} {
			t.Run(fmt.Sprintf("%d GPUs %s", n, mode), func(t *testing.T) {
				c := runCUDA(t, cudaSetup{mode: mode, scenario: fakecuda.OK(n, fakecuda.H100), gpus: n})
				status, text, _ := c.rec.finding(t)
				if status != "pass" || c.res.code != 0 || c.rec.Decision.Action != "exec" {
					t.Fatalf("cuda %s, exit %d: %s\nstderr: %s", status, c.res.code, text, c.res.stderr)
				}
				cu := c.rec.Host.CUDA
				if cu.Mode != mode || cu.Outcome != "ok" || cu.DriverAPIVersion != 12040 || cu.DeviceCount != n || len(cu.Devices) != n {
					t.Errorf("host.cuda = %+v", cu)
				}
				for _, d := range cu.Devices {
					if d.Result != "ok" || d.Name != "NVIDIA H100 80GB HBM3" || d.TotalBytes != 81559<<20 || d.FreeBytes == 0 || !strings.HasPrefix(d.UUID, "GPU-5eed0001-") {
						t.Errorf("device %+v", d)
					}
					steps := len(d.Steps)
					if (mode == "init" && steps != 4) || (mode == "kernel" && steps != 9) {
						t.Errorf("device %d ran %d steps in %s mode: %+v", d.Ordinal, steps, mode, d.Steps)
					}
				}
				if !strings.Contains(text, fmt.Sprintf("%d GPU(s)", n)) || (mode == "kernel") != strings.Contains(text, "PTX kernel ran") {
					t.Errorf("message: %s", text)
				}
				if c.ledger != released {
					t.Errorf("the fake still holds %q when the probe is done, want %q", c.ledger, released)
				}
			})
		}
	}
}

// Every error the issue names, at every step, ends with status error, CUDA's
// name for it, the GPU (or every GPU, for cuInit), the table's remedy, the
// node-fault code for a node fault and the abort code for a mismatch; the
// contexts are released whatever failed.
func TestCUDAEveryErrorAtEveryStep(t *testing.T) {
	codes := []int{802, 803, 804, 46, 2, 222, 218, 209}
	steps := []string{"init", "context", "memory", "fatbin", "module", "alloc", "launch", "copy"}
	root := frameworkImage(t, []ft.Entry{{Kind: ft.Cubin, SM: 80}, {Kind: ft.Cubin, SM: 90}})
	for _, step := range steps {
		for _, code := range codes {
			t.Run(fmt.Sprintf("%s %d", step, code), func(t *testing.T) {
				s := fakecuda.OK(4, fakecuda.H100).Fail(step, code, 2)
				if step == "init" {
					s = fakecuda.InitFails(code)
				}
				c := runCUDA(t, cudaSetup{mode: "kernel", scenario: s, root: root})
				m := cuda.Meanings[code]
				status, text, nodeFault := c.rec.finding(t)
				if status != "error" || !strings.Contains(text, m.Name) || !strings.Contains(text, m.Remedy) || nodeFault != (m.Fault == cuda.NodeFault) {
					t.Errorf("cuda %s (nodeFault %v), want error with %s and its remedy (nodeFault %v): %s", status, nodeFault, m.Name, m.Fault == cuda.NodeFault, text)
				}
				gpu := "GPU 2 (NVIDIA H100 80GB HBM3 GPU-5eed0001-0002-4002-8001-000000001002"
				if step == "init" {
					gpu = "every GPU"
				}
				if !strings.Contains(text, gpu) || !strings.Contains(text, step+": "+m.Name) {
					t.Errorf("the finding does not name %q and the step %q: %s", gpu, step, text)
				}
				want := abortCode
				if m.Fault == cuda.NodeFault {
					want = nodeFaultCode
				}
				if c.res.code != want || c.rec.Decision.ExitCode != want {
					t.Errorf("exit %d (record %d), want %d", c.res.code, c.rec.Decision.ExitCode, want)
				}
				if step != "init" && c.ledger != released {
					t.Errorf("the fake still holds %q after the failure, want %q", c.ledger, released)
				}
			})
		}
	}
}

// A kernel that writes another value than it was given is a node fault.
func TestCUDAWrongValueIsANodeFault(t *testing.T) {
	c := runCUDA(t, cudaSetup{mode: "kernel", scenario: fakecuda.OK(8, fakecuda.H100).WrongValue(5), gpus: 8})
	status, text, nodeFault := c.rec.finding(t)
	if status != "error" || !nodeFault || c.res.code != nodeFaultCode || !strings.Contains(text, "compare: a wrong value") ||
		!strings.Contains(text, "GPU 5 (") || !strings.Contains(text, "1 of 8") {
		t.Errorf("cuda %s nodeFault %v exit %d: %s", status, nodeFault, c.res.code, text)
	}
	if got := c.rec.Host.CUDA.Devices[5].Result; got != "compare: WRONG_VALUE" {
		t.Errorf("device 5 result %q", got)
	}
}

// A cuInit that never returns cannot hang the start: the probe and its
// process group are killed at PREFLIGHT_CUDA_TIMEOUT, the run ends soon
// after it (withinDeadline), and nothing is left behind (runCUDA
// checks). Under the warn policy the job still starts, as fast.
func TestCUDAHangingInitIsBounded(t *testing.T) {
	ref := reference(t)
	c := runCUDA(t, cudaSetup{mode: "init", scenario: fakecuda.Hang(), extra: []string{"PREFLIGHT_CUDA_TIMEOUT=2s"}})
	status, text, nodeFault := c.rec.finding(t)
	if status != "error" || !nodeFault || c.rec.Host.CUDA.Outcome != "timeout" || !strings.Contains(text, "PREFLIGHT_CUDA_TIMEOUT=2s") {
		t.Errorf("cuda %s nodeFault %v outcome %q: %s", status, nodeFault, c.rec.Host.CUDA.Outcome, text)
	}
	if c.elapsed < 2*time.Second {
		t.Errorf("the run took %v with PREFLIGHT_CUDA_TIMEOUT=2s; it cannot end before the deadline", c.elapsed)
	}
	withinDeadline(t, "the run", c.elapsed, 2*time.Second, ref)
	if c.res.code != nodeFaultCode {
		t.Errorf("exit %d, want %d", c.res.code, nodeFaultCode)
	}

	host, _ := fakeCUDA(t)
	dir := t.TempDir()
	scen, _ := fakecuda.Hang().Write(dir)
	tag := marker(t)
	env, _ := boundedEnv(t, t.TempDir(), "PREFLIGHT_PROVENANCE_DIR=off", "PREFLIGHT_POLICY=warn", "PREFLIGHT_CUDA_CHECK=kernel",
		"PREFLIGHT_CUDA_TIMEOUT=1s", "LD_LIBRARY_PATH="+host, fakecuda.EnvScenario+"="+scen, tag)
	w := run(t, 10*time.Second, env, shimBin(t), "--", "sh", "-c", "echo ran")
	if w.code != 0 || w.stdout != "ran\n" {
		t.Errorf("warn policy: exit %d, stdout %q after %v", w.code, w.stdout, w.elapsed)
	}
	withinDeadline(t, "the run under the warn policy", w.elapsed, time.Second, ref)
	if left := processesWith(tag); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// off, the default, starts nothing: libcuda is never loaded (the fake
// notes every load), so a cuInit that would hang costs nothing, and the
// record says the test did not run.
func TestCUDAOffStartsNothing(t *testing.T) {
	host, _ := fakeCUDA(t)
	dir := t.TempDir()
	scen, _ := fakecuda.Hang().Write(dir)
	loaded := filepath.Join(dir, "loaded")
	for _, mode := range []string{"", "PREFLIGHT_CUDA_CHECK=off"} {
		env, _ := boundedEnv(t, t.TempDir(), "PREFLIGHT_PROVENANCE_DIR=off", "LD_LIBRARY_PATH="+host,
			fakecuda.EnvScenario+"="+scen, fakecuda.EnvLoaded+"="+loaded)
		if mode != "" {
			env = append(env, mode)
		}
		rec, r := checkJSON(t, env)
		if status, _ := finding(t, rec, "cuda"); status != "skip" || r.code != 0 {
			t.Errorf("%q: cuda %s, exit %d after %v", mode, status, r.code, r.elapsed)
		}
		var cr cudaRecord
		json.Unmarshal([]byte(r.stdout), &cr)
		if cr.Host.CUDA.Mode != "off" || cr.Host.CUDA.Outcome != "not-run" {
			t.Errorf("%q: host.cuda = %+v", mode, cr.Host.CUDA)
		}
	}
	if b, err := os.ReadFile(loaded); err == nil || len(b) > 0 {
		t.Errorf("libcuda.so.1 was loaded with the check off: %q", b)
	}
	// The same setup in init mode does load it: the detector works.
	env, _ := boundedEnv(t, t.TempDir(), "PREFLIGHT_PROVENANCE_DIR=off", "LD_LIBRARY_PATH="+host, "PREFLIGHT_CUDA_CHECK=init",
		"PREFLIGHT_CUDA_TIMEOUT=500ms", fakecuda.EnvScenario+"="+scen, fakecuda.EnvLoaded+"="+loaded)
	run(t, 10*time.Second, env, shimBin(t), "check")
	if b, _ := os.ReadFile(loaded); !strings.Contains(string(b), "loaded by pid") {
		t.Errorf("init mode did not load the fake: %q", b)
	}
}

// The library path decides which libcuda the job gets, and so the smoke
// test: an image that puts its forward-compatibility directory first gets
// that copy (here one that answers 803, as a compat library that does not
// match the kernel driver does); put last, the host's.
func TestCUDAUsesTheImagesLibraryPath(t *testing.T) {
	host, compat := fakeCUDA(t)
	mismatch := fakecuda.InitFails(803)
	c := runCUDA(t, cudaSetup{mode: "init", scenario: fakecuda.OK(2, fakecuda.H100), compat: &mismatch, gpus: 2})
	status, text, nodeFault := c.rec.finding(t)
	if status != "error" || nodeFault || c.res.code != abortCode || !strings.Contains(text, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH") ||
		!strings.Contains(text, filepath.Join(compat, "libcuda.so.1")) {
		t.Errorf("compat first: cuda %s nodeFault %v exit %d: %s", status, nodeFault, c.res.code, text)
	}
	if c.rec.Host.CUDA.Library != filepath.Join(compat, "libcuda.so.1") {
		t.Errorf("library %q, want the compat copy", c.rec.Host.CUDA.Library)
	}
	c = runCUDA(t, cudaSetup{mode: "init", scenario: fakecuda.OK(2, fakecuda.H100), compat: &mismatch, libPath: host + ":" + compat, gpus: 2})
	if status, text, _ := c.rec.finding(t); status != "pass" || c.rec.Host.CUDA.Library != filepath.Join(host, "libcuda.so.1") {
		t.Errorf("host first: cuda %s, library %q: %s", status, c.rec.Host.CUDA.Library, text)
	}
}

// frameworkImage is an image root with torch whose libtorch_cuda.so
// carries one fatbin container of entries.
func frameworkImage(t *testing.T, entries []ft.Entry) string {
	t.Helper()
	root := t.TempDir()
	sp := filepath.Join(root, "usr/local/lib/python3.10/dist-packages")
	for _, d := range []string{"torch/lib", "torch-2.4.0+cu124.dist-info"} {
		if err := os.MkdirAll(filepath.Join(sp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(sp, "torch-2.4.0+cu124.dist-info", "METADATA"), []byte("Name: torch\nVersion: 2.4.0+cu124\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ft.WriteSO(filepath.Join(sp, "torch/lib/libtorch_cuda.so"), entries); err != nil {
		t.Fatal(err)
	}
	return root
}

// Kernel mode loads a fatbin of the framework's own library: on GPUs it
// has code for, it loads; on a GPU it has none for, "no kernel image" is
// proven (209, a mismatch) rather than predicted.
func TestCUDAKernelModeLoadsTheFrameworksFatbin(t *testing.T) {
	root := frameworkImage(t, []ft.Entry{{Kind: ft.Cubin, SM: 80}, {Kind: ft.Cubin, SM: 90}})
	lib := "/usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so"

	c := runCUDA(t, cudaSetup{mode: "kernel", scenario: fakecuda.OK(8, fakecuda.H100), root: root})
	status, text, _ := c.rec.finding(t)
	fb := c.rec.Host.CUDA.Fatbin
	if status != "pass" || fb == nil || fb.Library != lib || fb.Framework != "torch" || strings.Join(fb.Targets, " ") != "sm_80 sm_90" {
		t.Fatalf("H100: cuda %s, fatbin %+v: %s", status, fb, text)
	}
	if !strings.Contains(text, "torch's kernels load") {
		t.Errorf("message: %s", text)
	}

	c = runCUDA(t, cudaSetup{mode: "kernel", scenario: fakecuda.OK(2, fakecuda.V100), root: root})
	status, text, nodeFault := c.rec.finding(t)
	if status != "error" || nodeFault || c.res.code != abortCode || !strings.Contains(text, "fatbin: CUDA_ERROR_NO_BINARY_FOR_GPU") ||
		!strings.Contains(text, "2 of 2") || !strings.Contains(text, "compiled for this GPU") {
		t.Errorf("V100: cuda %s nodeFault %v exit %d: %s", status, nodeFault, c.res.code, text)
	}
	// The PTX kernel still ran: the GPU works, the framework has no code for it.
	for _, d := range c.rec.Host.CUDA.Devices {
		if !slices.ContainsFunc(d.Steps, func(s struct{ Step, Error string }) bool { return s.Step == "compare" && s.Error == "" }) {
			t.Errorf("device %d did not run the PTX kernel after the fatbin failed: %+v", d.Ordinal, d.Steps)
		}
	}
}

// realCUDA fetches (once, cached in the download cache's nvidia folder) Debian's libcuda1 and
// libnvidia-ptxjitcompiler1 and returns the directory with libcuda.so.1.
func realCUDA(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(harness.Root(t), "scripts", "nvidia-libs.sh"), "", "", "cuda")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/nvidia-libs.sh cuda: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// Debian's real libcuda1 535 on this machine, which has no GPU: it loads,
// reports the driver API of 12.2, and cuInit answers CUDA_ERROR_NO_DEVICE,
// info where no GPU is expected, an error (a mismatch) where NVML sees
// GPUs. It exports every entry point the probe resolves.
func TestCUDARealLibcuda(t *testing.T) {
	dir := realCUDA(t)
	for _, mode := range []string{"init", "kernel"} {
		c := runCUDA(t, cudaSetup{mode: mode, scenario: fakecuda.OK(1, fakecuda.H100), libPath: dir})
		cu := c.rec.Host.CUDA
		status, text, _ := c.rec.finding(t)
		if status != "info" || c.res.code != 0 || cu.Outcome != "failed" || cu.DriverAPIVersion != 12020 ||
			cu.Library != filepath.Join(dir, "libcuda.so.1") || !strings.Contains(text, "CUDA_ERROR_NO_DEVICE") {
			t.Errorf("%s: cuda %s exit %d, host.cuda %+v: %s", mode, status, c.res.code, cu, text)
		}
	}
	c := runCUDA(t, cudaSetup{mode: "init", scenario: fakecuda.OK(1, fakecuda.H100), libPath: dir, gpus: 8})
	if status, text, nodeFault := c.rec.finding(t); status != "error" || nodeFault || c.res.code != abortCode ||
		!strings.Contains(text, "CUDA_ERROR_NO_DEVICE") || !strings.Contains(text, "CUDA_VISIBLE_DEVICES") {
		t.Errorf("with GPUs visible: cuda %s nodeFault %v exit %d: %s", status, nodeFault, c.res.code, text)
	}

	nm, err := exec.Command("nm", "-D", "--defined-only", filepath.Join(dir, "libcuda.so.1")).Output()
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, line := range strings.Split(string(nm), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			exported[f[2]] = true
		}
	}
	for _, sym := range mustProbeSymbols(t) {
		if !exported[sym] {
			t.Errorf("the real libcuda.so.1 does not export %s, which the probe resolves", sym)
		}
	}
}

// The fake defines exactly the entry points the probe resolves, and names
// each error as the real library does.
func TestFakeCUDAMatchesTheRealLibrary(t *testing.T) {
	host, _ := fakeCUDA(t)
	exports, err := fakecuda.Exports(filepath.Join(host, "libcuda.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	want := mustProbeSymbols(t)
	slices.Sort(exports)
	slices.Sort(want)
	if !slices.Equal(exports, want) {
		t.Errorf("the fake exports %v\nthe probe resolves %v", exports, want)
	}

	fixture, err := os.ReadFile(filepath.Join(harness.Root(t), "preflight", "cuda", "testdata", "libcuda-error-names.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lister := filepath.Join(t.TempDir(), "errnames")
	if out, err := exec.Command("gcc", "-Wall", "-o", lister, filepath.Join(harness.Root(t), "preflight", "cuda", "testdata", "errnames.c"), "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("compiling errnames.c: %v\n%s", err, out)
	}
	real, err := exec.Command(lister, filepath.Join(realCUDA(t), "libcuda.so.1")).Output()
	if err != nil {
		t.Fatal(err)
	}
	var body []string
	for _, l := range strings.Split(string(fixture), "\n") {
		if !strings.HasPrefix(l, "#") {
			body = append(body, l)
		}
	}
	if string(real) != strings.Join(body, "\n") {
		t.Errorf("the real libcuda's names differ from testdata/libcuda-error-names.txt:\n%s", real)
	}
	fake, err := exec.Command(lister, filepath.Join(host, "libcuda.so.1")).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(fake)), "\n") {
		if !strings.Contains(string(real), line+"\n") {
			t.Errorf("the fake says %q; the real library does not", line)
		}
	}
}

func mustProbeSymbols(t *testing.T) []string {
	t.Helper()
	syms, err := fakecuda.ProbeSymbols()
	if err != nil {
		t.Fatal(err)
	}
	return syms
}
