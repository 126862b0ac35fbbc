//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

// Crash safety (docs/sources.md, "What gpu-preflight is held to", "Safe"; docs/schema/README.md): the real shim, killed
// with SIGKILL at any moment or denied its provenance directory, never
// leaves a partial record, and a write failure is a warning while the
// command still runs.

// recordFile is the name store.Write gives a record:
// "<UTC start time>-<run id>.json"; tempFile is the name store.Complete
// links a whole replacement under before renaming it over the record.
var (
	recordFile = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}\.[0-9]{9}Z-([0-9a-f]{32})\.json$`)
	tempFile   = regexp.MustCompile(`^\.[0-9]{8}T[0-9]{6}\.[0-9]{9}Z-([0-9a-f]{32})\.json\.tmp-[0-9a-f]{8}$`)
)

// files is what a provenance directory held.
type files struct {
	records   int // whole records under a record's name
	completed int // of which with the supervised command's outcome
	temps     int // whole records under Complete's temporary name
}

// completeRecords checks that every entry of dir, dot files included, is a
// whole record: a regular file with a record's name (or, if allowTemp,
// Complete's temporary name) whose content is JSON valid against the
// provenance schema, for the run its name says. A directory that does not
// exist holds none.
func completeRecords(t *testing.T, dir string, allowTemp bool) files {
	t.Helper()
	var got files
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return got
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		m := recordFile.FindStringSubmatch(e.Name())
		temp := false
		if m == nil && allowTemp {
			m = tempFile.FindStringSubmatch(e.Name())
			temp = m != nil
		}
		if m == nil || !e.Type().IsRegular() {
			t.Errorf("%s (%v) is not a record file; only whole records may be left", path, e.Type())
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := schematest.Check(b); err != nil {
			t.Errorf("%s is not a complete record: %v\n%s", path, err, b)
			continue
		}
		var r struct {
			RunID   string          `json:"runId"`
			Outcome json.RawMessage `json:"outcome"`
		}
		if err := json.Unmarshal(b, &r); err != nil || r.RunID != m[1] {
			t.Errorf("%s holds run %q (%v)", path, r.RunID, err)
		}
		switch {
		case temp:
			got.temps++
		case string(r.Outcome) != "null":
			got.completed++
			got.records++
		default:
			got.records++
		}
	}
	return got
}

// crashEnv is a minimal environment for the shim: JSON logs, and the
// termination message in base; the tests give --provenance-dir and an
// empty --root as flags, so no host file changes how long a run takes.
func crashEnv(base string) []string {
	return []string{
		"PATH=/usr/bin:/bin",
		"PREFLIGHT_LOG_FORMAT=json",
		"PREFLIGHT_TERMINATION_LOG=" + filepath.Join(base, "termination-log"),
	}
}

// emptyRoot makes an empty directory for --root under base.
func emptyRoot(t *testing.T, base string) string {
	t.Helper()
	root := filepath.Join(base, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// killMode is one way the shim writes records: in the ENTRYPOINT form it
// writes one and execs a command (here one that sleeps, to be killed);
// with --supervise it writes one, runs the command (here /bin/true) and
// replaces the record with one that holds the outcome (store.Complete).
type killMode struct {
	name string
	args []string
	// done is how far the shim's writes have got once it is finished
	// with its records.
	done func(files) bool
	// allowTemp admits whole records under Complete's temporary name: a
	// kill between its link and its rename leaves one (store.Complete).
	allowTemp bool
}

var killModes = []killMode{
	{"exec", []string{"--", "/bin/sleep", "5"}, func(f files) bool { return f.records == 1 }, false},
	{"supervise", []string{"--supervise", "--", "/bin/true"}, func(f files) bool { return f.completed == 1 }, true},
}

// startShim starts the shim writing its records into dir.
func startShim(t *testing.T, m killMode, bin, base, root, dir string, stderr io.Writer) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--provenance-dir=" + dir, "--root=" + root, "--host-root=" + root}, m.args...)...)
	cmd.Env = crashEnv(base)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// killAndWait sends SIGKILL and checks that it is what ended the process,
// unless the process had already exited 0 (a supervised /bin/true can be
// done before the kill); it reports whether the kill ended it.
func killAndWait(t *testing.T, cmd *exec.Cmd, stderr *bytes.Buffer) bool {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if err == nil {
		return false
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the shim did not die by SIGKILL: %v\nstderr: %s", err, stderr.String())
	}
	return true
}

// sleepExactly blocks the calling thread for d with nanosleep(2), whose
// wake-up is tens of microseconds late at most, finer than the Go timers.
func sleepExactly(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

// docs/sources.md, "What gpu-preflight is held to": no partial provenance file after kill -9 at any point.
// For each way the shim writes records, the test first measures how long
// after its start the shim is done writing, then kills runs of the shim
// with SIGKILL at delays swept from 0 to twice the median of those times
// (with random jitter), so kills land before the writes, during them and
// after them. After every kill each file in the provenance directory must
// be a whole record. The sweep must land both before the first record
// exists and after the last write, or the test proved nothing.
func TestKillDuringRecordWriteLeavesOnlyCompleteRecords(t *testing.T) {
	bin := shimBin(t)
	for _, m := range killModes {
		t.Run(m.name, func(t *testing.T) { testKillDuringRecordWrite(t, m, bin) })
	}
}

func testKillDuringRecordWrite(t *testing.T, m killMode, bin string) {
	base := t.TempDir()
	root := emptyRoot(t, base)

	// Calibrate: the time from Start until the shim is done writing,
	// polled.
	const calibrations = 10
	var done []time.Duration
	for i := range calibrations {
		dir := filepath.Join(base, "calibrate", fmt.Sprint(i))
		var stderr bytes.Buffer
		start := time.Now()
		cmd := startShim(t, m, bin, base, root, dir, &stderr)
		for !m.done(quietFiles(dir)) {
			if time.Since(start) > time.Minute {
				killAndWait(t, cmd, &stderr)
				t.Fatalf("the shim's records in %s were not written a minute after it started\nstderr: %s", dir, stderr.String())
			}
			sleepExactly(20 * time.Microsecond)
		}
		done = append(done, time.Since(start))
		killAndWait(t, cmd, &stderr)
		if f := completeRecords(t, dir, m.allowTemp); !m.done(f) || f.temps > 0 {
			t.Fatalf("calibration run left %+v in %s", f, dir)
		}
	}
	slices.Sort(done)
	// Twice the median: a run slowed by a busy machine must not stretch
	// the sweep so far that few kills land near the writes.
	window := 2 * done[len(done)/2]
	t.Logf("records written %v..%v (median %v) after start; sweeping kills over 0..%v",
		done[0], done[len(done)-1], done[len(done)/2], window)

	const kills = 200
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 8))
	step := window / kills
	before, between, after, exited, temps := 0, 0, 0, 0, 0
	// The latest kill that found no record and the earliest that found
	// the writes done: where they overlap, a write was in flight.
	var lastBefore, firstAfter time.Duration = -1, -1
	for i := range kills {
		// Evenly spread, plus up to one step of jitter so repeated runs
		// probe different instants.
		delay := time.Duration(i)*step + time.Duration(rng.Int64N(int64(step)+1))
		dir := filepath.Join(base, "kill", fmt.Sprintf("%03d", i))
		var stderr bytes.Buffer
		cmd := startShim(t, m, bin, base, root, dir, &stderr)
		sleepExactly(delay)
		if !killAndWait(t, cmd, &stderr) {
			exited++
		}
		f := completeRecords(t, dir, m.allowTemp)
		temps += f.temps
		switch {
		case f.records > 1:
			t.Errorf("kill %d after %v: %d records in %s, want at most 1", i, delay, f.records, dir)
		case m.done(f):
			after++
			if firstAfter < 0 || delay < firstAfter {
				firstAfter = delay
			}
		case f.records == 0 && f.temps == 0:
			before++
			lastBefore = max(lastBefore, delay)
		default:
			between++
		}
		if t.Failed() {
			t.Fatalf("kill %d after %v left a partial or foreign file\nstderr: %s", i, delay, stderr.String())
		}
	}
	t.Logf("%d kills: %d landed before any record existed (latest after %v), %d between the first record and the last write, %d after the last write (earliest after %v; %d of them found the shim already exited); %d whole temporary copies left; every file left was a whole record",
		kills, before, lastBefore, between, after, firstAfter, exited, temps)
	if before == 0 || after == 0 {
		t.Fatalf("the sweep landed on one side only (%d before the first record, %d after the last write): it cannot show a kill during a write is safe", before, after)
	}
}

// quietFiles is completeRecords for polling: it reports what dir holds
// without failing on what a write in flight shows.
func quietFiles(dir string) files {
	var f files
	names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, name := range names {
		b, err := os.ReadFile(name)
		var r struct {
			Outcome json.RawMessage `json:"outcome"`
		}
		if err != nil || json.Unmarshal(b, &r) != nil {
			continue
		}
		f.records++
		if string(r.Outcome) != "null" {
			f.completed++
		}
	}
	return f
}

// assertWriteFailedCleanly checks that the shim warned that the record was
// not written, naming reason (the errno's text), and left nothing in dir.
func assertWriteFailedCleanly(t *testing.T, r result, dir, reason string) {
	t.Helper()
	warning := notWrittenWarning(t, r.stderr)
	t.Logf("warning: %s", warning)
	if !strings.Contains(warning, reason) {
		t.Errorf("the warning does not say %q: %s", reason, warning)
	}
	if f := completeRecords(t, dir, false); f != (files{}) {
		t.Errorf("%+v in %s after a failed write, want nothing", f, dir)
	}
}

// notWrittenWarning returns the shim's "provenance record not written"
// warning from its JSON log, or fails.
func notWrittenWarning(t *testing.T, stderr string) string {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "provenance record not written") {
			if !strings.Contains(line, `"level":"warn"`) {
				t.Errorf("the provenance failure is not logged as a warning: %s", line)
			}
			return line
		}
	}
	t.Fatalf("no \"provenance record not written\" warning in the log:\n%s", stderr)
	return ""
}

// fillUntilFull writes to a new file in dir until the file system says
// ENOSPC, first in pages, then byte by byte to use up the last page.
func fillUntilFull(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, chunk := range [][]byte{make([]byte, 4096), {0}} {
		for {
			_, err := f.Write(chunk)
			if errors.Is(err, unix.ENOSPC) {
				break
			}
			if err != nil {
				t.Fatalf("filling %s: %v", dir, err)
			}
		}
	}
	// A file system is full when not even an empty file's first byte fits.
	probe := filepath.Join(dir, "probe")
	if err := os.WriteFile(probe, []byte{0}, 0o600); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("%s is not full after filling: writing one byte gave %v", dir, err)
	}
	os.Remove(probe)
}

// smallTmpfs mounts a tmpfs of size on mnt until the test ends.
func smallTmpfs(t *testing.T, mnt, size string) string {
	t.Helper()
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size="+size+",mode=0755"); err != nil {
		t.Fatalf("mount a %s tmpfs on %s: %v", size, mnt, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(mnt, 0); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	return mnt
}

// docs/schema/README.md: "no space" is a warning, never a reason to abort. On a
// full tmpfs, and on one mounted read-only, the command still runs, the log
// warns naming the volume's state and its remedy, and the provenance
// directory holds no partial file.
func TestFullOrReadOnlyVolumeLeavesNoPartialRecordAndWarns(t *testing.T) {
	if os.Getuid() != 0 {
		t.Fatalf("this test needs root to mount a small tmpfs (uid %d); run 'make test-e2e' as root, as the CI does", os.Getuid())
	}
	for _, tt := range []struct{ name, reason, remedy string }{
		{"full", "no space left on device", "the volume is full: free space on it"},
		{"read-only", "read-only file system", "the volume is mounted read-only: mount it read-write"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			root := emptyRoot(t, base)
			mnt := smallTmpfs(t, filepath.Join(base, "volume"), "64k")
			dir := filepath.Join(mnt, "provenance")
			if err := os.Mkdir(dir, 0o750); err != nil {
				t.Fatal(err)
			}
			if tt.name == "full" {
				fillUntilFull(t, mnt)
			} else if err := unix.Mount("", mnt, "", unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
				t.Fatalf("remount %s read-only: %v", mnt, err)
			}
			wantVolumeNamed(t, base, root, dir, tt.reason, tt.remedy)
		})
	}
}

// wantVolumeNamed runs the shim with its records in dir, on a volume that
// refuses every write with reason: the command runs, dir holds nothing, and
// the warning gives remedy, not the permissions one.
func wantVolumeNamed(t *testing.T, base, root, dir, reason, remedy string) {
	t.Helper()
	cmd := exec.Command(shimBin(t), "--provenance-dir="+dir, "--root="+root, "--host-root="+root, "--", "/bin/sh", "-c", "echo ran")
	cmd.Env = crashEnv(base)
	r := runCmd(t, cmd, 30*time.Second)
	t.Logf("shim on a volume that says %q: exit %d after %v", reason, r.code, r.elapsed)
	if r.code != 0 || r.stdout != "ran\n" {
		t.Fatalf("exit %d, stdout %q: the command must run all the same\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	assertWriteFailedCleanly(t, r, dir, reason)
	if w := notWrittenWarning(t, r.stderr); !strings.Contains(w, remedy) || strings.Contains(w, "writable by this user") {
		t.Errorf("the warning does not give %q alone: %s", remedy, w)
	}
}

// docs/schema/README.md: "no permission" is a warning, never a reason to abort.
// Root ignores mode bits, so the shim runs as nobody (65534) against a
// directory root owns with mode 0755; everything else it needs sits in a
// 0755 directory nobody can read.
func TestUnwritableDirectoryWarns(t *testing.T) {
	if os.Getuid() != 0 {
		t.Fatalf("this test needs root to run the shim as another user (uid %d); run 'make test-e2e' as root, as the CI does", os.Getuid())
	}
	const nobody = 65534
	base, err := os.MkdirTemp("", "e2e-unwritable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	// A copy of the shim, so a checkout nobody cannot enter does not matter.
	bin := filepath.Join(base, "gpu-preflight")
	data, err := os.ReadFile(shimBin(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	root := emptyRoot(t, base)
	dir := filepath.Join(base, "provenance")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "--provenance-dir="+dir, "--root="+root, "--host-root="+root, "--", "/bin/sh", "-c", "echo ran; id -u")
	cmd.Env = crashEnv(base)
	cmd.Dir = base
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	r := runCmd(t, cmd, 30*time.Second)
	t.Logf("shim as uid %d on a root-owned directory: exit %d after %v", nobody, r.code, r.elapsed)
	if want := fmt.Sprintf("ran\n%d\n", nobody); r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d, stdout %q, want 0 and %q: the command must run as uid %d despite the unwritable directory\nstderr: %s",
			r.code, r.stdout, want, nobody, r.stderr)
	}
	assertWriteFailedCleanly(t, r, dir, "permission denied")
}

// A supervised command that fills the record's volume: the warning names a
// full disk and its remedy, not permissions; the outcome still reaches the
// log's finished line and the ledger (on another volume); and the record
// left on disk, the start record, says the run was supervised with no
// outcome, which trace counts as a failure after the job's good run and
// shows as "end not recorded".
func TestFullDiskMidRunIsNamedAndTheEndRecoverable(t *testing.T) {
	if os.Getuid() != 0 {
		t.Fatalf("this test needs root to mount a small tmpfs (uid %d); run 'make test-e2e' as root, as the CI does", os.Getuid())
	}
	base := t.TempDir()
	root := emptyRoot(t, base)
	mnt := smallTmpfs(t, filepath.Join(base, "volume"), "256k")
	dir, ledger := filepath.Join(mnt, "provenance"), filepath.Join(base, "ledger.jsonl")
	shim := func(args ...string) result {
		cmd := exec.Command(shimBin(t), append([]string{"--provenance-dir=" + dir, "--root=" + root, "--host-root=" + root, "--"}, args...)...)
		cmd.Env = append(crashEnv(base), "PREFLIGHT_SUPERVISE=true", "PREFLIGHT_LEDGER="+ledger, "PREFLIGHT_JOB_ID=train")
		return runCmd(t, cmd, 60*time.Second)
	}
	if r := shim("true"); r.code != 0 {
		t.Fatalf("a good run first: exit %d:\n%s", r.code, r.stderr)
	}
	// The command fills the volume after the start record is written there.
	r := shim("/bin/sh", "-c", `cat /dev/zero > "$0"/filler 2>/dev/null; exit 3`, mnt)
	if r.code != 3 {
		t.Fatalf("exit %d, want the command's 3:\n%s", r.code, r.stderr)
	}

	var warning, finished string
	for _, line := range strings.Split(r.stderr, "\n") {
		switch {
		case strings.Contains(line, "finished provenance record not written"):
			warning = line
		case strings.Contains(line, `"event":"finished"`):
			finished = line
		}
	}
	if !strings.Contains(warning, "the volume is full: free space on it") || !strings.Contains(warning, "no space left on device") || strings.Contains(warning, "writable") {
		t.Errorf("the warning does not name a full disk and its remedy alone: %q\n%s", warning, r.stderr)
	}
	if !strings.Contains(finished, `"exitCode":3`) {
		t.Errorf("the log's finished line does not say exit 3: %q\n%s", finished, r.stderr)
	}
	lines, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if l := strings.Split(strings.TrimSpace(string(lines)), "\n"); len(l) != 4 || !strings.Contains(l[3], `"exitCode":3`) {
		t.Errorf("the ledger does not end with the outcome, exit 3:\n%s", lines)
	}

	records, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(records) != 2 {
		t.Fatalf("%d records in %s, want the good run's and the start record", len(records), dir)
	}
	b, err := os.ReadFile(records[1])
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Command struct{ Supervised bool }
		Outcome *struct{ ExitCode int }
	}
	if err := json.Unmarshal(b, &rec); err != nil || !rec.Command.Supervised || rec.Outcome != nil {
		t.Fatalf("the record on disk is not the start record of a supervised run (%v):\n%s", err, b)
	}
	tr := run(t, 30*time.Second, []string{"PATH=/usr/bin:/bin"}, shimBin(t), "trace", "--json", dir)
	if !strings.Contains(tr.stdout, `"outcome":"end not recorded"`) || !strings.Contains(tr.stdout, `"failing":true`) {
		t.Errorf("trace does not tell the run's end was not recorded (exit %d):\n%s\n%s", tr.code, tr.stdout, tr.stderr)
	}
}

// A full ledger volume is named apart from the record's: the record is
// written on its own volume, and only the ledger's warning names a full
// volume, with PREFLIGHT_LEDGER's remedy; a read-only one likewise.
func TestFullLedgerVolumeIsNamedApartFromTheRecords(t *testing.T) {
	if os.Getuid() != 0 {
		t.Fatalf("this test needs root to mount a small tmpfs (uid %d); run 'make test-e2e' as root, as the CI does", os.Getuid())
	}
	base := t.TempDir()
	root := emptyRoot(t, base)
	dir := filepath.Join(base, "provenance")
	full := smallTmpfs(t, filepath.Join(base, "full"), "64k")
	if err := os.WriteFile(filepath.Join(full, "ledger.jsonl"), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	fillUntilFull(t, full)
	ro := smallTmpfs(t, filepath.Join(base, "ro"), "64k")
	if err := unix.Mount("", ro, "", unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount %s read-only: %v", ro, err)
	}
	for ledger, want := range map[string]string{
		filepath.Join(full, "ledger.jsonl"): "the volume is full: free space on it, point PREFLIGHT_LEDGER at a larger volume, or unset it",
		filepath.Join(ro, "ledger.jsonl"):   "the volume is mounted read-only: mount it read-write, point PREFLIGHT_LEDGER at a writable volume, or unset it",
	} {
		cmd := exec.Command(shimBin(t), "--provenance-dir="+dir, "--root="+root, "--host-root="+root, "--", "/bin/sh", "-c", "echo ran")
		cmd.Env = append(crashEnv(base), "PREFLIGHT_LEDGER="+ledger)
		r := runCmd(t, cmd, 30*time.Second)
		if r.code != 0 || r.stdout != "ran\n" {
			t.Fatalf("exit %d, stdout %q: the command must run\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		var warning string
		for _, line := range strings.Split(r.stderr, "\n") {
			if strings.Contains(line, "ledger line not appended") {
				warning = line
			}
			if strings.Contains(line, "provenance record not written") {
				t.Errorf("the record's volume is not the ledger's, yet: %s", line)
			}
		}
		if !strings.Contains(warning, want) || strings.Contains(warning, "regular file of its own") {
			t.Errorf("the ledger's warning does not name its volume and the remedy %q alone: %q\n%s", want, warning, r.stderr)
		}
	}
	if records, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(records) != 2 {
		t.Errorf("%d records in %s, want both runs'", len(records), dir)
	}
}
