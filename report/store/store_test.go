package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
	"golang.org/x/sys/unix"
)

// Child modes: the test binary re-executes itself to write records in a
// process that can be killed, or that sees a read-only mount.
const (
	envWriterChild = "GPU_PREFLIGHT_TEST_WRITER_DIR"
	envROFSChild   = "GPU_PREFLIGHT_TEST_ROFS_DIR"
	envFullChild   = "GPU_PREFLIGHT_TEST_FULL_DIR"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(envWriterChild); dir != "" {
		writerChild(dir)
		return
	}
	if dir := os.Getenv(envROFSChild); dir != "" {
		rofsChild(dir)
		return
	}
	if dir := os.Getenv(envFullChild); dir != "" {
		fullChild(dir)
		return
	}
	if dir := os.Getenv(envPlantedProcChild); dir != "" {
		plantedProcChild(dir)
		return
	}
	os.Exit(m.Run())
}

// writerChild writes records into dir until it is killed, writing a byte
// to stdout after each one, so the test knows when a record is whole.
func writerChild(dir string) {
	in := reporttest.Inputs()
	for {
		in.Now = time.Now()
		if _, err := Write(dir, report.New(in)); err != nil {
			fmt.Fprintln(os.Stderr, "writer child:", err)
			os.Exit(2)
		}
		if _, err := os.Stdout.Write([]byte{'.'}); err != nil {
			os.Exit(3)
		}
	}
}

// rofsChild mounts a read-only tmpfs over dir (in its own mount namespace)
// and tries to write a record there; it prints the error.
func rofsChild(dir string) {
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_RDONLY, ""); err != nil {
		fmt.Println("mount:", err)
		os.Exit(4)
	}
	_, err := Write(dir, report.New(reporttest.Inputs()))
	if err == nil {
		fmt.Println("no error")
		os.Exit(3)
	}
	fmt.Println(err)
}

// fullAttempt is what fullChild saw for one way of writing.
type fullAttempt struct {
	Way, Error string
	Left       []string
}

// fullChild mounts a 64 KiB tmpfs over dir (in its own mount namespace),
// fills it until ENOSPC, then tries each way of writing a record into a
// directory on it; it prints a fullAttempt per way as JSON.
func fullChild(dir string) {
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		fmt.Println("mount:", err)
		os.Exit(4)
	}
	prov := filepath.Join(dir, "provenance")
	if err := os.Mkdir(prov, 0o750); err != nil {
		fmt.Println(err)
		os.Exit(4)
	}
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		fmt.Println(err)
		os.Exit(4)
	}
	for _, chunk := range [][]byte{make([]byte, 4096), {0}} {
		for {
			if _, err := f.Write(chunk); errors.Is(err, unix.ENOSPC) {
				break
			} else if err != nil {
				fmt.Println("fill:", err)
				os.Exit(4)
			}
		}
	}
	enc := json.NewEncoder(os.Stdout)
	for _, w := range ways {
		a := fullAttempt{Way: w.name, Error: "no error"}
		if _, _, err := write(prov, report.New(reporttest.Inputs()), w.fdDir); err != nil {
			a.Error = err.Error()
		}
		entries, _ := os.ReadDir(prov)
		for _, e := range entries {
			a.Left = append(a.Left, e.Name())
		}
		enc.Encode(a)
	}
}

func TestWriteNamesModesAndContent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "provenance") // created by Write
	r := report.New(reporttest.Inputs())
	path, err := Write(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "20261129T153142.123456789Z-"+r.RunID+".json"); path != want {
		t.Errorf("path = %s, want %s", path, want)
	}
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode() != 0o640 {
		t.Errorf("record mode = %v, want 0640", st.Mode())
	}
	dst, _ := os.Stat(dir)
	if dst.Mode().Perm() != 0o750 {
		t.Errorf("created directory mode = %v, want 0750", dst.Mode().Perm())
	}
	b := reporttest.ReadFile(t, path)
	schematest.Validate(t, b)
	var back report.Record
	if err := json.Unmarshal(b, &back); err != nil || back.RunID != r.RunID {
		t.Errorf("record does not read back: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the record (no temporary file left)", len(entries))
	}
}

func TestWriteKeepsModeUnderRestrictiveUmask(t *testing.T) {
	old := unix.Umask(0o077)
	defer unix.Umask(old)
	path, err := Write(t.TempDir(), report.New(reporttest.Inputs()))
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode() != 0o640 {
		t.Errorf("mode = %v under umask 077, want 0640", st.Mode())
	}
}

func TestWriteNeverOverwrites(t *testing.T) {
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) { testNeverOverwrites(t, w.fdDir) })
	}
}

func testNeverOverwrites(t *testing.T, fdDir string) {
	dir := t.TempDir()
	r := report.New(reporttest.Inputs())
	name, _ := FileName(r)
	other := t.TempDir() + "/elsewhere"
	if err := os.WriteFile(other, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		prepare func(final string) error
	}{
		{"a record with the same name", func(final string) error { return os.WriteFile(final, []byte("earlier"), 0o640) }},
		{"a symlink to another file", func(final string) error { return os.Symlink(other, final) }},
		{"a dangling symlink", func(final string) error { return os.Symlink(dir+"/nowhere", final) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			final := filepath.Join(dir, name)
			os.Remove(final)
			if err := tt.prepare(final); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Lstat(final)
			_, _, err := write(dir, r, fdDir)
			if err == nil {
				t.Fatal("Write replaced an existing name")
			}
			if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "never overwrites") {
				t.Errorf("error = %v, want an ErrExist that says records are never overwritten", err)
			}
			after, _ := os.Lstat(final)
			if !os.SameFile(before, after) {
				t.Error("the existing entry was replaced")
			}
			if string(reporttest.ReadFile(t, other)) != "keep" {
				t.Error("the symlink's target was written through")
			}
			if _, err := os.Stat(dir + "/nowhere"); err == nil {
				t.Error("a dangling symlink's target was created")
			}
		})
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// ways are the two ways write and complete make a record's file: an
// anonymous O_TMPFILE file, named only once whole (docs/sources.md, "What gpu-preflight is held to": nothing
// partial is ever visible), and the named temporary file they fall back to
// where the file system has no O_TMPFILE or /proc is not mounted.
var ways = []struct{ name, fdDir, via string }{
	{"O_TMPFILE linked through /proc", procSelfFD, viaAnonymous},
	{"no O_TMPFILE: named temporary file", "", viaNamed},
	{"no /proc: named temporary file", "/nonexistent/proc/self/fd/", viaNamed},
}

// dirNames lists every entry of dir, dot files included.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// Write uses an anonymous file where it can and falls back to a named
// temporary file only where O_TMPFILE or /proc is missing; either way the
// record has its name, mode 0640 under any umask and its full content, and
// nothing else is left in the directory.
func TestWriteUsesAnonymousFileElseNamedTemporaryFile(t *testing.T) {
	old := unix.Umask(0o077)
	defer unix.Umask(old)
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "provenance")
			r := report.New(reporttest.Inputs())
			path, via, err := write(dir, r, w.fdDir)
			if err != nil {
				t.Fatal(err)
			}
			if via != w.via {
				t.Errorf("written through a %s, want a %s", via, w.via)
			}
			name, _ := FileName(r)
			if path != filepath.Join(dir, name) {
				t.Errorf("path = %s, want %s", path, filepath.Join(dir, name))
			}
			if st, err := os.Lstat(path); err != nil || st.Mode() != 0o640 {
				t.Errorf("record mode = %v (%v), want 0640", st.Mode(), err)
			}
			schematest.Validate(t, reporttest.ReadFile(t, path))
			if names := dirNames(t, dir); len(names) != 1 || names[0] != name {
				t.Errorf("directory holds %q, want only %s", names, name)
			}
		})
	}
}

// open(2): EOPNOTSUPP (file system without O_TMPFILE), EISDIR (kernel
// before 3.11) and EINVAL mean "no O_TMPFILE here"; every other error
// would fail a named temporary file too and is reported as it is.
func TestTmpfileUnsupportedOnlyForMissingSupport(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{unix.EOPNOTSUPP, true},
		{unix.EISDIR, true},
		{unix.EINVAL, true},
		{fmt.Errorf("wrapped: %w", unix.EOPNOTSUPP), true},
		{unix.EACCES, false},
		{unix.EROFS, false},
		{unix.ENOSPC, false},
		{unix.EDQUOT, false},
		{unix.ENOENT, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := tmpfileUnsupported(tt.err); got != tt.want {
			t.Errorf("tmpfileUnsupported(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// docs/schema/README.md: a record is never written through a symlink. A symlink
// planted at the record's path, pointing at a file outside the directory,
// makes Write fail with "already exists", by either way of writing; the
// victim and the symlink stay as they were and nothing else is left in the
// directory. (Complete replaces such a symlink, never writing through it:
// TestCompleteReplacesWhateverHoldsItsName.)
func TestSymlinkAtRecordPathIsNotFollowed(t *testing.T) {
	r := report.New(reporttest.Inputs())
	r.RunID = "0123456789abcdef0123456789abcdef"
	name, err := FileName(r)
	if err != nil {
		t.Fatal(err)
	}
	// The victim holds a record of the same run, so nothing but the
	// refusal to follow the symlink keeps it as it is.
	victimContent, err := Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	ops := []struct {
		name    string
		op      func(dir, fdDir string) error
		wantErr string
	}{
		{"Write", func(dir, fdDir string) error { _, _, err := write(dir, r, fdDir); return err }, "already exists"},
	}
	for _, op := range ops {
		for _, w := range ways {
			t.Run(op.name+"/"+w.name, func(t *testing.T) {
				dir := t.TempDir()
				victim := filepath.Join(t.TempDir(), "victim")
				if err := os.WriteFile(victim, victimContent, 0o600); err != nil {
					t.Fatal(err)
				}
				link := filepath.Join(dir, name)
				if err := os.Symlink(victim, link); err != nil {
					t.Fatal(err)
				}
				before, _ := os.Lstat(link)
				victimBefore, _ := os.Stat(victim)

				err := op.op(dir, w.fdDir)
				if err == nil || !strings.Contains(err.Error(), op.wantErr) {
					t.Errorf("error = %v, want one that says %q", err, op.wantErr)
				}
				if got := reporttest.ReadFile(t, victim); string(got) != string(victimContent) {
					t.Errorf("the victim was written through the symlink:\n%s", got)
				}
				if st, _ := os.Stat(victim); !os.SameFile(victimBefore, st) || st.Mode() != 0o600 {
					t.Errorf("the victim was replaced or its mode changed: %v", st.Mode())
				}
				after, err := os.Lstat(link)
				if err != nil || !os.SameFile(before, after) {
					t.Errorf("the symlink was replaced or removed: %v", err)
				}
				if target, _ := os.Readlink(link); target != victim {
					t.Errorf("the symlink points at %s now, want %s", target, victim)
				}
				if names := dirNames(t, dir); len(names) != 1 || names[0] != name {
					t.Errorf("directory holds %q, want only the planted symlink", names)
				}
			})
		}
	}
}

func TestWriteIntoSymlinkedDirectory(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "prov")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	path, err := Write(link, report.New(reporttest.Inputs()))
	if err != nil {
		t.Fatalf("a symlinked directory must work: %v", err)
	}
	if _, err := os.Stat(filepath.Join(real, filepath.Base(path))); err != nil {
		t.Errorf("record not in the link's target: %v", err)
	}
}

func TestWriteFailuresSayWhatToDo(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Write(filepath.Join(file, "sub"), report.New(reporttest.Inputs()))
	if err == nil || !strings.Contains(err.Error(), "create directory") || !strings.Contains(err.Error(), "PREFLIGHT_PROVENANCE_DIR") {
		t.Errorf("directory under a file: error = %v", err)
	}
	if _, err := Write(base, report.Record{RunID: "x", StartedAt: "not a time"}); err == nil {
		t.Error("a record without a valid startedAt was written")
	}
	if _, err := Write(base, report.Record{RunID: "../x", StartedAt: reporttest.Time.Format(report.TimeLayout)}); err == nil {
		t.Error("a run id with a path separator was written")
	}
}

// A read-only volume (EROFS) gives an error naming the step and the fix, and
// leaves nothing behind; the caller turns it into a warning. Root ignores
// permission bits, so the test mounts a read-only tmpfs in a private mount
// namespace of a child process (a user namespace too when not root).
func TestWriteToReadOnlyDirectoryFails(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envROFSChild+"="+dir)
	cmd.SysProcAttr = mountNamespace()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("read-only child: %v\n%s\n(this test needs a mount namespace: root, or unprivileged user namespaces enabled)", err, out)
	}
	msg := string(out)
	for _, want := range []string{"read-only file system", "create temporary file", "PREFLIGHT_PROVENANCE_DIR", "off"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not contain %q", msg, want)
		}
	}
}

// docs/schema/README.md: no space is a failure that names ENOSPC and leaves
// nothing behind, by either way of writing. The child mounts a small tmpfs
// in a private mount namespace and fills it, as for the read-only test.
func TestWriteOnFullDiskFailsAndLeavesNothing(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envFullChild+"="+t.TempDir())
	cmd.SysProcAttr = mountNamespace()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("full-disk child: %v\n%s\n(this test needs a mount namespace: root, or unprivileged user namespaces enabled)", err, out)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for ; dec.More(); n++ {
		var a fullAttempt
		if err := dec.Decode(&a); err != nil {
			t.Fatalf("full-disk child output: %v\n%s", err, out)
		}
		if !strings.Contains(a.Error, "no space left on device") || !strings.Contains(a.Error, "PREFLIGHT_PROVENANCE_DIR") {
			t.Errorf("%s: error %q, want one naming ENOSPC and the fix", a.Way, a.Error)
		}
		if len(a.Left) > 0 {
			t.Errorf("%s: left %q in the directory, want nothing", a.Way, a.Left)
		}
	}
	if n != len(ways) {
		t.Errorf("the child reported %d ways, want %d:\n%s", n, len(ways), out)
	}
}

// mountNamespace runs a child in a private mount namespace (a user
// namespace too when not root), so its mounts vanish with it.
func mountNamespace() *syscall.SysProcAttr {
	if os.Getuid() == 0 {
		return &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	}
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
}

var recordName = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}\.[0-9]{9}Z-[0-9a-f]{32}\.json$`)

// docs/sources.md, "What gpu-preflight is held to": no partial provenance
// file after kill -9 at any point. A child writes records in a loop and is
// killed with SIGKILL once it has written two, at a random point of a
// later write: every *.json left must be a complete, valid record, and
// where O_TMPFILE works nothing else may be left.
func TestKillDuringWriteLeavesNoPartialRecord(t *testing.T) {
	dir := t.TempDir()
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for range rounds {
		killDuringWrite(t, dir, rng.Float64())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	records, temps := 0, 0
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".json"):
			records++
			if !recordName.MatchString(name) {
				t.Errorf("unexpected record name %s", name)
			}
			b := reporttest.ReadFile(t, filepath.Join(dir, name))
			if err := schematest.Check(b); err != nil {
				t.Errorf("%s after SIGKILL: %v", name, err)
			}
		case strings.HasPrefix(name, "."):
			temps++ // a temporary file of a killed write: never a *.json
		default:
			t.Errorf("unexpected file %s", name)
		}
	}
	if records < 2*rounds {
		t.Fatalf("%d records after %d kills, each after two records were written", records, rounds)
	}
	// Where O_TMPFILE works, as on the test's own directory, a kill leaves
	// no temporary file either.
	if _, via, err := write(t.TempDir(), report.New(reporttest.Inputs()), procSelfFD); err != nil || via != viaAnonymous {
		t.Logf("O_TMPFILE is not usable in the test directory (%s, %v): temporary files are allowed", via, err)
	} else if temps > 0 {
		t.Errorf("%d temporary files left after the kills, want none: Write uses an anonymous O_TMPFILE file here", temps)
	}
	t.Logf("%d kills: %d complete records, %d temporary files left, 0 partial records", rounds, records, temps)
}

// killDuringWrite starts a writer child, waits until it has written two
// records (the second times one write on the machine as it is now), and
// kills it at fraction at of that time later: inside the third write, or
// between it and the fourth.
func killDuringWrite(t *testing.T, dir string, at float64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envWriterChild+"="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	written, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	next := func() time.Time {
		if _, err := io.ReadFull(written, make([]byte, 1)); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("writer child stopped before writing a record: %v\n%s", err, stderr.String())
		}
		return time.Now()
	}
	first := next()
	second := next()
	sleepFor(time.Duration(at * float64(second.Sub(first))))
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("writer child did not die by SIGKILL: %v\n%s", err, stderr.String())
	}
}

// sleepFor blocks the thread for d with nanosleep(2), finer than Go's
// timers at the sub-millisecond lengths of a write.
func sleepFor(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

func TestCompleteReplacesOnlyItsOwnRecord(t *testing.T) {
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) { testCompleteReplacesOnlyItsOwnRecord(t, w.fdDir) })
	}
}

func testCompleteReplacesOnlyItsOwnRecord(t *testing.T, fdDir string) {
	dir := t.TempDir()
	d, err := openDir(dir, fdDir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	r := report.New(reporttest.Inputs())
	path, _, err := d.write(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Finish(137, 9, reporttest.Time.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if foreign, err := d.Complete(r); err != nil || foreign != "" {
		t.Fatalf("Complete: %q, %v; want the record replaced, nothing foreign", foreign, err)
	}
	b := reporttest.ReadFile(t, path)
	schematest.Validate(t, b)
	if !strings.Contains(string(b), `"signal": 9`) {
		t.Errorf("completed record lacks the outcome:\n%s", b)
	}
	if st, _ := os.Lstat(path); st.Mode() != 0o640 {
		t.Errorf("completed record mode = %v, want 0640", st.Mode())
	}
	if names := dirNames(t, dir); len(names) != 1 || names[0] != filepath.Base(path) {
		t.Errorf("directory holds %q, want only the record", names)
	}
	// The name comes from the record: another run's record can only go
	// under its own name, never over this one.
	other := report.New(reporttest.Inputs())
	if _, err := d.Complete(other); err != nil {
		t.Fatal(err)
	}
	if got := reporttest.ReadFile(t, path); string(got) != string(b) {
		t.Errorf("another run's Complete changed this run's record")
	}
	if names := dirNames(t, dir); len(names) != 2 {
		t.Errorf("directory holds %q, want this run's record and the other's", names)
	}
}

// A volume that refuses every write is named for what it is, each with its
// own remedy, never the permissions one; other errors are not the volume's.
func TestVolumeRemedyNamesTheVolume(t *testing.T) {
	seen := map[string]bool{}
	for errno, want := range map[unix.Errno]string{
		unix.ENOSPC: "the volume is full",
		unix.EDQUOT: "the disk quota on the volume is used up",
		unix.EROFS:  "the volume is mounted read-only",
	} {
		err := fmt.Errorf("write temporary file: %w", errno)
		got := VolumeRemedy(err, "PREFLIGHT_LEDGER", "unset it")
		if !strings.HasPrefix(got, want) || !strings.Contains(got, "PREFLIGHT_LEDGER") || seen[got] {
			t.Errorf("VolumeRemedy(%v) = %q, want %q... naming PREFLIGHT_LEDGER", errno, got, want)
		}
		seen[got] = true
		if r := remedy(err); !strings.HasPrefix(r, want) || strings.Contains(r, "writable by this user") {
			t.Errorf("remedy(%v) = %q", errno, r)
		}
	}
	if got := VolumeRemedy(fmt.Errorf("open: %w", unix.EACCES), "PREFLIGHT_LEDGER", "unset it"); got != "" {
		t.Errorf("EACCES is the file's, not the volume's: %q", got)
	}
}
