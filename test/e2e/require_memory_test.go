//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/require"
	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
)

// maxPeakRSS is the promise: under 30 MiB on any input.
const maxPeakRSS = 30 << 20

// peakRSSEnv names the file where this test binary, started as a measuring
// parent, writes the peak RSS of the command it runs.
const peakRSSEnv = "GPU_PREFLIGHT_E2E_PEAK_RSS"

func init() {
	if out := os.Getenv(peakRSSEnv); out != "" {
		os.Exit(measure(out, os.Args[1:]))
	}
}

// measure runs argv and writes its peak RSS in KiB to out. Linux charges a
// child the RSS its parent had when it exec'd as well, so the parent is this
// small process and not the test, which may have grown large.
func measure(out string, argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, peakRSSEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		return 125
	}
	kib := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	if err := os.WriteFile(out, []byte(strconv.FormatInt(kib, 10)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		return 125
	}
	return cmd.ProcessState.ExitCode()
}

// runMeasured runs bin with env and args under a measuring parent and a
// 2 GiB address-space limit (a run that would take gigabytes fails here, not
// the machine), and returns what it did and its peak RSS in bytes.
func runMeasured(t *testing.T, env []string, bin string, args ...string) (result, int64) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rss := filepath.Join(t.TempDir(), "peak-rss")
	cmd := exec.Command("/bin/sh", append([]string{"-c", `ulimit -v 2097152; exec "$0" "$@"`, self, bin}, args...)...)
	cmd.Env = append(append([]string{}, env...), peakRSSEnv+"="+rss)
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
}
