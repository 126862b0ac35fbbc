// Command startup measures what an entrypoint adds to a command's start
// (bare exec, tini, dumb-init, an NGC-style bash entrypoint, a Go exec-only
// program, and gpu-preflight's configurations) and prints one Markdown
// table; docs/PERFORMANCE.md says how to read it.
//
//	go run ./bench/startup [-runs 300] [-bin bin] [-against DIR]
//
// -against DIR runs every gpu-preflight case again with the build in DIR,
// in the same interleaved rounds. Each round runs every case once in a
// fresh random order, so load falls on all alike. A case that exits
// non-zero stops the benchmark: a wrapper that fails fast would look cheap.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/fakecuda"
	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
)

// benchCase is one way of starting /bin/true.
type benchCase struct {
	name  string
	argv  []string
	env   []string
	shim  bool     // gpu-preflight's rows, which the preflight pass reruns
	flags []string // the shim's configuration, without the command

	wall []time.Duration
	// cpu is user+system from wait4, counting the probes it reaped:
	// steadier than wall time on a loaded machine.
	cpu []time.Duration
	rss int64 // KiB, the largest of the RSS pass
}

func main() {
	runs := flag.Int("runs", 300, "repetitions of every case")
	warmup := flag.Int("warmup", 20, "repetitions run first and not counted")
	bin := flag.String("bin", "bin", "directory holding gpu-preflight and gpu-preflight-nvml")
	smiDir := flag.String("nvidia-smi", "", "directory holding Debian's nvidia-smi (empty: the NGC-style cases are left out)")
	realNVML := flag.String("real-nvml", "", "directory holding Debian's libnvidia-ml.so.1, for nvidia-smi")
	against := flag.String("against", "", "directory holding another gpu-preflight build: each gpu-preflight case is run with it too, in the same rounds")
	only := flag.String("cases", "", "regexp: run only the cases whose name matches (and bare exec, tini and Go exec-only, the ratios' bases)")
	flag.Parse()
	keep, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/startup: -cases:", err)
		os.Exit(64)
	}
	if err := run(*runs, *warmup, *bin, *smiDir, *realNVML, *against, keep); err != nil {
		fmt.Fprintln(os.Stderr, "bench/startup:", err)
		os.Exit(1)
	}
}

func run(runs, warmup int, bin, smiDir, realNVML, against string, keep *regexp.Regexp) error {
	work, err := os.MkdirTemp("", "gpu-preflight-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	cases, err := setUp(work, bin, smiDir, realNVML, keep)
	if err != nil {
		return err
	}
	cases = slices.DeleteFunc(cases, func(c benchCase) bool {
		return c.name != caseBare && c.name != caseTini && c.name != caseGo && !keep.MatchString(c.name)
	})
	if against != "" {
		if cases, err = withBuild(cases, against); err != nil {
			return err
		}
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()

	order := make([]*benchCase, len(cases))
	for i := range order {
		order[i] = &cases[i]
	}
	for rep := range warmup + runs {
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, c := range order {
			wall, cpu, err := startOnce(c, devnull)
			if err != nil {
				return err
			}
			if rep >= warmup {
				c.wall = append(c.wall, wall)
				c.cpu = append(c.cpu, cpu)
			}
		}
	}

	for i := range cases {
		if cases[i].rss, err = peakRSS(&cases[i], work, 5); err != nil {
			return err
		}
	}
	printTable(os.Stdout, cases, runs)
	fmt.Println()
	return printPreflightTimes(os.Stdout, cases, 30)
}

// withBuild adds each gpu-preflight case again with the build in dir.
func withBuild(cases []benchCase, dir string) ([]benchCase, error) {
	other, err := filepath.Abs(filepath.Join(dir, "gpu-preflight"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(other); err != nil {
		return nil, fmt.Errorf("-against: %v", err)
	}
	for _, c := range cases {
		if !c.shim {
			continue
		}
		c.name += " [" + dir + "]"
		c.argv = slices.Concat([]string{other}, c.argv[1:])
		cases = append(cases, c)
	}
	return cases, nil
}

// setUp builds the cases, the noop program, the fakes and the shim's roots.
func setUp(work, bin, smiDir, realNVML string, keep *regexp.Regexp) ([]benchCase, error) {
	shim, err := filepath.Abs(filepath.Join(bin, "gpu-preflight"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(shim); err != nil {
		return nil, fmt.Errorf("%w (run make build first)", err)
	}
	noop := filepath.Join(work, "noop")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", noop, "./bench/noop")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building bench/noop: %v\n%s", err, out)
	}
	// The fakes are compiled (gcc) only when a case that runs them is kept.
	withFakes := slices.ContainsFunc(fakeCaseNames(), keep.MatchString)
	var fakeLib, scenario1, scenario8 string
	if withFakes {
		fakeDir := filepath.Join(work, "fakenvml")
		if err := os.Mkdir(fakeDir, 0o755); err != nil {
			return nil, err
		}
		if fakeLib, err = fakenvml.Build(fakeDir); err != nil {
			return nil, err
		}
		eight := fakenvml.H100x8("550.54.15", 12040)
		one := eight
		one.Name, one.GPUs, one.System = "h100x1-550.54.15", eight.GPUs[:1], map[string]string{}
		for k, v := range eight.System {
			one.System[k] = v
		}
		one.System["count"] = "1"
		if scenario1, err = one.Write(work); err != nil {
			return nil, err
		}
		if scenario8, err = eight.Write(work); err != nil {
			return nil, err
		}
	}

	empty := filepath.Join(work, "root-empty")
	gpuRoot := filepath.Join(work, "root-gpu")
	for _, d := range []string{empty, filepath.Join(gpuRoot, "proc", "driver", "nvidia"), filepath.Join(work, "provenance")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	version := "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
	if err := os.WriteFile(filepath.Join(gpuRoot, "proc", "driver", "nvidia", "version"), []byte(version), 0o644); err != nil {
		return nil, err
	}

	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8"}
	common := []string{"--termination-log=" + filepath.Join(work, "termination-log")}
	provOff := "--provenance-dir=off"
	provOn := "--provenance-dir=" + filepath.Join(work, "provenance")
	noGPU := []string{"--root=" + empty, "--host-root=" + empty}
	fake := []string{"--root=" + gpuRoot, "--host-root=" + gpuRoot, "--nvml-library=" + fakeLib}
	shimCase := func(name string, extraEnv []string, flags ...[]string) benchCase {
		f := slices.Concat(append([][]string{common}, flags...)...)
		return benchCase{name: name, argv: slices.Concat([]string{shim}, f, []string{"--", "/bin/true"}),
			env: slices.Concat(env, extraEnv), shim: true, flags: f}
	}
	cases := []benchCase{
		{name: caseBare, argv: []string{"/bin/true"}, env: env},
		{name: caseTini, argv: []string{lookPath("tini"), "-s", "--", "/bin/true"}, env: env},
		{name: "dumb-init", argv: []string{lookPath("dumb-init"), "/bin/true"}, env: env},
		{name: caseGo, argv: []string{noop, "/bin/true"}, env: env},
	}
	if smiDir != "" {
		script, err := filepath.Abs(filepath.Join("bench", "ngc-entrypoint.sh"))
		if err != nil {
			return nil, err
		}
		smiPath := "PATH=" + smiDir + ":/usr/local/bin:/usr/bin:/bin"
		// Debian's nvidia-smi needs an NVML of its own version: the real
		// one, which answers "Driver Not Loaded" without the kernel driver.
		cases = append(cases,
			benchCase{name: "NGC-style bash entrypoint, no driver", argv: []string{"/bin/bash", script, "/bin/true"},
				env: []string{smiPath, "HOME=/root", "LANG=C.UTF-8", "LD_LIBRARY_PATH=" + realNVML}})
	}
	cases = append(cases,
		shimCase(caseShimFloor, nil, noGPU, []string{provOff}),
		shimCase("gpu-preflight, no GPU, provenance on", nil, noGPU, []string{provOn}))
	if !withFakes {
		return cases, nil
	}
	cases = append(cases,
		shimCase(fakeName(1, "off"), []string{fakenvml.EnvScenario + "=" + scenario1}, fake, []string{provOff}),
		shimCase(fakeName(1, "on"), []string{fakenvml.EnvScenario + "=" + scenario1}, fake, []string{provOn}),
		shimCase(fakeName(8, "off"), []string{fakenvml.EnvScenario + "=" + scenario8}, fake, []string{provOff}),
		shimCase(fakeName(8, "on"), []string{fakenvml.EnvScenario + "=" + scenario8}, fake, []string{provOn}),
	)
	cudaCases, err := cudaCases(work, shimCase, fake, provOff, scenario1, scenario8)
	if err != nil {
		return nil, err
	}
	cases = append(cases, cudaCases...)
	if torch := torchPython(); torch != "" {
		cases = append(cases, benchCase{name: "python3 -c 'import torch' (Debian python3-torch, CPU build)",
			argv: []string{torch, "-c", "import torch"}, env: env})
	} else {
		fmt.Fprintln(os.Stderr, "bench/startup: /usr/bin/python3 cannot import torch (apt-get install python3-torch): its row is left out")
	}
	return cases, nil
}

// cudaCases are the CUDA smoke test's rows with the fake libcuda.so.1 playing
// 1 and 8 H100s; the fake NVML rows with the check off are their baseline.
func cudaCases(work string, shimCase func(string, []string, ...[]string) benchCase, fake []string, provOff, nvml1, nvml8 string) ([]benchCase, error) {
	dir := filepath.Join(work, "fakecuda")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	if _, err := fakecuda.Build(dir); err != nil {
		return nil, err
	}
	var cases []benchCase
	for _, n := range []int{1, 8} {
		scenario, err := fakecuda.OK(n, fakecuda.H100).Write(work)
		if err != nil {
			return nil, err
		}
		nv := nvml1
		if n == 8 {
			nv = nvml8
		}
		env := []string{fakenvml.EnvScenario + "=" + nv, fakecuda.EnvScenario + "=" + scenario, "LD_LIBRARY_PATH=" + dir}
		for _, mode := range []string{"init", "kernel"} {
			cases = append(cases, shimCase(cudaName(n, mode),
				env, fake, []string{provOff, "--cuda-check=" + mode}))
		}
	}
	return cases, nil
}

// The names of the rows that run the fake libraries.
func fakeName(gpus int, provenance string) string {
	return fmt.Sprintf("gpu-preflight, fake NVML x%d, provenance %s", gpus, provenance)
}

func cudaName(gpus int, mode string) string {
	return fmt.Sprintf("gpu-preflight, fake NVML+CUDA x%d, CUDA check %s, provenance off", gpus, mode)
}

func fakeCaseNames() []string {
	var names []string
	for _, n := range []int{1, 8} {
		names = append(names, fakeName(n, "off"), fakeName(n, "on"), cudaName(n, "init"), cudaName(n, "kernel"))
	}
	return names
}

// torchPython returns Debian's python3 when it can import torch, else "".
func torchPython() string {
	const py = "/usr/bin/python3"
	if exec.Command(py, "-c", "import torch").Run() != nil {
		return ""
	}
	return py
}

// lookPath finds a wrapper on PATH, or names it so its start fails saying so.
func lookPath(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return "/nonexistent/" + name + " (not installed: make deps)"
}

// startOnce runs c, output discarded, and returns its wall time and the CPU
// time of it and its reaped children, by fork+exec+wait4: os/exec's
// goroutines and pipes would add noise.
func startOnce(c *benchCase, devnull *os.File) (time.Duration, time.Duration, error) {
	fd := devnull.Fd()
	attr := &syscall.ProcAttr{Env: c.env, Files: []uintptr{fd, fd, fd}}
	start := time.Now()
	pid, err := syscall.ForkExec(c.argv[0], c.argv, attr)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: starting %s: %w", c.name, c.argv[0], err)
	}
	var ws syscall.WaitStatus
	var ru syscall.Rusage
	for {
		_, err = syscall.Wait4(pid, &ws, 0, &ru)
		if err != syscall.EINTR {
			break
		}
	}
	wall := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: wait4: %w", c.name, err)
	}
	if !ws.Exited() || ws.ExitStatus() != 0 {
		return 0, 0, fmt.Errorf("%s: %s ended with %v, not exit 0; run it by hand to see why", c.name, strings.Join(c.argv, " "), ws)
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return wall, cpu, nil
}

// peakRSS runs c n times under GNU time and returns the largest maximum RSS
// in KiB: this program's wait4 cannot, since Linux carries a parent's
// high-water mark into a vforked child across exec.
func peakRSS(c *benchCase, work string, n int) (int64, error) {
	out := filepath.Join(work, "rss")
	var peak int64
	for range n {
		cmd := exec.Command("/usr/bin/time", slices.Concat([]string{"-f", "%M", "-o", out}, c.argv)...)
		cmd.Env = c.env
		if b, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("%s under /usr/bin/time (make deps installs it): %v\n%s", c.name, err, b)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			return 0, err
		}
		kib, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: GNU time wrote %q: %w", c.name, b, err)
		}
		peak = max(peak, kib)
	}
	return peak, nil
}

func median(xs []time.Duration) time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// printTable writes the Markdown table of medians and ratios.
func printTable(w *os.File, cases []benchCase, runs int) {
	find := func(name string) time.Duration {
		for _, c := range cases {
			if c.name == name {
				return median(c.wall)
			}
		}
		return 0
	}
	bare := find(caseBare)
	tiniAdded, goAdded := find(caseTini)-bare, find(caseGo)-bare
	fmt.Fprintf(w, "%d interleaved runs per case, %s, %d CPUs, %s\n\n", runs, time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		runtime.NumCPU(), kernel())
	fmt.Fprintln(w, "| case | median ms | x bare exec | added ms | added / Go exec-only's added | added / tini's added | CPU ms | peak RSS MiB |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, c := range cases {
		m := median(c.wall)
		added := m - bare
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f | %s | %s | %.2f | %.1f |\n", c.name, ms(m), float64(m)/float64(bare),
			ms(added), ratio(added, goAdded, c.name == caseBare), ratio(added, tiniAdded, c.name == caseBare),
			ms(median(c.cpu)), float64(c.rss)/1024)
	}
	if shim := find(caseShimFloor); shim > 0 {
		fmt.Fprintf(w, "\n%s: %s ms added, %s x the Go exec-only's, %s x tini's (the bar: 2x the Go exec-only's)\n", caseShimFloor,
			fmt.Sprintf("%.2f", ms(shim-bare)), ratio(shim-bare, goAdded, false), ratio(shim-bare, tiniAdded, false))
	}
}

// The rows the ratios are taken against, and the one held to the bar.
const (
	caseBare      = "bare exec"
	caseTini      = "tini"
	caseGo        = "Go exec-only"
	caseShimFloor = "gpu-preflight, no GPU, provenance off"
)

func ratio(added, tiniAdded time.Duration, bare bool) string {
	if bare || tiniAdded <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(added)/float64(tiniAdded))
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "Linux"
	}
	return "Linux " + strings.TrimSpace(string(b))
}

// printPreflightTimes prints, per shim configuration over n more runs, the
// median preflight time with the NVML probe's taken out.
func printPreflightTimes(w *os.File, cases []benchCase, n int) error {
	fmt.Fprintln(w, "| configuration | preflight ms (median) | NVML probe ms (median) | preflight less probe ms |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, c := range cases {
		if !c.shim {
			continue
		}
		var total, probe []time.Duration
		for range n {
			t, p, err := preflightTime(c)
			if err != nil {
				return err
			}
			total, probe = append(total, t), append(probe, p)
		}
		rest := make([]time.Duration, n)
		for i := range rest {
			rest[i] = total[i] - probe[i]
		}
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f |\n", strings.TrimPrefix(c.name, "gpu-preflight, "),
			ms(median(total)), ms(median(probe)), ms(median(rest)))
	}
	return nil
}

// preflightTime runs `gpu-preflight -- /bin/true` with c's configuration
// and returns the summary's elapsedMs and the record's NVML duration. The
// provenance line carries the record reduced, without timings, so the
// record is written (after the summary) to a directory of its own and read.
func preflightTime(c benchCase) (total, probe time.Duration, err error) {
	dir, err := os.MkdirTemp("", "gpu-preflight-startup-record")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	args := slices.Concat([]string{"--log-level=info", "--log-format=json", "--log-provenance=true"}, c.flags,
		[]string{"--provenance-dir=" + dir, "--", "/bin/true"})
	cmd := exec.Command(c.argv[0], args...)
	cmd.Env = c.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("%s: %s: %v\n%s", c.name, strings.Join(cmd.Args, " "), err, stderr.String())
	}
	var elapsed *float64
	recordFile := ""
	for _, line := range strings.Split(stderr.String(), "\n") {
		var entry struct {
			Event      string   `json:"event"`
			Message    string   `json:"message"`
			ElapsedMs  *float64 `json:"elapsedMs"`
			RecordFile string   `json:"recordFile"`
		}
		if json.Unmarshal([]byte(line), &entry) != nil {
			continue
		}
		switch {
		case entry.Event == "summary":
			elapsed = entry.ElapsedMs
		case entry.Message == "provenance":
			recordFile = entry.RecordFile
		}
	}
	var record struct {
		Host struct {
			NVML struct {
				DurationMillis *float64 `json:"durationMillis"`
			} `json:"nvml"`
		} `json:"host"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, filepath.Base(recordFile))); err == nil && recordFile != "" {
		json.Unmarshal(b, &record)
	}
	nvml := record.Host.NVML.DurationMillis
	if elapsed == nil || nvml == nil {
		return 0, 0, fmt.Errorf("%s: no summary line with elapsedMs, or no record with the NVML duration beside the provenance line, in its log:\n%s", c.name, stderr.String())
	}
	return millis(*elapsed), millis(*nvml), nil
}

func millis(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
