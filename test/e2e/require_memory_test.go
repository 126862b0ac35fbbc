//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/require"
	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// maxPeakRSS is the promise: under 30 MiB on any input.
const maxPeakRSS = 30 << 20

var (
	peakRSSOnce sync.Once
	peakRSSBin  string
	peakRSSErr  error
)

// peakRSSParent compiles testdata/peakrss.c once per test binary: a Go
// parent would hold the environment three times (the kernel's, the
// runtime's, the child's) and be charged to the child it measures.
func peakRSSParent(t *testing.T) string {
	t.Helper()
	peakRSSOnce.Do(func() {
		dir, err := os.MkdirTemp("", "e2e-peakrss-")
		if err != nil {
			peakRSSErr = err
			return
		}
		peakRSSBin = filepath.Join(dir, "peakrss")
		out, err := exec.Command("gcc", "-O1", "-Wall", "-Werror", "-o", peakRSSBin, filepath.Join(harness.Root(t), "test", "e2e", "testdata", "peakrss.c")).CombinedOutput()
		if err != nil {
			peakRSSErr = fmt.Errorf("%w\n%s", err, out)
		}
	})
	if peakRSSErr != nil {
		t.Fatalf("compiling testdata/peakrss.c: %v", peakRSSErr)
	}
	return peakRSSBin
}

// runMeasured runs bin with env and args under peakRSSParent and a 2 GiB
// address-space limit (a run that would take gigabytes fails here, not the
// machine), and returns what it did and its peak RSS in bytes.
func runMeasured(t *testing.T, env []string, bin string, args ...string) (result, int64) {
	t.Helper()
	rss := filepath.Join(t.TempDir(), "peak-rss")
	cmd := exec.Command("/bin/sh", append([]string{"-c", `ulimit -v 2097152; exec "$0" "$@"`, peakRSSParent(t), rss, bin}, args...)...)
	cmd.Env = env
	r := runCmd(t, cmd, time.Minute)
	b, err := os.ReadFile(rss)
	if err != nil {
		t.Fatalf("the measuring parent wrote no peak RSS (exit %d): %v\n%s", r.code, err, r.stderr)
	}
	kib, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return r, kib << 10
}

// Brands as the official images' NVIDIA_REQUIRE_CUDA name them
// (preflight/require/testdata/nvidia_require_cuda.txt).
var requireBrands = []string{"unknown", "grid", "tesla", "nvidia", "quadro", "quadrortx", "nvidiartx", "vapps", "vpc", "vcs", "vws", "cloudgaming"}

// requirements32x1000 is nvidia-container-cli's 32 requirements, each of
// 1 000 forward-compatibility terms of the official images' shape, for
// branches no driver has, then last.
func requirements32x1000(last string) []string {
	var env []string
	for v := range require.MaxToolkitRequirements {
		terms := make([]string, 0, 1000)
		for i := range 999 {
			b := 1000 + v*1000 + i
			terms = append(terms, fmt.Sprintf("brand=%s,driver>=%d,driver<%d", requireBrands[i%len(requireBrands)], b, b+1))
		}
		env = append(env, fmt.Sprintf("NVIDIA_REQUIRE_V%02d=%s", v, strings.Join(append(terms, last), " ")))
	}
	return env
}

// 32 NVIDIA_REQUIRE_* of 1 000 terms each, on 8 H100s, every term
// evaluated: the job's run, check --json (with its record) and explain stay
// under maxPeakRSS and decide as the toolkit would.
func TestRequirements32x1000StayUnder30MiB(t *testing.T) {
	for _, tt := range []struct {
		name                            string
		last                            string
		runCode, checkCode, explainCode int
	}{
		{"NoTermHolds", "brand=nvidia,driver>=999,driver<1000", 78, 78, 1},
		{"TheLastTermHolds", "brand=nvidia,driver>=580,driver<581", 0, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("580.65.06", 13000)),
				append(requirements32x1000(tt.last), "PREFLIGHT_PROVENANCE_DIR="+t.TempDir())...)
			for _, c := range []struct {
				args []string
				code int
			}{
				{[]string{"--", "true"}, tt.runCode},
				{[]string{"check", "--json"}, tt.checkCode},
				{[]string{"explain"}, tt.explainCode},
			} {
				r, peak := runMeasured(t, env, shimBin(t), c.args...)
				t.Logf("%v: exit %d, peak RSS %.1f MiB", c.args, r.code, float64(peak)/(1<<20))
				if peak >= maxPeakRSS {
					t.Errorf("%v: peak RSS %.1f MiB, over the %d MiB promise", c.args, float64(peak)/(1<<20), maxPeakRSS>>20)
				}
				if r.code != c.code || strings.Contains(r.stderr, "goroutine ") {
					t.Errorf("%v: exit %d, want %d\nstderr: %.3000s", c.args, r.code, c.code, r.stderr)
				}
				if n := strings.Count(r.stdout, "NVIDIA_REQUIRE_V31: "); c.args[0] == "explain" && n != 8 {
					t.Errorf("explain explains NVIDIA_REQUIRE_V31 %d times, want once per GPU:\n%.2000s", n, r.stdout)
				}
			}
		})
	}
}

// Linux bounds what execve passes: one argument or variable at most
// MAX_ARG_STRLEN, 32 pages (execve(2), "Limits on size of arguments and
// environment"), all of them together a quarter of the stack limit. Each
// input at that bound (a requirement term, 65 000 device entries, a PATH,
// 100 000 arguments, an environment near 2 MiB): the job starts and the
// peak stays under maxPeakRSS.
func TestLongInputsStayUnder30MiB(t *testing.T) {
	const maxArg = 32*4096 - 1 // MAX_ARG_STRLEN with its NUL
	fill := func(name, unit string) string {
		return name + "=" + strings.Repeat(unit, (maxArg-len(name)-1)/len(unit))
	}
	manyArgs := make([]string, 100_000)
	for i := range manyArgs {
		manyArgs[i] = strconv.Itoa(i)
	}
	var bigEnv []string
	for i := range 15 {
		bigEnv = append(bigEnv, fill(fmt.Sprintf("JOB_BLOB_%02d", i), "x"))
	}
	for _, tt := range []struct {
		name string
		env  []string
		args []string
	}{
		{"OneRequirementTerm", []string{"NVIDIA_REQUIRE_CUDA=cuda>=12.0 brand=" + strings.Repeat("x", maxArg-64)}, nil},
		{"CUDAVisibleDevices", []string{fill("CUDA_VISIBLE_DEVICES", "0,")}, nil},
		{"NVIDIAVisibleDevices", []string{fill("NVIDIA_VISIBLE_DEVICES", "0,")}, nil},
		{"PATH", []string{fill("PATH", "/usr/bin:")}, nil},
		{"ManyArguments", nil, manyArgs},
		{"Environment", bigEnv, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("580.65.06", 13000)), append([]string{"PREFLIGHT_PROVENANCE_DIR=" + t.TempDir()}, tt.env...)...)
			r, peak := runMeasured(t, env, shimBin(t), append([]string{"--", "/bin/sh", "-c", "echo started"}, tt.args...)...)
			t.Logf("exit %d, peak RSS %.1f MiB", r.code, float64(peak)/(1<<20))
			if r.stdout != "started\n" {
				t.Errorf("exit %d: the job did not start\nstderr: %.2000s", r.code, r.stderr)
			}
			if peak >= maxPeakRSS {
				t.Errorf("peak RSS %.1f MiB, over the %d MiB promise", float64(peak)/(1<<20), maxPeakRSS>>20)
			}
		})
	}
	t.Run("EnvironmentOfAWholeStack", func(t *testing.T) { wholeStackOfEnvironment(t, maxArg) })
}

// wholeStackOfEnvironment: under a 64 MiB stack limit the kernel passes 46
// variables of MAX_ARG_STRLEN (6 MB). The probe is given none of them and
// the job's copy replaces the kernel's, so the job's run (exec'd or
// supervised), check and check --json stay under maxPeakRSS on 8 GPUs, and
// the job gets every byte.
func wholeStackOfEnvironment(t *testing.T, maxArg int) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_STACK, &lim); err != nil {
		t.Fatal(err)
	}
	if want := uint64(64 << 20); lim.Cur < want {
		raised := lim
		raised.Cur = min(want, lim.Max)
		if err := syscall.Setrlimit(syscall.RLIMIT_STACK, &raised); err != nil || raised.Cur < want {
			t.Fatalf("raising the stack limit to 64 MiB (hard limit %d): %v", lim.Max, err)
		}
		t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_STACK, &lim) })
	}
	var blobs []string
	for i := range 46 {
		name := fmt.Sprintf("JOB_BLOB_%02d", i)
		blobs = append(blobs, name+"="+strings.Repeat(string(rune('a'+i%26)), maxArg-len(name)-1))
	}
	env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("580.65.06", 13000)), blobs...)
	for _, args := range [][]string{{"--", "true"}, {"check"}, {"check", "--json"}, {"supervised", "--", "true"}} {
		env, label := env, args
		if args[0] == "supervised" {
			env, args = append(env[:len(env):len(env)], "PREFLIGHT_SUPERVISE=true"), args[1:]
		}
		r, peak := runMeasured(t, env, shimBin(t), args...)
		t.Logf("%v: exit %d, peak RSS %.1f MiB", label, r.code, float64(peak)/(1<<20))
		if r.code != 0 {
			t.Errorf("%v: exit %d, want 0\nstderr: %.2000s", label, r.code, r.stderr)
		}
		if peak >= maxPeakRSS {
			t.Errorf("%v: peak RSS %.1f MiB, over the %d MiB promise", label, float64(peak)/(1<<20), maxPeakRSS>>20)
		}
	}
	r := run(t, time.Minute, env, shimBin(t), "--", "/bin/cat", "/proc/self/environ")
	if want := strings.Join(env, "\x00") + "\x00"; r.stdout != want {
		t.Errorf("the job's environment is not the shim's (%d bytes, want %d; exit %d)\nstderr: %.2000s", len(r.stdout), len(want), r.code, r.stderr)
	}
}
