package store

import (
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

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

// TestCompleteReplacesWhateverHoldsItsName: the command (or anyone who can
// write the directory) may put anything under the record's name while it
// runs. Complete neither opens nor reads it, so a FIFO cannot block it and
// a 500 MB file costs nothing; it replaces the entry, never writing through
// a symlink or a hard link, and says what it found.
func TestCompleteReplacesWhateverHoldsItsName(t *testing.T) {
	for _, tt := range []struct {
		name, want string
		plant      func(t *testing.T, path, victim string)
	}{
		{"FIFO", "a FIFO", func(t *testing.T, path, _ string) {
			if err := unix.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"500MBFile", "another file, 524288000 bytes", func(t *testing.T, path, _ string) {
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(500 << 20); err != nil { // sparse: no disk needed
				t.Fatal(err)
			}
		}},
		{"SymlinkToAnotherFile", "a symlink", func(t *testing.T, path, victim string) {
			if err := os.Symlink(victim, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"HardLinkToAnotherFile", "a file with 2 hard links", func(t *testing.T, path, victim string) {
			if err := os.Link(victim, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"HardLinkToTheRecord", "a file with 2 hard links", func(t *testing.T, path, victim string) {
			os.Remove(victim)
			if err := os.Link(path, victim); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		for _, w := range ways {
			t.Run(tt.name+"/"+w.name, func(t *testing.T) {
				dir := t.TempDir()
				victim := filepath.Join(dir, "victim")
				if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
					t.Fatal(err)
				}
				d, err := openDir(dir, w.fdDir)
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				r := report.New(reporttest.Inputs())
				path, _, err := d.write(r)
				if err != nil {
					t.Fatal(err)
				}
				if tt.name != "HardLinkToTheRecord" {
					os.Remove(path)
				}
				tt.plant(t, path, victim)
				victimBefore := reporttest.ReadFile(t, victim)
				if err := r.Finish(3, 0, reporttest.Time.Add(time.Minute)); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				foreign, err := d.Complete(r)
				if err != nil {
					t.Fatal(err)
				}
				if took := time.Since(start); took > 5*time.Second {
					t.Errorf("Complete took %v", took)
				}
				if foreign != tt.want {
					t.Errorf("Complete found %q, want %q", foreign, tt.want)
				}
				b := reporttest.ReadFile(t, path)
				schematest.Validate(t, b)
				if !strings.Contains(string(b), `"exitCode": 3`) {
					t.Errorf("the name does not hold the finished record:\n%.300s", b)
				}
				if st, _ := os.Lstat(path); !st.Mode().IsRegular() || st.Sys().(*syscall.Stat_t).Nlink != 1 {
					t.Errorf("the record is %v with %d links, want a regular file with one", st.Mode(), st.Sys().(*syscall.Stat_t).Nlink)
				}
				if got := reporttest.ReadFile(t, victim); string(got) != string(victimBefore) {
					t.Errorf("the other file was written through: now %.100q", got)
				}
			})
		}
	}
}

// TestCompleteGoesWhereTheFirstRecordWent: a provenance directory renamed
// away and replaced while the command runs (by a directory, or by a symlink
// to one) receives nothing; the finished record replaces the first one in
// the directory it was written to.
func TestCompleteGoesWhereTheFirstRecordWent(t *testing.T) {
	for _, swap := range []string{"directory", "symlink"} {
		t.Run(swap, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "provenance")
			d, err := OpenDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			r := report.New(reporttest.Inputs())
			path, err := d.Write(r)
			if err != nil {
				t.Fatal(err)
			}
			moved := filepath.Join(parent, "moved")
			if err := os.Rename(dir, moved); err != nil {
				t.Fatal(err)
			}
			elsewhere := filepath.Join(parent, "elsewhere")
			if err := os.Mkdir(elsewhere, 0o755); err != nil {
				t.Fatal(err)
			}
			if swap == "directory" {
				err = os.Mkdir(dir, 0o755)
			} else {
				err = os.Symlink(elsewhere, dir)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Finish(0, 0, reporttest.Time.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Complete(r); err != nil {
				t.Fatal(err)
			}
			b := reporttest.ReadFile(t, filepath.Join(moved, filepath.Base(path)))
			if !strings.Contains(string(b), `"outcome": {`) {
				t.Errorf("the first directory's record has no outcome:\n%.300s", b)
			}
			for _, d := range []string{dir, elsewhere} {
				if names, _ := os.ReadDir(d); len(names) != 0 {
					t.Errorf("%s received %d entries, want none", d, len(names))
				}
			}
		})
	}
}

// envPlantedProcChild names the directory a child writes a record to after
// it has replaced /proc with a tmpfs of planted /proc/self/fd/N links.
const envPlantedProcChild = "GPU_PREFLIGHT_TEST_PLANTED_PROC_DIR"

// plantedProcChild runs in its own mount namespace: /proc becomes a tmpfs
// whose self/fd/0 ... self/fd/63 are symlinks to a victim file, as a job
// that unmounted /proc could leave them, and a record is written through
// the real /proc/self/fd/ path. It prints what the record's name holds.
func plantedProcChild(dir string) {
	fail := func(err error) { fmt.Println("setup:", err); os.Exit(4) }
	victim := filepath.Join(dir, "..", "victim")
	if err := os.WriteFile(victim, []byte(`{"runId":"not this run"}`), 0o600); err != nil {
		fail(err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fail(err)
	}
	if err := unix.Mount("tmpfs", "/proc", "tmpfs", 0, "size=1m"); err != nil {
		fail(err)
	}
	if err := os.MkdirAll("/proc/self/fd", 0o755); err != nil {
		fail(err)
	}
	for n := range 64 {
		if err := os.Symlink(victim, "/proc/self/fd/"+strconv.Itoa(n)); err != nil {
			fail(err)
		}
	}
	path, via, err := write(dir, report.New(reporttest.Inputs()), procSelfFD)
	out := map[string]any{"via": via}
	if err != nil {
		out["error"] = err.Error()
	} else {
		b, _ := os.ReadFile(path)
		out["content"] = string(b)
		var st, vst unix.Stat_t
		unix.Stat(path, &st)
		unix.Stat(victim, &vst)
		out["sameAsVictim"] = st.Ino == vst.Ino
	}
	json.NewEncoder(os.Stdout).Encode(out)
}

// TestWriteNeverLinksThroughAPlantedProc is the attack as it was run: in
// a private mount namespace, /proc is not a procfs and /proc/self/fd/N
// are ordinary symlinks to another file. linkat(AT_SYMLINK_FOLLOW) through
// them would give that file the record's name; Write sees /proc is not a
// procfs and takes the named temporary file instead.
func TestWriteNeverLinksThroughAPlantedProc(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "provenance")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envPlantedProcChild+"="+dir)
	cmd.SysProcAttr = mountNamespace()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("planted-/proc child: %v\n%s\n(this test needs a mount namespace: root, or unprivileged user namespaces enabled)", err, out)
	}
	var got struct {
		Via, Error, Content string
		SameAsVictim        bool
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("child output: %v\n%s", err, out)
	}
	if got.Error != "" || got.SameAsVictim || got.Via != viaNamed {
		t.Fatalf("write with a planted /proc: via %q, error %q, the victim linked in: %v; want a named temporary file, no error, no victim", got.Via, got.Error, got.SameAsVictim)
	}
	schematest.Validate(t, []byte(got.Content))
}

// TestWriteTerminationRefusesAHardLink: a termination-log path that is
// another name of some other file is refused before anything is cut, and
// that file keeps its contents.
func TestWriteTerminationRefusesAHardLink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "termination-log")
	if err := os.Link(victim, path); err != nil {
		t.Fatal(err)
	}
	for _, create := range []bool{true, false} {
		if err := WriteTermination(path, "abort", create); err == nil || !strings.Contains(err.Error(), "hard link") {
			t.Errorf("WriteTermination to a hard link (create %v): %v, want a refusal that names the hard link", create, err)
		}
	}
	if got := reporttest.ReadFile(t, victim); string(got) != "keep" {
		t.Errorf("the other file was cut or written: %q", got)
	}
}
