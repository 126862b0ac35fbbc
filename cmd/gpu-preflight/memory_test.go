package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin"
	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin/fatbintest"
	"github.com/gpu-preflight/gpu-preflight/preflight/ldso/ldsotest"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/store"
)

// maxPeakRSS is the most memory any one run may use on a hostile or merely
// large input (issue 13, item 4). An ordinary run peaks at about 10 MiB.
const maxPeakRSS = 30 << 20

// measured is one shim run in a child process with its peak RSS.
type measured struct {
	code           int
	stdout, stderr string
	peakRSS        int64 // bytes
	elapsed        time.Duration
}

// measureEnv names the file where the test binary, started as a measurer
// (see measureChild), writes the peak RSS of the command it ran.
const measureEnv = "GPU_PREFLIGHT_TEST_MEASURE"

// measureChild runs os.Args[1:] and writes its peak RSS in KiB to the file
// measureEnv names, exiting with its exit code. The test binary starts
// itself this way because ru_maxrss counts a process's memory from before
// its exec too: forked from the test process (large, after building a
// hostile tree), the shim would be charged the test's memory. This process
// is small, and the shim's figure never less than the truth.
func measureChild(out string) {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(125)
	}
	kib := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	if err := os.WriteFile(out, []byte(strconv.FormatInt(kib, 10)), 0o644); err != nil {
		os.Exit(125)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}

// runMeasured runs the built shim with env and args under a 2 GiB address
// space limit (so a run that would read gigabytes fails here instead of
// taking the machine's memory) and reports its peak resident set.
func runMeasured(t *testing.T, env []string, args ...string) measured {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rss := filepath.Join(t.TempDir(), "maxrss")
	cmd := exec.Command("/bin/sh", append([]string{"-c", `ulimit -v 2097152; exec "$0" "$@"`, self, shimPath}, args...)...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "PREFLIGHT_LOG_FORMAT=json", "PREFLIGHT_TERMINATION_LOG=",
		"PREFLIGHT_PROVENANCE_DIR=" + t.TempDir(), measureEnv + "=" + rss}, env...)
	return measureRun(t, cmd, rss)
}

// measureRun runs cmd, whose measuring parent (measureChild) writes the
// peak RSS to the file rss, and returns how it went. A run still going after
// a minute fails the test: it would be gpu-preflight hanging.
func measureRun(t *testing.T, cmd *exec.Cmd, rss string) measured {
	t.Helper()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running after a minute; stderr:\n%s", stderr.String())
	}
	m := measured{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		m.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(rss)
	if err != nil {
		t.Fatalf("the measurer wrote no peak RSS (exit %d): %v\n%s", m.code, err, m.stderr)
	}
	kib, _ := strconv.ParseInt(string(b), 10, 64)
	m.peakRSS = kib << 10
	return m
}

// wantBounded checks the bar every hostile case must clear: under
// maxPeakRSS, no Go stack trace, and an exit code that is a decision, not a
// crash (2 is the Go runtime's for a fatal error or panic).
func wantBounded(t *testing.T, m measured, codes ...int) {
	t.Helper()
	t.Logf("peak RSS %.1f MiB, %v, exit %d", float64(m.peakRSS)/(1<<20), m.elapsed.Round(time.Millisecond), m.code)
	if m.peakRSS > maxPeakRSS {
		t.Errorf("peak RSS %.1f MiB, over the %d MiB bar", float64(m.peakRSS)/(1<<20), maxPeakRSS>>20)
	}
	for _, trace := range []string{"goroutine ", "panic:", "fatal error:", "runtime: out of memory"} {
		if strings.Contains(m.stderr, trace) {
			t.Fatalf("the run crashed (%q in stderr):\n%.3000s", trace, m.stderr)
		}
	}
	for _, c := range codes {
		if m.code == c {
			return
		}
	}
	t.Errorf("exit %d, want one of %v; stderr:\n%.3000s", m.code, codes, m.stderr)
}

// sitePackages is where the hostile image trees put their frameworks.
const sitePackages = "usr/local/lib/python3.10/dist-packages"

// hugeSectionNamesELF writes an ELF at path whose section-name table
// claims 6 GiB, in a sparse file that long, so reading what it claims
// would succeed and cost 6 GiB.
func hugeSectionNamesELF(t *testing.T, path string) {
	t.Helper()
	if err := fatbintest.WriteSO(path, []fatbintest.Entry{{Kind: fatbintest.Cubin, SM: 80}}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	shoff, shentsize, shstrndx := le.Uint64(data[0x28:]), uint64(le.Uint16(data[0x3a:])), uint64(le.Uint16(data[0x3e:]))
	hdr := shoff + shstrndx*shentsize
	le.PutUint64(data[hdr+0x18:], 4096)  // sh_offset
	le.PutUint64(data[hdr+0x20:], 6<<30) // sh_size
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 6<<30+8192); err != nil {
		t.Fatal(err)
	}
}

// TestHostileInputsStayBounded runs each hostile or merely large input of
// issue 13 item 4 and holds it to maxPeakRSS without a stack trace.
func TestHostileInputsStayBounded(t *testing.T) {
	t.Run("ELFSectionNames6GiB", func(t *testing.T) {
		root := t.TempDir()
		lib := filepath.Join(root, sitePackages, "torch/lib/libtorch_cuda.so")
		mkdirs(t, filepath.Dir(lib), filepath.Join(root, sitePackages, "torch-2.3.0+cu121.dist-info"))
		hugeSectionNamesELF(t, lib)
		// Section names are read by offset, a window at a time, so the
		// claim costs nothing: the names read there are empty, and the
		// library has no fatbin section by name.
		m := runMeasured(t, []string{"PREFLIGHT_ROOT=" + root}, "check", "--json")
		wantBounded(t, m, 0)
		if strings.Contains(m.stdout, "sm_80") {
			t.Errorf("kernels were read from a section the names table does not name:\n%.2000s", m.stdout)
		}
	})
	t.Run("Manifest8GiB", func(t *testing.T) {
		root := t.TempDir()
		manifest := filepath.Join(root, "etc/gpu-preflight/image.json")
		mkdirs(t, filepath.Dir(manifest))
		if err := os.WriteFile(manifest, []byte(`{"schemaVersion": 1, "pad": "`), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(manifest, 8<<30); err != nil {
			t.Fatal(err)
		}
		m := runMeasured(t, []string{"PREFLIGHT_ROOT=" + root}, "check", "--json")
		wantBounded(t, m, 0)
		if !strings.Contains(m.stderr, "image.json") || !strings.Contains(m.stderr, "larger than the limit") {
			t.Errorf("no warning says the manifest is too large:\n%.3000s", m.stderr)
		}
	})
	t.Run("DiffDirWithFIFOAndDevZero", func(t *testing.T) {
		dir := recordsDir(t, 2)
		if err := syscall.Mkfifo(filepath.Join(dir, "99990101T000000.000000000Z-fifo.json"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/dev/zero", filepath.Join(dir, "99990102T000000.000000000Z-zero.json")); err != nil {
			t.Fatal(err)
		}
		m := runMeasured(t, nil, "diff", dir)
		wantBounded(t, m, exitDiffSame, exitDiffChanged)
		if !strings.Contains(m.stderr, "not a regular file") {
			t.Errorf("the FIFO and the device were not skipped as such:\n%s", m.stderr)
		}
		if m.elapsed > 5*time.Second {
			t.Errorf("diff took %v", m.elapsed)
		}
	})
	t.Run("DiffFIFOOperand", func(t *testing.T) {
		dir := t.TempDir()
		fifo := filepath.Join(dir, "a.json")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		m := runMeasured(t, nil, "diff", fifo, "/dev/zero")
		wantBounded(t, m, exitUsage)
	})
	t.Run("Diff100000Records", func(t *testing.T) {
		dir := recordsDir(t, 100000)
		m := runMeasured(t, nil, "diff", dir)
		wantBounded(t, m, exitDiffSame, exitDiffChanged)
		if !strings.Contains(m.stdout, "9999-01-01T00:00:00") || !strings.Contains(m.stdout, "9999-01-01T00:00:01") {
			t.Errorf("diff did not compare the two newest records:\n%s", m.stdout)
		}
	})
	t.Run("Fatbin262000Entries", func(t *testing.T) {
		root := bigTempDir(t)
		lib := filepath.Join(root, sitePackages, "torch/lib/libtorch_cuda.so")
		mkdirs(t, filepath.Dir(lib), filepath.Join(root, sitePackages, "torch-2.3.0+cu121.dist-info"))
		entries := make([]fatbintest.Entry, 262000)
		for i := range entries {
			entries[i] = fatbintest.Entry{Kind: fatbintest.Cubin, SM: []int{70, 80, 86, 90}[i%4]}
		}
		if err := fatbintest.WriteSO(lib, entries); err != nil {
			t.Fatal(err)
		}
		m := runMeasured(t, []string{"PREFLIGHT_ROOT=" + root}, "check", "--json")
		wantBounded(t, m, 0)
		if !strings.Contains(m.stdout, "sm_90") {
			t.Errorf("the record does not list the library's sm_90 kernels:\n%.2000s", m.stdout)
		}
	})
	t.Run("DistInfo50000", func(t *testing.T) {
		root := bigTempDir(t)
		sp := filepath.Join(root, sitePackages)
		mkdirs(t, sp)
		for i := 0; i < 50000; i++ {
			if err := os.Mkdir(filepath.Join(sp, fmt.Sprintf("pkg%05d-1.0.dist-info", i)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		mkdirs(t, filepath.Join(sp, "torch-2.3.0+cu121.dist-info"))
		m := runMeasured(t, []string{"PREFLIGHT_ROOT=" + root}, "check", "--json")
		wantBounded(t, m, 0)
	})
	t.Run("Require32x1000On16GPUs", func(t *testing.T) {
		root := driverRoot(t, "550.54.15")
		for i := 0; i < 16; i++ {
			dir := filepath.Join(root, fmt.Sprintf("proc/driver/nvidia/gpus/0000:%02x:00.0", i+1))
			mkdirs(t, dir)
			info := fmt.Sprintf("Model: \t\t NVIDIA H100 80GB HBM3\nGPU UUID: \t GPU-00000000-0000-0000-0000-%012d\nBus Location: \t 0000:%02x:00.0\n", i, i+1)
			if err := os.WriteFile(filepath.Join(dir, "information"), []byte(info), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		env := []string{"PREFLIGHT_ROOT=" + root}
		for v := 0; v < 32; v++ {
			var terms []string
			for i := 0; i < 1000; i++ {
				terms = append(terms, fmt.Sprintf("brand=b%d,driver>=%d", v*1000+i, 470+i%100))
			}
			env = append(env, fmt.Sprintf("NVIDIA_REQUIRE_V%02d=%s", v, strings.Join(terms, " ")))
		}
		m := runMeasured(t, env, "check", "--json")
		wantBounded(t, m, 0, 78)
		m = runMeasured(t, env, "explain")
		wantBounded(t, m, 0, 1)
	})
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// bigTempDir is a temporary directory for trees of tens of thousands of
// entries: on the memory file system when there is one, where creating them
// takes a second rather than a minute on a busy disk.
func bigTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "gpu-preflight-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// recordsDir writes n small records named as gpu-preflight names them; the
// newest two start in the year 9999.
func recordsDir(t *testing.T, n int) string {
	t.Helper()
	dir := bigTempDir(t)
	const idMark, timeMark = "00000000000000000000000000000000", "2026-01-01T00:00:00.000000000Z"
	tmpl, err := store.Marshal(report.New(report.Inputs{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), RunID: idMark,
		Decision: decision.Decision{Policy: "fail", Action: decision.Exec}}))
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		at := base.Add(time.Duration(i) * time.Second)
		if i >= n-2 {
			at = time.Date(9999, 1, 1, 0, 0, i-(n-2), 0, time.UTC)
		}
		id := fmt.Sprintf("%032x", i)
		data := strings.Replace(strings.Replace(string(tmpl), idMark, id, 1), timeMark, at.Format(report.TimeLayout), 1)
		name := at.Format(store.FileTimeLayout) + "-" + id + ".json"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// torchRoot is an image root holding a CUDA torch whose kernel library is
// lib (written by the caller), so that the scan reads its fatbins and the
// loader model its dynamic section.
func torchRoot(t *testing.T, write func(lib string)) string {
	t.Helper()
	root := bigTempDir(t)
	lib := filepath.Join(root, sitePackages, "torch/lib/libtorch_cuda.so")
	mkdirs(t, filepath.Dir(lib), filepath.Join(root, sitePackages, "torch-2.3.0+cu121.dist-info"), filepath.Join(root, "etc"))
	write(lib)
	return root
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// needing is a dynamic object whose n DT_NEEDED entries point into strtab
// at offsets spread evenly over it.
func needing(n int, strtab []byte) []byte {
	dyn := make([]ldsotest.Dyn, n)
	for i := range dyn {
		dyn[i] = ldsotest.Dyn{Tag: elf.DT_NEEDED, Val: uint64(i * len(strtab) / n)}
	}
	return ldsotest.DynamicObject(dyn, strtab)
}

// TestLoaderAndManifestBombsStayBounded runs the job from a root holding
// each hostile input of issue 24 ("Why" 4) under the 2 GiB address-space
// limit, and holds it to maxPeakRSS: the job runs, and a warning says what
// was cut or refused. check --json and bake are held to the same bar.
func TestLoaderAndManifestBombsStayBounded(t *testing.T) {
	oneMiBNoNUL := bytes.Repeat([]byte("x"), 1<<20)
	oneMiBOneNUL := append(bytes.Repeat([]byte("x"), 1<<20-1), 0)
	kernelsOf := func(lib string, extra int) {
		secs := make([]fatbintest.Section, extra)
		for i := range secs {
			secs[i] = fatbintest.Section{Name: ".s"}
		}
		so := fatbintest.FatbinSection(fatbin.SectionName, fatbintest.Containers([]fatbintest.Entry{{Kind: fatbintest.Cubin, SM: 80}})...)
		if err := fatbintest.WriteELF(lib, append(secs, so)...); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		root func(t *testing.T) string
		want string // in stderr
		// kernels: the record lists the library's sm_80 kernels.
		kernels bool
	}{
		{"4000 DT_NEEDED into a NUL-less 1 MiB .dynstr", func(t *testing.T) string {
			return torchRoot(t, func(lib string) { writeFile(t, lib, needing(4000, oneMiBNoNUL)) })
		}, "4000 DT_NEEDED entries, more than the 512 read", false},
		{"4000 DT_NEEDED into a 1 MiB .dynstr with one NUL at its end", func(t *testing.T) string {
			return torchRoot(t, func(lib string) { writeFile(t, lib, needing(4000, oneMiBOneNUL)) })
		}, "is longer than 4096 bytes", false},
		{"700 DT_NEEDED naming one 190 KB string", func(t *testing.T) string {
			str := append(bytes.Repeat([]byte("y"), 190_000), 0)
			return torchRoot(t, func(lib string) { writeFile(t, lib, needing(700, str[:len(str):len(str)])) })
		}, "700 DT_NEEDED entries, more than the 512 read", false},
		{"65 535 sections", func(t *testing.T) string {
			return torchRoot(t, func(lib string) { kernelsOf(lib, 65535-3) })
		}, "", true},
		{"ld.so.cache old format 1 MiB of 87 000 entries naming one string", func(t *testing.T) string {
			return cacheRoot(t, ldsotest.CacheOld, 1<<20)
		}, "87000 entries, more than the 32768 read", false},
		{"ld.so.cache new format 1 MiB of 87 000 entries naming one string", func(t *testing.T) string {
			return cacheRoot(t, ldsotest.CacheNew, 1<<20)
		}, "87000 entries, more than the 32768 read", false},
		{"ld.so.cache old format 16 MiB of 87 000 entries naming one string", func(t *testing.T) string {
			return cacheRoot(t, ldsotest.CacheOld, 16<<20)
		}, "87000 entries, more than the 32768 read", false},
		{"ld.so.cache new format 16 MiB of 87 000 entries naming one string", func(t *testing.T) string {
			return cacheRoot(t, ldsotest.CacheNew, 16<<20)
		}, "87000 entries, more than the 32768 read", false},
		{"image.json of a 4 MiB map", func(t *testing.T) string {
			return manifestRoot(t, func(b *bytes.Buffer) {
				b.WriteString(`{"schemaVersion": 2, "env": {`)
				for i := 0; b.Len() < 4<<20-64; i++ {
					fmt.Fprintf(b, `"%x":"",`, i)
				}
				b.WriteString(`"z":""}}`)
			})
		}, "more than 200000 values", false},
		{"image.json nested 4 MiB deep", func(t *testing.T) string {
			return manifestRoot(t, func(b *bytes.Buffer) { b.WriteString(strings.Repeat("[", 4<<20-1)) })
		}, "nested more than 32 deep", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tc.root(t)
			env := []string{"PREFLIGHT_ROOT=" + root}
			m := runMeasured(t, env, "--", "/bin/echo", "job ran")
			wantBounded(t, m, 0)
			if !strings.Contains(m.stdout, "job ran") {
				t.Errorf("the job did not run: stdout %q", m.stdout)
			}
			if !strings.Contains(m.stderr, tc.want) {
				t.Errorf("no warning says %q:\n%.3000s", tc.want, m.stderr)
			}
			m = runMeasured(t, env, "check", "--json")
			wantBounded(t, m, 0)
			if tc.kernels && !strings.Contains(m.stdout, "sm_80") {
				t.Errorf("the record does not list the library's sm_80 kernels:\n%.2000s", m.stdout)
			}
			m = runMeasured(t, env, "bake", "--out", filepath.Join(t.TempDir(), "image.json"))
			wantBounded(t, m, 0)
		})
	}
}

// cacheRoot is torchRoot with a kernel library that needs libcudart.so.12,
// which only the cache could name, and an /etc/ld.so.cache of the format
// and size given whose 87 000 entries all name one 4 000-byte string.
func cacheRoot(t *testing.T, format string, size int) string {
	return torchRoot(t, func(lib string) {
		writeFile(t, lib, ldsotest.DynamicObject([]ldsotest.Dyn{{Tag: elf.DT_NEEDED, Val: 1}}, []byte("\x00libcudart.so.12\x00")))
		writeFile(t, filepath.Join(filepath.Dir(lib), "../../../../../../../etc/ld.so.cache"), ldsotest.OneStringCache(format, 87000, 4000, size))
	})
}

// manifestRoot is torchRoot with a plain library and the manifest that
// write writes at the default path.
func manifestRoot(t *testing.T, write func(*bytes.Buffer)) string {
	root := torchRoot(t, func(lib string) { writeFile(t, lib, needing(1, []byte("\x00libc.so.6\x00"))) })
	var b bytes.Buffer
	write(&b)
	mkdirs(t, filepath.Join(root, "etc/gpu-preflight"))
	writeFile(t, filepath.Join(root, "etc/gpu-preflight/image.json"), b.Bytes())
	return root
}

// emptyFiles creates n empty files named prefix0000000... in dir.
func emptyFiles(t *testing.T, dir, prefix string, n int) {
	t.Helper()
	mkdirs(t, dir)
	for i := range n {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s%07d", prefix, i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

// TestHugeListingsStayBounded: a directory the scan lists holds 200 000
// entries (about 58 MiB when it was read whole), or the directories of
// LD_LIBRARY_PATH hold 30 000 each; the job runs under maxPeakRSS, and a
// warning says which listing was cut or refused.
func TestHugeListingsStayBounded(t *testing.T) {
	t.Run("SitePackages200000", func(t *testing.T) {
		root := torchRoot(t, func(lib string) { writeFile(t, lib, needing(1, []byte("\x00libc.so.6\x00"))) })
		emptyFiles(t, filepath.Join(root, sitePackages), "module_with_a_long_name_", 200_000)
		m := runMeasured(t, []string{"PREFLIGHT_ROOT=" + root}, "--", "/bin/echo", "job ran")
		wantBounded(t, m, 0)
		if !strings.Contains(m.stdout, "job ran") {
			t.Errorf("the job did not run: stdout %q", m.stdout)
		}
		if !strings.Contains(m.stderr, "more directory entries than gpu-preflight lists: the first 32768 read") {
			t.Errorf("no warning says the listing was cut:\n%.3000s", m.stderr)
		}
	})
	t.Run("LibraryPath4x30000", func(t *testing.T) {
		root := torchRoot(t, func(lib string) {
			writeFile(t, lib, ldsotest.DynamicObject([]ldsotest.Dyn{{Tag: elf.DT_NEEDED, Val: 1}}, []byte("\x00libcudart.so.12\x00")))
		})
		var dirs []string
		for i := range 4 {
			d := fmt.Sprintf("/opt/lib%d", i)
			emptyFiles(t, filepath.Join(root, d), "libsomething.so.", 30_000)
			dirs = append(dirs, d)
		}
		m := runMeasured(t, []string{"PREFLIGHT_ROOT=" + root, "LD_LIBRARY_PATH=" + strings.Join(dirs, ":")}, "--", "/bin/echo", "job ran")
		wantBounded(t, m, 0)
		if !strings.Contains(m.stdout, "job ran") {
			t.Errorf("the job did not run: stdout %q", m.stdout)
		}
		if !strings.Contains(m.stderr, "directory entries, its bound: /opt/lib3 and every directory after it are not listed") {
			t.Errorf("no warning says the listings were refused:\n%.3000s", m.stderr)
		}
	})
}
