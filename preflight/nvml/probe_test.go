package nvml

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// helperScenario, the start of the fake NVML library's scenario variable,
// makes the test binary act as a probe (TestMain), so the runner is tested
// against real processes without cgo, through a variable the probe is given.
const helperScenario = "nvml-probe-test:"

func TestMain(m *testing.M) {
	if mode, ok := strings.CutPrefix(os.Getenv(fakenvml.EnvScenario), helperScenario); ok {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

func helper(mode string) int {
	doc := Document{Outcome: facts.ProbeOK, Library: os.Getenv("PREFLIGHT_NVML_LIBRARY"), NVMLVersion: "12.550.54.15",
		DriverVersion: "550.54.15", CUDAVersion: "12.4", GPUs: []facts.GPU{{Index: 0, Brand: "Nvidia", ComputeCapability: "9.0"}}}
	mode, pidfile, _ := strings.Cut(mode, ":")
	switch mode {
	case "ok":
		fmt.Fprintln(os.Stderr, "probe says hello")
	case "noisy":
		fmt.Fprint(os.Stderr, strings.Repeat("x", 100<<10))
	case "garbage":
		fmt.Println("not json")
		fmt.Fprintln(os.Stderr, "boom")
		return 3
	case "hang":
		// A child in the same process group, as a wedged driver helper
		// would be: the deadline must take it down too.
		self, err := os.Executable()
		if err != nil {
			return 2
		}
		child := exec.Command(self)
		child.Env = append(os.Environ(), fakenvml.EnvScenario+"="+helperScenario+"sleep")
		if err := child.Start(); err != nil {
			return 2
		}
		os.WriteFile(pidfile, []byte(strconv.Itoa(child.Process.Pid)), 0o644)
		time.Sleep(time.Hour)
	case "sleep":
		time.Sleep(time.Hour)
	}
	json.NewEncoder(os.Stdout).Encode(doc)
	return 0
}

func helperOptions(t *testing.T, mode string) Options {
	t.Helper()
	return Options{Path: os.Args[0], NoMemfd: true, Timeout: 5 * time.Second, Env: helperEnv(mode)}
}

func helperEnv(mode string) []string {
	return append(os.Environ(), fakenvml.EnvScenario+"="+helperScenario+mode)
}

func TestProbeRunsFileAndParsesDocument(t *testing.T) {
	opts := helperOptions(t, "ok")
	opts.Library = "/opt/fake/libnvidia-ml.so.1"
	r := Probe(context.Background(), opts)
	if r.NVML.Outcome != facts.ProbeOK || r.NVML.Via != "file:"+os.Args[0] || r.NVML.Version != "12.550.54.15" {
		t.Fatalf("NVML = %+v", r.NVML)
	}
	if r.Document == nil || r.Document.Library != opts.Library || len(r.Document.GPUs) != 1 {
		t.Fatalf("document = %+v; want the library passed through PREFLIGHT_NVML_LIBRARY", r.Document)
	}
	if r.Stderr != "probe says hello\n" {
		t.Errorf("stderr = %q", r.Stderr)
	}
	if r.NVML.DurationMillis <= 0 {
		t.Errorf("duration %v", r.NVML.DurationMillis)
	}
}

func TestProbeRunsEmbeddedCopyFromMemfd(t *testing.T) {
	image, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	saved := embedded
	embedded = image
	defer func() { embedded = saved }()

	opts := helperOptions(t, "ok")
	opts.NoMemfd = false
	opts.Path = "/nonexistent/" + ProbeName
	r := Probe(context.Background(), opts)
	if r.NVML.Outcome != facts.ProbeOK || r.NVML.Via != "memfd" {
		t.Fatalf("NVML = %+v, want ok via memfd", r.NVML)
	}
}

func TestProbeFallsBackToFileWithoutEmbeddedCopy(t *testing.T) {
	saved := embedded
	embedded = nil
	defer func() { embedded = saved }()
	opts := helperOptions(t, "ok")
	opts.NoMemfd = false
	r := Probe(context.Background(), opts)
	if r.NVML.Outcome != facts.ProbeOK || !strings.HasPrefix(r.NVML.Via, "file:") {
		t.Fatalf("NVML = %+v, want ok from the file", r.NVML)
	}
}

// The hanging probe starts a child in its process group and sleeps: the
// deadline kills both. The test needs the child to exist before the kill,
// which a loaded machine can delay past a short deadline: a run whose probe
// was killed before it wrote the child's pid is run again with twice the
// deadline.
func TestProbeTimeoutKillsTheWholeProcessGroup(t *testing.T) {
	answer := func() time.Duration {
		start := time.Now()
		if r := Probe(context.Background(), helperOptions(t, "ok")); r.NVML.Outcome != facts.ProbeOK {
			t.Fatalf("NVML = %+v, want ok", r.NVML)
		}
		return time.Since(start)
	}
	answered := answer()
	for timeout := 500 * time.Millisecond; ; timeout *= 2 {
		pidfile := filepath.Join(t.TempDir(), "pid")
		opts := helperOptions(t, "hang:"+pidfile)
		opts.Timeout = timeout
		start := time.Now()
		r := Probe(context.Background(), opts)
		elapsed := time.Since(start)
		if r.NVML.Outcome != facts.ProbeTimeout || !strings.Contains(r.NVML.Error, "within PREFLIGHT_NVML_TIMEOUT="+timeout.String()) {
			t.Fatalf("NVML = %+v, want timeout", r.NVML)
		}
		harness.WithinDeadline(t, "Probe", elapsed, timeout, answered, answer)
		data, _ := os.ReadFile(pidfile)
		pid, err := strconv.Atoi(string(data))
		if err != nil {
			if timeout >= time.Minute {
				t.Fatalf("the hanging probe had not started its child at a %v deadline", timeout)
			}
			continue
		}
		waitGone(t, pid)
		return
	}
}

// waitGone fails unless pid is gone or a zombie (dead, awaiting its new
// parent's wait) within 10 s; unkilled, it would sleep for an hour.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if _, rest, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(rest, "Z") {
			return
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("process %d of the probe's group still runs after the deadline", pid)
}

func TestProbeStopsWhenContextIsCancelled(t *testing.T) {
	opts := helperOptions(t, "sleep")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	r := Probe(ctx, opts)
	if r.NVML.Outcome != facts.ProbeFailed || !strings.Contains(r.NVML.Error, "context canceled") {
		t.Fatalf("NVML = %+v, want failed: context canceled", r.NVML)
	}
}

func TestProbeReportsGarbageAsFailedWithStderr(t *testing.T) {
	r := Probe(context.Background(), helperOptions(t, "garbage"))
	if r.NVML.Outcome != facts.ProbeFailed || r.Document != nil {
		t.Fatalf("NVML = %+v", r.NVML)
	}
	for _, want := range []string{"exit status 3", "not its JSON document", "stderr: boom"} {
		if !strings.Contains(r.NVML.Error, want) {
			t.Errorf("error %q lacks %q", r.NVML.Error, want)
		}
	}
}

func TestProbeBoundsStderr(t *testing.T) {
	r := Probe(context.Background(), helperOptions(t, "noisy"))
	if r.NVML.Outcome != facts.ProbeOK {
		t.Fatalf("NVML = %+v", r.NVML)
	}
	note := "…[truncated 102400 bytes]" // the helper wrote 100 KiB
	if len(r.Stderr) > MaxStderr+len(note) || !strings.HasSuffix(r.Stderr, note) {
		t.Errorf("stderr is %d bytes, want at most %d and marked %q", len(r.Stderr), MaxStderr, note)
	}
}

func TestProbeUnavailableNamesWhatItTried(t *testing.T) {
	saved := embedded
	embedded = nil
	defer func() { embedded = saved }()
	opts := helperOptions(t, "ok")
	opts.Path = "/nonexistent/" + ProbeName
	r := Probe(context.Background(), opts)
	if r.NVML.Outcome != facts.ProbeUnavailable || r.Document != nil {
		t.Fatalf("NVML = %+v", r.NVML)
	}
	for _, want := range []string{"built without the embedded probe", "/nonexistent/" + ProbeName} {
		if !strings.Contains(r.NVML.Error, want) {
			t.Errorf("error %q lacks %q", r.NVML.Error, want)
		}
	}
}

func BenchmarkProbeFromFile(b *testing.B) {
	opts := Options{Path: os.Args[0], NoMemfd: true, Env: helperEnv("ok")}
	for b.Loop() {
		if r := Probe(context.Background(), opts); r.NVML.Outcome != facts.ProbeOK {
			b.Fatal(r.NVML)
		}
	}
}

func BenchmarkProbeFromMemfd(b *testing.B) {
	image, err := os.ReadFile(os.Args[0])
	if err != nil {
		b.Fatal(err)
	}
	saved := embedded
	embedded = image
	defer func() { embedded = saved }()
	b.SetBytes(int64(len(image)))
	opts := Options{Path: "/nonexistent", Env: helperEnv("ok")}
	for b.Loop() {
		if r := Probe(context.Background(), opts); r.NVML.Via != "memfd" {
			b.Fatal(r.NVML)
		}
	}
}

func TestProbeFindsAProbeOnPATH(t *testing.T) {
	saved := embedded
	embedded = nil
	defer func() { embedded = saved }()
	dir := t.TempDir()
	onPath := filepath.Join(dir, ProbeName)
	if err := os.Symlink(os.Args[0], onPath); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	opts := helperOptions(t, "ok")
	opts.Path = ""
	r := Probe(context.Background(), opts)
	if r.NVML.Outcome != facts.ProbeOK || r.NVML.Via != "file:"+onPath {
		t.Fatalf("NVML = %+v, want ok from %s", r.NVML, onPath)
	}
}

// TestEndedIsOneReadingForEveryProbe: the preflight's deadline passing is a
// timeout, a cancel is a stop, and a program that exited answered, for the
// NVML, CUDA and RDMA checks alike.
func TestEndedIsOneReadingForEveryProbe(t *testing.T) {
	started := Execution{Via: "memfd", Timeout: 2 * time.Second}
	cases := []struct {
		name string
		x    Execution
		want Ending
		why  string
	}{
		{"nothing started", Execution{Tried: []string{"memfd: ENOSYS"}}, Unstarted, "could not be started: memfd: ENOSYS"},
		{"killed at its timeout", func() Execution { x := started; x.TimedOut = true; return x }(), TimedOut, "no answer within X_TIMEOUT=2s"},
		{"the preflight's deadline", func() Execution { x := started; x.Canceled = context.DeadlineExceeded; return x }(), TimedOut, "deadline"},
		{"a cancel", func() Execution { x := started; x.Canceled = context.Canceled; return x }(), Stopped, "stopped: context canceled"},
		{"exited", started, Answered, ""},
	}
	for _, c := range cases {
		got, why := c.x.Ended("the X check", "X_TIMEOUT")
		if got != c.want || !strings.Contains(why, c.why) || (c.want == Answered) != (why == "") {
			t.Errorf("%s: %v %q, want %v with %q", c.name, got, why, c.want, c.why)
		}
	}
}
