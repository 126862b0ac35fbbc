package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

// The attacks of issue 24 on PID 1's outputs and start-up, as they were
// run: the command itself turns the provenance directory against the
// supervising gpu-preflight, stderr's reader has gone, the descriptor limit
// is small, the image config is a FIFO.

// pid1Env is the environment of these runs: supervise mode on this
// GPU-less machine (a warning, and the command runs), JSON logs.
func pid1Env(extra ...string) []string {
	return append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"PREFLIGHT_LOG_FORMAT=json", "PREFLIGHT_TERMINATION_LOG="}, extra...)
}

// runUnderMeasure runs program with args under the test binary as a small
// measuring parent (measureChild), with env, and returns how it went.
func runUnderMeasure(t *testing.T, env []string, program string, args ...string) measured {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rss := filepath.Join(t.TempDir(), "maxrss")
	cmd := exec.Command(self, append([]string{program}, args...)...)
	cmd.Env = append(env, measureEnv+"="+rss)
	return measureRun(t, cmd, rss)
}

// TestTheCommandCannotTurnItsRecordAgainstPID1: while supervised, the
// command replaces its own record file (with a FIFO, a 500 MB file, a hard
// link or a symlink to another file) or swaps the provenance directory.
// gpu-preflight still exits with the command's status at once, within the
// memory bar; the finished record is in the directory the first went to;
// and no other file is written.
func TestTheCommandCannotTurnItsRecordAgainstPID1(t *testing.T) {
	for _, tt := range []struct{ name, attack, found string }{
		{"FIFO", `rm "$R"; mkfifo "$R"`, "a FIFO"},
		{"500MBFile", `rm "$R"; truncate -s 500M "$R"`, "another file, 524288000 bytes"},
		{"HardLinkToAnotherFile", `rm "$R"; ln "$V" "$R"`, "a file with 2 hard links"},
		{"SymlinkToAnotherFile", `rm "$R"; ln -s "$V" "$R"`, "a symlink"},
		{"SwappedDirectory", `mv "$P" "$P.old"; mkdir "$P"`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			prov, victim := filepath.Join(parent, "prov"), filepath.Join(parent, "victim")
			if err := os.WriteFile(victim, []byte("keep\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			script := `set -e; R=$(echo "$P"/*.json); [ -f "$R" ]; ` + tt.attack + `; exit 7`
			m := runUnderMeasure(t, pid1Env("PREFLIGHT_SUPERVISE=true", "PREFLIGHT_LOG_LEVEL=debug",
				"PREFLIGHT_PROVENANCE_DIR="+prov, "P="+prov, "V="+victim), shimPath, "--", "sh", "-c", script)
			wantBounded(t, m, 7)
			if m.elapsed > 20*time.Second {
				t.Errorf("gpu-preflight took %v to exit after the command", m.elapsed)
			}
			if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
				t.Errorf("the other file was written: %q", b)
			}
			home := prov
			if tt.name == "SwappedDirectory" {
				home = prov + ".old"
				if names, _ := os.ReadDir(prov); len(names) != 0 {
					t.Errorf("the directory swapped in received %d entries", len(names))
				}
			}
			names, _ := filepath.Glob(filepath.Join(home, "*"))
			if len(names) != 1 {
				t.Fatalf("%s holds %q, want the one record", home, names)
			}
			st, err := os.Lstat(names[0])
			if err != nil || !st.Mode().IsRegular() || st.Sys().(*syscall.Stat_t).Nlink != 1 {
				t.Fatalf("the record is %v (%v), want a regular file with one link", st, err)
			}
			b, _ := os.ReadFile(names[0])
			schematest.Validate(t, b)
			var rec map[string]any
			json.Unmarshal(b, &rec)
			checkOutcome(t, rec, 7, 0)
			wantFound := tt.found != ""
			if got := strings.Contains(m.stderr, `"found":"`+tt.found+`"`); got != wantFound {
				t.Errorf("a warning that names %q: %v, want %v; stderr:\n%s", tt.found, got, wantFound, m.stderr)
			}
			// Nothing else was written beside the directories.
			entries, _ := os.ReadDir(parent)
			for _, e := range entries {
				if n := e.Name(); n != "prov" && n != "prov.old" && n != "victim" {
					t.Errorf("%s was written beside the provenance directory", n)
				}
			}
		})
	}
}

// TestAClosedStderrStillRunsTheCommand: stderr is a pipe whose reader has
// gone. gpu-preflight's log lines fail with EPIPE, nothing more: the
// command runs, with SIGPIPE at its default (not inherited as ignored), and
// gpu-preflight exits with its status; supervised, the record is finished.
func TestAClosedStderrStillRunsTheCommand(t *testing.T) {
	for _, mode := range []string{"false", "true"} {
		t.Run("PREFLIGHT_SUPERVISE="+mode, func(t *testing.T) {
			dir, prov := t.TempDir(), t.TempDir()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			defer w.Close()
			script := `sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status > "$D/sigign"; exit 3`
			cmd := exec.Command(shimPath, "--", "sh", "-c", script)
			cmd.Env = pid1Env("PREFLIGHT_SUPERVISE="+mode, "PREFLIGHT_LOG_LEVEL=debug",
				"PREFLIGHT_PROVENANCE_DIR="+prov, "D="+dir)
			cmd.Stderr = w
			s := &supervised{cmd: cmd, prov: prov}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			ws := waitBounded(t, s, time.Minute, "closed stderr")
			if ws.Signaled() || ws.ExitStatus() != 3 {
				t.Fatalf("gpu-preflight ended with %v (signal %v), want the command's exit 3", ws.ExitStatus(), ws.Signal())
			}
			b, err := os.ReadFile(filepath.Join(dir, "sigign"))
			if err != nil {
				t.Fatalf("the command did not run: %v", err)
			}
			mask, err := strconv.ParseUint(strings.TrimSpace(string(b)), 16, 64)
			if err != nil || mask&(1<<(unix.SIGPIPE-1)) != 0 {
				t.Errorf("the command's SigIgn is %q (%v): SIGPIPE ignored, want its default", b, err)
			}
			rec := s.record(t)
			if mode == "true" {
				checkOutcome(t, rec, 3, 0)
			}
		})
	}
}

// fdScript prints the shell's own descriptors on stdout (with no
// redirection: dash saves a redirected descriptor at 10 or above, which
// `ulimit -n 8` refuses).
const fdScript = `cd /proc/$$/fd && echo FDS: *`

// TestTheCommandGetsOnlyItsOwnDescriptors: the command sees the
// descriptors gpu-preflight inherited (0, 1, 2 and, but under the limit, 3)
// and none that gpu-preflight opened, in either mode; supervised, it starts
// even under `ulimit -n 8` (soft and hard), which the descriptors
// gpu-preflight holds must leave room for fork/exec's own pipe.
func TestTheCommandGetsOnlyItsOwnDescriptors(t *testing.T) {
	for _, tt := range []struct {
		name, mode, limit string
		inherit           bool
	}{
		{"Exec", "false", "", true},
		{"Supervise", "true", "", true},
		{"ExecUlimit8", "false", "ulimit -n 8; ", false},
		{"SuperviseUlimit8", "true", "ulimit -n 8; ", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			list := func(viaShim bool) []string {
				shell := tt.limit + `exec sh -c "$SCRIPT"`
				if viaShim {
					shell = tt.limit + `exec "$SHIM" -- sh -c "$SCRIPT"`
				}
				cmd := exec.Command("/bin/sh", "-c", shell)
				cmd.Env = pid1Env("PREFLIGHT_SUPERVISE="+tt.mode, "PREFLIGHT_PROVENANCE_DIR="+t.TempDir(),
					"PREFLIGHT_LEDGER="+filepath.Join(t.TempDir(), "runs.jsonl"),
					"SHIM="+shimPath, "SCRIPT="+fdScript)
				if tt.inherit {
					inherited, err := os.Open(os.DevNull)
					if err != nil {
						t.Fatal(err)
					}
					defer inherited.Close()
					cmd.ExtraFiles = []*os.File{inherited} // fd 3
				}
				var stderr strings.Builder
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				_, fds, ok := strings.Cut(string(out), "FDS:")
				if err != nil || !ok {
					t.Fatalf("%v: stdout %q\n%s", err, out, stderr.String())
				}
				return strings.Fields(fds)
			}
			want, got := list(false), list(true)
			if tt.inherit && !slices.Contains(want, "3") {
				t.Fatalf("the control run does not see the inherited fd 3: %q", want)
			}
			if !slices.Equal(got, want) {
				t.Errorf("the command's descriptors are %q, want %q (what it has without gpu-preflight)", got, want)
			}
		})
	}
}

// TestAFIFOImageConfigStillRunsTheJob: PREFLIGHT_IMAGE_CONFIG naming a FIFO
// no one writes used to block in open(2) forever, before the deadline and
// the signal handlers existed. Now the FIFO is opened without blocking and
// refused as not a regular file: a warning that names it, and the job runs.
func TestAFIFOImageConfigStillRunsTheJob(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "config.json")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "ran")
	cmd := exec.Command(shimPath, "--", "sh", "-c", `echo yes >"$OUT"`)
	cmd.Env = pid1Env("PREFLIGHT_IMAGE_CONFIG="+fifo, "PREFLIGHT_PROVENANCE_DIR="+t.TempDir(), "OUT="+out)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	s := &supervised{cmd: cmd}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ws := waitBounded(t, s, 10*time.Second, "a FIFO image config")
	if ws.ExitStatus() != 0 || !strings.Contains(stderr.String(), "a FIFO") {
		t.Errorf("exit %d, stderr %q; want 0 and a warning that names the FIFO", ws.ExitStatus(), stderr.String())
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "yes\n" {
		t.Errorf("the job did not run: %q, %v", b, err)
	}
}

// TestTheCommandCannotTurnTheLedgerAgainstPID1: the command replaces the
// ledger with a FIFO, or with a hard link to another file, before it
// exits. The finished line is refused with a warning, nothing blocks, the
// other file is not appended to, and the exit status is the command's.
func TestTheCommandCannotTurnTheLedgerAgainstPID1(t *testing.T) {
	for _, tt := range []struct{ name, attack, warning string }{
		{"FIFO", `rm "$L"; mkfifo "$L"`, "not a regular file (a FIFO)"},
		{"HardLinkToAnotherFile", `rm "$L"; ln "$V" "$L"`, "more than one hard link"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ledger, victim := filepath.Join(dir, "runs.jsonl"), filepath.Join(dir, "victim")
			if err := os.WriteFile(victim, []byte("keep\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			m := runUnderMeasure(t, pid1Env("PREFLIGHT_SUPERVISE=true", "PREFLIGHT_PROVENANCE_DIR="+t.TempDir(),
				"PREFLIGHT_LEDGER="+ledger, "L="+ledger, "V="+victim),
				shimPath, "--", "sh", "-c", `set -e; [ -f "$L" ]; `+tt.attack+`; exit 7`)
			wantBounded(t, m, 7)
			if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
				t.Errorf("the other file was appended to: %q", b)
			}
			if !strings.Contains(m.stderr, tt.warning) || !strings.Contains(m.stderr, "ledger line not appended") {
				t.Errorf("no warning that the ledger was refused (%q); stderr:\n%s", tt.warning, m.stderr)
			}
		})
	}
}

// TestSignalGroupReachesTheCommandsWorkers: PREFLIGHT_SIGNAL_GROUP=true
// makes a SIGTERM sent to the supervising gpu-preflight reach a worker the
// command started in the background, which a shell does not pass it on to.
func TestSignalGroupReachesTheCommandsWorkers(t *testing.T) {
	defaultSignals(t, unix.SIGTERM)
	dir := t.TempDir()
	script := `sleep 30 >/dev/null 2>&1 & echo $! > "$D/worker"
trap 'exit 5' TERM
touch "$D/ready"
while :; do sleep 0.05; done`
	s := startSupervised(t, map[string]string{"D": dir, "PREFLIGHT_SIGNAL_GROUP": "true"}, "sh", "-c", script)
	harness.WaitForFile(t, filepath.Join(dir, "ready"), s.stderr.String)
	b, _ := os.ReadFile(filepath.Join(dir, "worker"))
	worker, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("worker pid %q: %v", b, err)
	}
	t.Cleanup(func() { unix.Kill(worker, unix.SIGKILL) })
	if err := s.cmd.Process.Signal(unix.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(t); code != 5 {
		t.Fatalf("exit %d, want the command's 5; stderr:\n%s", code, s.stderr.String())
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(worker) + "/stat")
		if err != nil || strings.Contains(string(st[strings.LastIndexByte(string(st), ')'):]), ") Z") {
			break // gone, or a zombie waiting for its parent
		}
		if time.Now().After(deadline) {
			t.Fatal("the background worker got no SIGTERM")
		}
	}
}

// TestAHardLinkedTerminationLogIsRefusedWithAWarning: on abort, a
// termination-log path that is a hard link to another file is refused
// before anything is cut, and the log says so at warn level.
func TestAHardLinkedTerminationLogIsRefusedWithAWarning(t *testing.T) {
	dir := t.TempDir()
	victim, term := filepath.Join(dir, "victim"), filepath.Join(dir, "termination-log")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(victim, term); err != nil {
		t.Fatal(err)
	}
	r := runShim(t, map[string]string{
		"PREFLIGHT_ROOT": driverRoot(t, "515.65.01"), "NVIDIA_REQUIRE_CUDA": require118,
		"PREFLIGHT_TERMINATION_LOG": term,
	}, "--", "true")
	if r.code != 78 {
		t.Fatalf("exit %d, want the abort's 78; stderr:\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("the other file was cut or written: %q", b)
	}
	line := logLine(t, r.stderr, map[string]string{"message": "termination message not written"})
	if line["level"] != "warn" || !strings.Contains(fmt.Sprint(line["error"]), "hard link") {
		t.Errorf("log line %v, want a warning that names the hard link", line)
	}
}
