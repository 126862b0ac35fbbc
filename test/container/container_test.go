//go:build container

package container

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// runLimit bounds one ordinary container run: runc's setup plus a preflight
// that must take well under a second here. Scenarios that wait on purpose
// set their own.
const runLimit = 30 * time.Second

// The hosts of the scenarios, as the fake NVML and procfs describe them
// (test/fakenvml: a DGX H100's eight GPUs).
var (
	// h100 runs every CUDA 11.8 image: 550.54.15 supports CUDA 12.4.
	h100 = fakenvml.H100x8("550.54.15", 12040)
	// h100Old is the same machine on 515.65.01, which supports CUDA 11.7
	// only: the CUDA 11.8 image's NVIDIA_REQUIRE_CUDA (cuda>=11.8, or a
	// 470 driver on the listed brands) does not hold.
	h100Old = fakenvml.H100x8("515.65.01", 11070)
	// h100Debian is the procfs side of a host whose driver matches
	// Debian's libnvidia-ml1 (535.261.03).
	h100Debian = fakenvml.H100x8("535.261.03", 12020)
)

// TestContainer runs gpu-preflight as the ENTRYPOINT of real OCI containers
// under runc, one subtest per scenario of issue 4. Run one alone with
// `go test -tags container -run TestContainer/compatible ./test/container/`
// or `make test-container RUN=compatible`.
func TestContainer(t *testing.T) {
	s := getSuite(t)
	for _, tc := range []struct {
		name string
		test func(*testing.T, *suite)
	}{
		{"compatible", testCompatible},
		{"debian-libnvidia-ml", testDebianNVML},
		{"old-driver", testOldDriver},
		{"old-driver-warn", testOldDriverWarn},
		{"hung-nvml/fail", func(t *testing.T, s *suite) { testHungNVML(t, s, "fail") }},
		{"hung-nvml/warn", func(t *testing.T, s *suite) { testHungNVML(t, s, "warn") }},
		{"busybox", testBusybox},
		{"readonly-root", testReadonlyRoot},
		{"non-root", testNonRoot},
		{"signal-after-exec", testSignalAfterExec},
		{"signal-during-preflight", testSignalDuringPreflight},
		{"supervise", testSupervise},
		{"pid1-default/sleep", func(t *testing.T, s *suite) { testPID1Default(t, s, "sleep", "60") }},
		{"pid1-default/shell-loop", func(t *testing.T, s *suite) { testPID1Default(t, s, "sh", "-c", "while :; do sleep 1; done") }},
		{"subcommands-in-image", testSubcommandsInImage},
		{"record-swapped-for-fifo", testRecordSwappedForFIFO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.test(t, s)
		})
	}
}

// The training command of most scenarios prints what it was started with,
// so stdout proves argv, environment, cwd and PID.
const printCommand = `echo pid=$$; echo cwd=$(pwd); echo argv0=$0; echo args="$*"; ` +
	`echo job=$JOB_NAME; echo visible=$NVIDIA_VISIBLE_DEVICES; echo uid=$(id -u)`

// testCompatible: an 8x H100 host on 550.54.15 (CUDA 12.4) runs the CUDA
// 11.8 PaddlePaddle image. With PREFLIGHT_SUPERVISE=false gpu-preflight
// must exec the command in its own place: PID 1, argv, environment, cwd and
// stdout untouched.
func testCompatible(t *testing.T, s *suite) {
	sc := scenario{
		driver: procFor(h100),
		env:    []string{"JOB_NAME=paddle-resnet50", "PREFLIGHT_SUPERVISE=false"},
		cmd:    []string{"sh", "-c", printCommand + "; env > /scratch/env", "train.py", "--epochs", "3"},
	}
	s.useFakeNVML(t, &sc, h100)
	b := s.newBundle(t, sc)
	res := b.run(t, runLimit)
	wantExit(t, res, 0)
	wantStdout(t, res, "pid=1\ncwd=/work\nargv0=train.py\nargs=--epochs 3\njob=paddle-resnet50\nvisible=all\nuid=0\n")
	wantSameEnv(t, b, filepath.Join(b.scratch, "env"))
	l := parseLogs(t, res.stderr)
	rec := oneRecord(t, b, l)
	// Passing checks are in the record, and at debug in the log.
	for _, id := range []string{"driver", "cuda-requirement", "cuda-driver", "framework-cuda", "nvml"} {
		if st := rec.checkStatus(id); st != "pass" {
			t.Errorf("check %s: status %s, want pass", id, st)
		}
	}
	if sum, ok := l.find(func(line logLine) bool { return line.str("event") == "summary" }); !ok ||
		!strings.Contains(sum.str("message"), "driver 550.54.15 (CUDA 12.4)") {
		t.Errorf("no summary line naming the driver and its CUDA:\n%s", l.raw)
	}
	rec.want(t, "decision.action", "exec")
	rec.want(t, "decision.policy", "fail")
	rec.want(t, "decision.exitCode", 0)
	rec.want(t, "command.argv", sc.cmd)
	rec.want(t, "command.cwd", workDir)
	rec.want(t, "command.uid", 0)
	rec.want(t, "host.hostname", "trainer-0")
	rec.want(t, "host.driver.version", "550.54.15")
	rec.want(t, "host.driver.source", "nvml-memfd")
	rec.want(t, "host.nvml.outcome", "ok")
	rec.want(t, "host.gpus.0.name", "NVIDIA H100 80GB HBM3")
	rec.want(t, "host.gpus.0.computeCapability", "9.0")
	if gpus, _ := rec.get("host.gpus").([]any); len(gpus) != 8 {
		t.Errorf("record lists %d GPUs, want 8", len(gpus))
	}
	wantDeviceNodes(t, rec, "/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia7")
	rec.want(t, "image.cudaVersion", "11.8")
	wantRequirement(t, rec, "NVIDIA_REQUIRE_CUDA", envValue(cuda118Env, "NVIDIA_REQUIRE_CUDA"))
	wantPaddle(t, rec)
	rec.want(t, "outcome", nil)
	wantFileEmpty(t, b.termLog)
}

// testDebianNVML injects Debian's real libnvidia-ml.so.1 (libnvidia-ml1,
// 535.261.03) the way the toolkit injects the host's: on a machine without
// the kernel module it answers "Driver Not Loaded", and gpu-preflight must
// carry on from procfs.
func testDebianNVML(t *testing.T, s *suite) {
	sc := scenario{
		driver: procFor(h100Debian),
		nvml:   s.nvml.debian,
		cmd:    []string{"sh", "-c", "echo ran"},
	}
	b := s.newBundle(t, sc)
	res := b.run(t, runLimit)
	wantExit(t, res, 0)
	wantStdout(t, res, "ran\n")
	l := parseLogs(t, res.stderr)
	// Driver-not-loaded while procfs shows a driver is worth a warning
	// (README, "Checks", nvml).
	if st := l.check(t, "nvml").str("status"); st != "warn" {
		t.Errorf("check nvml: status %s, want warn for Driver Not Loaded with a driver in procfs", st)
	}
	rec := oneRecord(t, b, l)
	rec.want(t, "host.nvml.outcome", "driver-not-loaded")
	if e := rec.str("host.nvml.error"); !strings.Contains(e, "Driver Not Loaded") {
		t.Errorf("host.nvml.error = %q, want NVML's \"Driver Not Loaded\"", e)
	}
	rec.want(t, "host.driver.source", "procfs")
	rec.want(t, "host.driver.version", "535.261.03")
	rec.want(t, "decision.action", "exec")
}

// oldDriver is the job on h100Old.
func (s *suite) oldDriver(t *testing.T, env ...string) scenario {
	sc := scenario{
		driver: procFor(h100Old),
		env:    env,
		cmd:    []string{"sh", "-c", "touch /scratch/ran; echo ran"},
	}
	s.useFakeNVML(t, &sc, h100Old)
	return sc
}

// testOldDriver: the doomed job fails in its first second with exit 78,
// never starts the command, and tells Kubernetes why in one line.
func testOldDriver(t *testing.T, s *suite) {
	b := s.newBundle(t, s.oldDriver(t))
	res := b.run(t, runLimit)
	wantExit(t, res, 78)
	wantStdout(t, res, "")
	wantNoFile(t, filepath.Join(b.scratch, "ran"), "the command ran although the preflight aborted")
	l := parseLogs(t, res.stderr)
	if st := l.check(t, "cuda-requirement").str("status"); st != "error" {
		t.Errorf("check cuda-requirement: status %s, want error", st)
	}
	wantTermination(t, b.termLog, "cuda-requirement", "515.65.01", "11.8")
	rec := oneRecord(t, b, l)
	rec.want(t, "decision.action", "abort")
	rec.want(t, "decision.exitCode", 78)
	rec.want(t, "host.driver.version", "515.65.01")
	wantCheckStatus(t, rec, "cuda-requirement", "error")
}

// testOldDriverWarn: PREFLIGHT_POLICY=warn never aborts; the finding is
// still an error in the log and the record.
func testOldDriverWarn(t *testing.T, s *suite) {
	b := s.newBundle(t, s.oldDriver(t, "PREFLIGHT_POLICY=warn"))
	res := b.run(t, runLimit)
	wantExit(t, res, 0)
	wantStdout(t, res, "ran\n")
	l := parseLogs(t, res.stderr)
	if st := l.check(t, "cuda-requirement").str("status"); st != "error" {
		t.Errorf("check cuda-requirement: status %s, want error", st)
	}
	rec := oneRecord(t, b, l)
	rec.want(t, "decision.policy", "warn")
	rec.want(t, "decision.action", "exec")
	wantCheckStatus(t, rec, "cuda-requirement", "error")
	wantFileEmpty(t, b.termLog)
}

// testHungNVML: nvmlInit never returns. With PREFLIGHT_NVML_TIMEOUT=2s the
// container must end (abort under fail, run under warn) within the deadline
// and the slack of harness.WithinDeadline: one second on an idle machine
// (docs/sources.md, "What gpu-preflight is held to", "Bounded"), more as a
// run of the same container with an NVML that answers takes longer. Both
// are measured from the createContainer hook, which runs just before the
// shim starts, to runc's exit: stricter than the bar, which starts the
// clock at the shim.
func testHungNVML(t *testing.T, s *suite, policy string) {
	const deadline = 2 * time.Second
	sc := func() scenario {
		return scenario{
			driver: procFor(h100),
			env:    []string{"PREFLIGHT_NVML_TIMEOUT=2s", "PREFLIGHT_POLICY=" + policy},
			cmd:    []string{"sh", "-c", "echo ran"},
		}
	}
	answer := func() time.Duration {
		answers := sc()
		s.useFakeNVML(t, &answers, h100)
		res := s.newBundle(t, answers).run(t, runLimit)
		if res.sinceHook == 0 {
			t.Fatalf("the createContainer hook left no time stamp")
		}
		return res.sinceHook
	}
	ref := answer()
	hung := sc()
	s.useFakeNVML(t, &hung, fakenvml.Hang())
	b := s.newBundle(t, hung)
	res := b.run(t, runLimit)
	t.Logf("hung NVML, policy %s: %v from the hook to the end (%v with runc's setup; %v with an NVML that answers)",
		policy, res.sinceHook.Round(time.Millisecond), res.elapsed.Round(time.Millisecond), ref.Round(time.Millisecond))
	if res.sinceHook == 0 {
		t.Fatalf("the createContainer hook left no time stamp")
	}
	harness.WithinDeadline(t, "the container with a hung NVML, from the hook,", res.sinceHook, deadline, ref, answer)
	if res.sinceHook < deadline {
		t.Errorf("container ended %v after it started, before the %v NVML deadline: the probe did not hang?",
			res.sinceHook.Round(time.Millisecond), deadline)
	}
	l := parseLogs(t, res.stderr)
	if st := l.check(t, "nvml").str("status"); st != "error" {
		t.Errorf("check nvml: status %s, want error on a probe timeout", st)
	}
	rec := oneRecord(t, b, l)
	rec.want(t, "host.nvml.outcome", "timeout")
	// procfs still answers for the driver.
	rec.want(t, "host.driver.version", "550.54.15")
	rec.want(t, "host.driver.source", "procfs")
	if policy == "warn" {
		wantExit(t, res, 0)
		wantStdout(t, res, "ran\n")
		rec.want(t, "decision.action", "exec")
	} else {
		wantExit(t, res, 75) // a hung NVML is a node fault
		wantStdout(t, res, "")
		rec.want(t, "decision.action", "abort")
		rec.want(t, "decision.nodeFault", true)
	}
}

// testBusybox: an image with no libc and no loader. The static shim runs as
// PID 1; the glibc NVML probe cannot be started (exec of a dynamic ELF whose
// interpreter is missing fails), so the facts come from procfs and the log
// says so.
func testBusybox(t *testing.T, s *suite) {
	sc := scenario{
		busybox: true,
		driver:  procFor(h100),
		cmd:     []string{"sh", "-c", "echo cwd=$(pwd)"},
	}
	s.useFakeNVML(t, &sc, h100)
	b := s.newBundle(t, sc)
	for _, p := range []string{"lib64/ld-linux-x86-64.so.2", "lib/x86_64-linux-gnu/libc.so.6", "usr/lib/x86_64-linux-gnu/libc.so.6"} {
		wantNoFile(t, filepath.Join(b.rootfs, p), "the busybox root must hold no libc or loader")
	}
	res := b.run(t, runLimit)
	wantExit(t, res, 0)
	wantStdout(t, res, "cwd=/work\n")
	l := parseLogs(t, res.stderr)
	rec := oneRecord(t, b, l)
	rec.want(t, "host.driver.source", "procfs")
	rec.want(t, "host.driver.version", "550.54.15")
	rec.want(t, "host.nvml.outcome", "unavailable")
	why := rec.str("host.nvml.error")
	if why == "" {
		t.Errorf("record does not say why the NVML probe was unavailable (host.nvml.error empty)")
	}
	// The log must say it too, not only the record.
	if _, ok := l.find(func(line logLine) bool {
		text := lineText(line)
		return line.str("message") != "provenance" && strings.Contains(text, "procfs") &&
			(why != "" && strings.Contains(text, why) || strings.Contains(text, "unavailable"))
	}); !ok {
		t.Errorf("no log line says the NVML probe could not run and procfs answered instead:\n%s", l.raw)
	}
	rec.want(t, "decision.action", "exec")
}

// testReadonlyRoot: root.readonly and no provenance volume, so the default
// PREFLIGHT_PROVENANCE_DIR cannot be written. That is a warning
// (docs/schema/README.md); the record still goes to the log and the command runs.
func testReadonlyRoot(t *testing.T, s *suite) {
	sc := scenario{
		readonly:     true,
		noProvenance: true,
		driver:       procFor(h100),
		cmd:          []string{"sh", "-c", "echo ran; touch /probe-rw 2>/dev/null || echo root-readonly"},
	}
	s.useFakeNVML(t, &sc, h100)
	b := s.newBundle(t, sc)
	res := b.run(t, runLimit)
	wantExit(t, res, 0)
	wantStdout(t, res, "ran\nroot-readonly\n")
	l := parseLogs(t, res.stderr)
	if _, ok := l.find(func(line logLine) bool {
		return line.str("level") == "warn" && strings.Contains(lineText(line), "/var/log/gpu-preflight")
	}); !ok {
		t.Errorf("no warning names the unwritable provenance directory /var/log/gpu-preflight:\n%s", l.raw)
	}
	rec := l.provenanceLine(t)
	rec.want(t, "decision.action", "exec")
}

// testNonRoot: process.user 1000:1000, as in a pod with runAsUser. The shim
// needs no privilege; the record says who ran.
func testNonRoot(t *testing.T, s *suite) {
	sc := scenario{
		uid:    1000,
		driver: procFor(h100),
		cmd:    []string{"sh", "-c", "echo uid=$(id -u) gid=$(id -g); touch /work/out && echo cwd-writable"},
	}
	s.useFakeNVML(t, &sc, h100)
	b := s.newBundle(t, sc)
	res := b.run(t, runLimit)
	wantExit(t, res, 0)
	wantStdout(t, res, "uid=1000 gid=1000\ncwd-writable\n")
	l := parseLogs(t, res.stderr)
	rec := oneRecord(t, b, l)
	rec.want(t, "command.uid", 1000)
	rec.want(t, "command.gid", 1000)
	rec.want(t, "decision.action", "exec")
	rec.want(t, "host.driver.version", "550.54.15")
}

// trapCommand records the signal it gets in the scratch volume and exits
// 42, so the container's status shows it is the command's.
const trapCommand = `trap 'echo TERM > /scratch/signal; exit 42' TERM; echo ready > /scratch/ready; ` +
	`while :; do sleep 0.1; done`

// testSignalAfterExec: with PREFLIGHT_SUPERVISE=false, after the exec the
// command is PID 1, so `runc kill TERM` reaches it directly and runc reports
// its exit status.
func testSignalAfterExec(t *testing.T, s *suite) {
	sc := scenario{
		driver: procFor(h100),
		env:    []string{"PREFLIGHT_SUPERVISE=false"},
		cmd:    []string{"sh", "-c", trapCommand},
	}
	s.useFakeNVML(t, &sc, h100)
	b := s.newBundle(t, sc)
	r := b.start(t, runLimit)
	waitReady(t, r)
	b.kill(t, "TERM", false)
	res := r.wait()
	wantExit(t, res, 42)
	wantFileContent(t, filepath.Join(b.scratch, "signal"), "TERM\n")
	l := parseLogs(t, res.stderr)
	rec := oneRecord(t, b, l)
	rec.want(t, "decision.action", "exec")
}

// testSignalDuringPreflight: SIGTERM while the preflight waits on a hung
// NVML (60 s deadline) ends the container promptly with 128+15 and leaves no
// record, partial or whole (docs/sources.md, "What gpu-preflight is held to", "Safe").
func testSignalDuringPreflight(t *testing.T, s *suite) {
	// A record written while the shim is exiting is a race; three runs
	// catch it far more often than one.
	for i := 1; i <= 3; i++ {
		t.Run(strconv.Itoa(i), func(t *testing.T) { signalDuringPreflight(t, s) })
	}
}

func signalDuringPreflight(t *testing.T, s *suite) {
	sc := scenario{
		driver: procFor(h100),
		env:    []string{"PREFLIGHT_NVML_TIMEOUT=60s", "PREFLIGHT_TIMEOUT=90s"},
		cmd:    []string{"sh", "-c", "touch /scratch/ran"},
	}
	s.useFakeNVML(t, &sc, fakenvml.Hang())
	b := s.newBundle(t, sc)
	r := b.start(t, runLimit)
	// The preflight is in the probe once the container has a second
	// process: the shim and the hung probe it started.
	if !waitFor(time.Minute, func() bool {
		pids, err := b.pids()
		return err == nil && len(pids) >= 2
	}) {
		t.Fatalf("the NVML probe never started in the container")
	}
	sent := time.Now()
	b.kill(t, "TERM", false)
	res := r.wait()
	took := time.Since(sent)
	wantExit(t, res, 143)
	// Held, the signal would end the run only with the probe, at its
	// 60 s deadline.
	if took > 30*time.Second {
		t.Errorf("container took %v to end after SIGTERM during the preflight", took.Round(time.Millisecond))
	}
	t.Logf("SIGTERM during the preflight: container ended %v later", took.Round(time.Millisecond))
	wantNoFile(t, filepath.Join(b.scratch, "ran"), "the command ran although the preflight was terminated")
	// records fails on a temporary file left behind as well as on a
	// complete record.
	if recs := records(t, b.provenance); len(recs) != 0 {
		t.Errorf("the provenance volume holds %d records after SIGTERM during the preflight, want none", len(recs))
	}
	l := parseLogs(t, res.stderr)
	if _, ok := l.find(func(line logLine) bool { return line["exitCode"] == float64(143) }); !ok {
		t.Errorf("no log line says the preflight ended with 143 on SIGTERM:\n%s", l.raw)
	}
}

// testSupervise: PREFLIGHT_SUPERVISE=true keeps gpu-preflight as PID 1 with
// the command as its child. It forwards SIGTERM, reaps orphans re-parented
// to it, exits with the command's status and records how the command ended.
func testSupervise(t *testing.T, s *suite) {
	// An orphan (sleep, whose parent exits at once) is re-parented to PID 1
	// and exits after 0.2 s; at 0.8 s the command counts zombies in its PID
	// namespace.
	const cmd = `echo pid=$$; sh -c 'sleep 0.2 &'; sleep 0.8; z=0; ` +
		`for f in /proc/[0-9]*/stat; do read -r l < "$f" || continue; case "${l##*) }" in Z*) z=$((z+1));; esac; done; ` +
		`echo zombies=$z; ` + trapCommand
	sc := scenario{
		driver: procFor(h100),
		env:    []string{"PREFLIGHT_SUPERVISE=true"},
		cmd:    []string{"sh", "-c", cmd},
	}
	s.useFakeNVML(t, &sc, h100)
	b := s.newBundle(t, sc)
	r := b.start(t, runLimit)
	waitReady(t, r)
	b.kill(t, "TERM", false)
	res := r.wait()
	wantExit(t, res, 42)
	out := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(out) != 2 || !strings.HasPrefix(out[0], "pid=") || out[1] != "zombies=0" {
		t.Fatalf("stdout = %q, want pid=N and zombies=0", res.stdout)
	}
	if pid, err := strconv.Atoi(strings.TrimPrefix(out[0], "pid=")); err != nil || pid == 1 {
		t.Errorf("supervised command has %s; it must be a child of gpu-preflight, not PID 1", out[0])
	}
	wantFileContent(t, filepath.Join(b.scratch, "signal"), "TERM\n")
	l := parseLogs(t, res.stderr)
	recs := records(t, b.provenance)
	if len(recs) == 0 {
		t.Fatalf("no record in the provenance volume")
	}
	// The finished record is the last one written (names sort by time).
	rec := recs[len(recs)-1]
	rec.want(t, "decision.action", "exec")
	rec.want(t, "outcome.exitCode", 42)
	if d, ok := rec.num("outcome.durationSeconds"); !ok || d < 0.8 || d > runLimit.Seconds() {
		t.Errorf("outcome.durationSeconds = %v, want the command's run time (> 0.8 s)", rec.get("outcome.durationSeconds"))
	}
	// The log carries the record once, as the run starts, and when the
	// command ends a small line with its outcome that joins it by runId.
	started := l.provenanceLine(t)
	started.want(t, "runId", rec.str("runId"))
	fin, ok := l.find(func(line logLine) bool { return line.str("event") == "finished" })
	if !ok {
		t.Fatalf("no \"finished\" log line:\n%s", l.raw)
	}
	if fin.str("runId") != rec.str("runId") || fin["exitCode"] != 42.0 || fin["record"] != nil {
		t.Errorf("the finished line does not join the run %s with exit code 42 (or carries the record): %v", rec.str("runId"), fin)
	}
}

// testPID1Default: with no PREFLIGHT_SUPERVISE (auto) gpu-preflight is the
// container's PID 1 and supervises. cmd installs no SIGTERM handler (busybox
// sleep, a shell loop): exec'd as PID 1 it would ignore `runc kill TERM`
// (the kernel drops signals PID 1 has no handler for) until the runtime's
// SIGKILL. Supervised, the forwarded SIGTERM ends it, and the container
// exits 143 (the runtime's SIGKILL would give 137); an orphan re-parented
// to PID 1 is reaped.
func testPID1Default(t *testing.T, s *suite, cmd ...string) {
	sc := scenario{busybox: true, driver: procFor(h100), cmd: cmd}
	s.useFakeNVML(t, &sc, h100)
	b := s.newBundle(t, sc)
	// Without supervision the container never ends on SIGTERM: fail after
	// a few seconds rather than wait for the usual limit.
	r := b.start(t, 8*time.Second)
	if !waitFor(10*time.Second, func() bool { return len(containerProcs(b, "sleep")) > 0 }) {
		b.kill(t, "KILL", true)
		res := r.wait()
		t.Fatalf("the command never started (exit %d)\nstderr:\n%s", res.exitCode, res.stderr)
	}
	// An orphan: `runc exec` starts a shell in the container that leaves
	// a shell behind, named busybox (its own name, not an applet's), which
	// sleeps and leaves a file; the kernel re-parents it to PID 1. A zombie
	// keeps its name: the name is gone once PID 1 reaped it.
	if out, err := runc(10*time.Second, "exec", b.id, "sh", "-c", `busybox sh -c "sleep 0.2; touch /tmp/orphan-done" & exit 0`); err != nil {
		t.Fatalf("runc exec: %v: %s", err, out)
	}
	done := func() bool { _, err := os.Stat(filepath.Join(b.rootfs, "tmp/orphan-done")); return err == nil }
	if !waitFor(30*time.Second, done) {
		t.Fatal("the orphan did not run to its end within 30 s")
	}
	if !waitFor(30*time.Second, func() bool { return len(containerProcs(b, "busybox")) == 0 }) {
		t.Errorf("the orphan is still in the container 30 s after its end (zombies, host pids: %v): PID 1 does not reap", containerProcs(b, "Z"))
	}
	sent := time.Now()
	b.kill(t, "TERM", false)
	res := r.wait()
	took := time.Since(sent)
	wantExit(t, res, 143)
	t.Logf("%s as the command, gpu-preflight PID 1: SIGTERM ended the container %v later", strings.Join(cmd, " "), took.Round(time.Millisecond))
	rec := oneRecord(t, b, parseLogs(t, res.stderr))
	rec.want(t, "decision.action", "exec")
	rec.want(t, "outcome.exitCode", 143)
	rec.want(t, "outcome.signal", 15)
}

// containerProcs lists the container's processes (host pids) whose command
// name is want or, for a single upper-case letter, whose state is want (Z:
// zombie), read from the host's /proc.
func containerProcs(b *bundle, want string) []int {
	pids, err := b.pids()
	if err != nil {
		return nil
	}
	var out []int
	for _, pid := range pids {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ...: comm may hold spaces and parentheses.
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open || end+2 >= len(s) {
			continue
		}
		comm, state := s[open+1:end], s[end+2:end+3]
		if comm == want || len(want) == 1 && state == want {
			out = append(out, pid)
		}
	}
	return out
}

// waitReady waits for the command to say it runs (and its trap is set).
func waitReady(t *testing.T, r *running) {
	t.Helper()
	ready := filepath.Join(r.b.scratch, "ready")
	if !waitFor(15*time.Second, func() bool { _, err := os.Stat(ready); return err == nil }) {
		r.b.kill(t, "KILL", true)
		res := r.wait()
		t.Fatalf("the command never became ready (exit %d)\nstdout:\n%s\nstderr:\n%s", res.exitCode, res.stdout, res.stderr)
	}
}

func wantPaddle(t *testing.T, rec record) {
	t.Helper()
	fws, _ := rec.get("image.frameworks").([]any)
	for _, fw := range fws {
		m, _ := fw.(map[string]any)
		if m["name"] == "paddlepaddle" {
			// Paddle's own full_version is 2.6.0; pip's, from the
			// dist-info, 2.6.0.post118. Either names this install.
			if v := m["version"]; (v != "2.6.0" && v != "2.6.0.post118") || m["cudaVersion"] != "11.8" {
				t.Errorf("record has PaddlePaddle %v built for CUDA %v, want 2.6.0(.post118) and 11.8", v, m["cudaVersion"])
			}
			return
		}
	}
	t.Errorf("record lists no paddlepaddle framework: %v", rec.get("image.frameworks"))
}

func wantRequirement(t *testing.T, rec record, name, value string) {
	t.Helper()
	reqs, _ := rec.get("image.requirements").([]any)
	for _, r := range reqs {
		m, _ := r.(map[string]any)
		if m["var"] == name {
			if m["value"] != value {
				t.Errorf("record requirement %s = %q, want %q", name, m["value"], value)
			}
			return
		}
	}
	t.Errorf("record has no requirement %s: %v", name, rec.get("image.requirements"))
}

func wantCheckStatus(t *testing.T, rec record, id, status string) {
	t.Helper()
	checks, _ := rec.get("checks").([]any)
	for _, c := range checks {
		m, _ := c.(map[string]any)
		if m["id"] == id {
			if m["status"] != status {
				t.Errorf("record check %s has status %v, want %s", id, m["status"], status)
			}
			return
		}
	}
	t.Errorf("record has no check %s", id)
}

// lineText is a log line's string values joined, for "does it say X".
func lineText(l logLine) string {
	var parts []string
	for _, v := range l {
		if s, ok := v.(string); ok {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

func wantNoFile(t *testing.T, path, why string) {
	t.Helper()
	if _, err := os.Lstat(path); err == nil {
		t.Errorf("%s exists: %s", path, why)
	}
}

func wantFileEmpty(t *testing.T, path string) {
	t.Helper()
	wantFileContent(t, path, "")
}

func wantFileContent(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("reading %s: %v", path, err)
		return
	}
	if string(got) != want {
		t.Errorf("%s holds %q, want %q", path, got, want)
	}
}

// wantSameEnv compares the environment the command printed (env > file)
// with process.env: exec must hand it over unchanged. The shell adds PWD
// (and may add SHLVL and _), nothing else may differ.
func wantSameEnv(t *testing.T, b *bundle, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	must(t, err)
	got := map[string]string{}
	for _, kv := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	want := map[string]string{}
	for _, kv := range b.spec.Process.Env {
		k, v, _ := strings.Cut(kv, "=")
		want[k] = v
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("the command's environment has %s=%q, want %q (as in process.env)", k, g, v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && k != "PWD" && k != "SHLVL" && k != "_" && k != "OLDPWD" {
			t.Errorf("the command's environment has %s=%q, which process.env does not", k, v)
		}
	}
}

// wantTermination checks the Kubernetes termination message (docs/sources.md,
// "Kubernetes, Kubeflow and Slurm"): at most 4096 bytes, a header line naming the abort, and the
// blocking finding on one line of its own, "id: reason; remedy: fix", that
// names what it must.
func wantTermination(t *testing.T, path, id string, names ...string) {
	t.Helper()
	msg, err := os.ReadFile(path)
	must(t, err)
	if len(msg) == 0 || len(msg) > 4096 {
		t.Fatalf("termination log holds %d bytes, want 1..4096 (Kubernetes' limit): %q", len(msg), msg)
	}
	lines := strings.Split(strings.TrimSuffix(string(msg), "\n"), "\n")
	if !strings.HasPrefix(lines[0], "gpu-preflight: abort (exit 78") {
		t.Errorf("termination log starts %q, want the abort and its exit code", lines[0])
	}
	var found []string
	for _, line := range lines {
		if strings.HasPrefix(line, id+": ") {
			found = append(found, line)
		}
	}
	if len(found) != 1 {
		t.Fatalf("termination log has %d lines for %s, want one:\n%s", len(found), id, msg)
	}
	if !strings.Contains(found[0], "; remedy: ") {
		t.Errorf("termination line for %s has no remedy: %q", id, found[0])
	}
	for _, name := range names {
		if !strings.Contains(found[0], name) {
			t.Errorf("termination line for %s does not name %s: %q", id, name, found[0])
		}
	}
}

func wantDeviceNodes(t *testing.T, rec record, nodes ...string) {
	t.Helper()
	got, _ := rec.get("host.deviceNodes").([]any)
	have := map[any]bool{}
	for _, n := range got {
		have[n] = true
	}
	for _, n := range nodes {
		if !have[n] {
			t.Errorf("record host.deviceNodes %v lacks %s", got, n)
		}
	}
}

// testSubcommandsInImage: with ENTRYPOINT ["gpu-preflight", "--"], `docker
// run IMAGE check` asks for a program named check: exit 127, and the log
// says how to run the subcommand. Replacing the entrypoint, as the README
// says (docker run --entrypoint gpu-preflight IMAGE check), runs check and
// explain against the container's own host and image.
func testSubcommandsInImage(t *testing.T, s *suite) {
	base := scenario{driver: procFor(h100), noProvenance: true}
	s.useFakeNVML(t, &base, h100)

	asCommand := base
	asCommand.cmd = []string{"check"}
	res := s.newBundle(t, asCommand).run(t, runLimit)
	wantExit(t, res, 127)
	l := parseLogs(t, res.stderr)
	if line, ok := l.find(func(line logLine) bool { return line.str("command") == "check" }); !ok ||
		!strings.Contains(line.str("remedy"), "docker run --entrypoint gpu-preflight IMAGE check") {
		t.Errorf("the exec failure does not say how to run check:\n%s", res.stderr)
	}

	for _, sub := range []struct {
		cmd  []string
		says string
	}{
		{[]string{"check"}, "would exec"},
		{[]string{"explain"}, "host: driver 550.54.15"},
	} {
		sc := base
		sc.entrypoint = []string{shimPath}
		sc.cmd = sub.cmd
		res := s.newBundle(t, sc).run(t, runLimit)
		wantExit(t, res, 0)
		if !strings.Contains(res.stdout, sub.says) {
			t.Errorf("--entrypoint %s %v: stdout does not say %q:\n%s\nstderr:\n%s", shimPath, sub.cmd, sub.says, res.stdout, res.stderr)
		}
	}
}

// testRecordSwappedForFIFO is issue 24's attack as it was run: the job,
// supervised by gpu-preflight as the container's PID 1 (the default),
// replaces its own record file in the provenance volume with a FIFO and
// exits 7. PID 1 used to open that FIFO to read the record back and hang
// for good (SIGTERM ignored, `runc kill KILL` the only way out, and the
// job's status lost). Now the container exits 7 at once and the volume
// holds the finished record under the run's name.
func testRecordSwappedForFIFO(t *testing.T, s *suite) {
	sc := scenario{
		driver: procFor(h100),
		cmd: []string{"sh", "-c", `set -e; R=$(echo ` + provenanceDir + `/*.json); [ -f "$R" ]; ` +
			`rm "$R"; mkfifo "$R"; exit 7`},
	}
	s.useFakeNVML(t, &sc, h100)
	b := s.newBundle(t, sc)
	res := b.run(t, runLimit)
	wantExit(t, res, 7)
	if res.elapsed > 15*time.Second {
		t.Errorf("the container took %v to exit after its command", res.elapsed)
	}
	entries, err := os.ReadDir(b.provenance)
	must(t, err)
	if len(entries) != 1 || !entries[0].Type().IsRegular() {
		t.Fatalf("the provenance volume holds %v, want the one record as a regular file", entries)
	}
	recs := records(t, b.provenance)
	recs[0].want(t, "outcome.exitCode", 7)
	l := parseLogs(t, res.stderr)
	if _, ok := l.find(func(line logLine) bool { return line.str("found") == "a FIFO" }); !ok {
		t.Errorf("no warning says the record had been replaced by a FIFO:\n%s", l.raw)
	}
}
