package fsroot

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tree builds a directory under t.TempDir from a map of relative path to
// content; a content starting with "->" makes a symbolic link instead.
func tree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if strings.HasSuffix(name, "/") {
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPathNeverLeavesTheRoot(t *testing.T) {
	r := Root("/mnt/image")
	for in, want := range map[string]string{
		"proc/driver/nvidia/version":  "/mnt/image/proc/driver/nvidia/version",
		"/proc/driver/nvidia/version": "/mnt/image/proc/driver/nvidia/version",
		"../../etc/passwd":            "/mnt/image/etc/passwd",
		"/usr/../../../etc/shadow":    "/mnt/image/etc/shadow",
		"a/./b//c/..":                 "/mnt/image/a/b",
		"":                            "/mnt/image",
		"..":                          "/mnt/image",
	} {
		if got := r.Path(in); got != want {
			t.Errorf("Root(%q).Path(%q) = %q, want %q", r, in, got, want)
		}
	}
}

func TestHostRootUsesPathsAsTheyAre(t *testing.T) {
	for _, r := range []Root{"", "/", "//", "/."} {
		if !r.IsHost() {
			t.Errorf("Root(%q).IsHost() = false", r)
		}
		if got := r.Path("proc/version"); got != "/proc/version" {
			t.Errorf("Root(%q).Path = %q", r, got)
		}
		got, err := r.Resolve("../proc/self/../version")
		if err != nil || got != "/proc/version" {
			t.Errorf("Root(%q).Resolve = %q, %v", r, got, err)
		}
	}
	if Root("/tmp").IsHost() {
		t.Error(`Root("/tmp").IsHost() = true`)
	}
}

func TestAbsoluteLinksResolveInsideTheRoot(t *testing.T) {
	// The nvidia/cuda images' chain: /usr/local/cuda -> /etc/alternatives/cuda
	// -> /usr/local/cuda-12.2, all absolute.
	dir := tree(t, map[string]string{
		"usr/local/cuda":                    "->/etc/alternatives/cuda",
		"etc/alternatives/cuda":             "->/usr/local/cuda-12.2",
		"usr/local/cuda-12.2/version.json":  `{"cuda":{"version":"12.2.2"}}`,
		"usr/local/cuda-12.2/compat/lib":    "->../compat",
		"usr/local/cuda-12.2/compat/x.so.1": "x",
	})
	r := Root(dir)
	data, err := r.ReadFile("/usr/local/cuda/version.json")
	if err != nil || !strings.Contains(string(data), "12.2.2") {
		t.Fatalf("ReadFile through absolute links = %q, %v", data, err)
	}
	got, err := r.Resolve("/usr/local/cuda/compat/lib/x.so.1")
	if want := filepath.Join(dir, "usr/local/cuda-12.2/compat/x.so.1"); err != nil || got != want {
		t.Errorf("Resolve = %q, %v; want %q", got, err, want)
	}
	target, err := r.Readlink("/usr/local/cuda")
	if err != nil || target != "/etc/alternatives/cuda" {
		t.Errorf("Readlink = %q, %v", target, err)
	}
	fi, err := r.Lstat("/usr/local/cuda")
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("Lstat of a link = %v, %v; want the link itself", fi, err)
	}
	fi, err = r.Stat("/usr/local/cuda")
	if err != nil || !fi.IsDir() {
		t.Errorf("Stat of a link to a directory = %v, %v", fi, err)
	}
}

func TestLinksCannotEscapeTheRoot(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := tree(t, map[string]string{
		"up":             "->../../../../../../../../..",
		"abs":            "->/",
		"etc/secret":     "image",
		"deep/a/b/c/dot": "->../../../../../../../../etc/secret",
	})
	r := Root(dir)
	for _, p := range []string{
		"up" + outside + "/secret",
		"abs" + outside + "/secret",
		"up/up/up" + outside + "/secret",
	} {
		if data, err := r.ReadFile(p); err == nil {
			t.Errorf("ReadFile(%q) escaped the root: read %q", p, data)
		}
	}
	data, err := r.ReadFile("deep/a/b/c/dot")
	if err != nil || string(data) != "image" {
		t.Errorf("relative link climbing past the top = %q, %v; want the image's /etc/secret", data, err)
	}
}

func TestLinkLoopsFailWithELOOP(t *testing.T) {
	dir := tree(t, map[string]string{"a": "->b", "b": "->/a"})
	_, err := Root(dir).ReadFile("a/x")
	if !errors.Is(err, syscall.ELOOP) {
		t.Errorf("ReadFile through a loop: err = %v, want ELOOP", err)
	}
}

func TestGlobMatchesInAnyComponentAndReturnsRootPaths(t *testing.T) {
	dir := tree(t, map[string]string{
		"proc/driver/nvidia/gpus/0000:3b:00.0/information": "x",
		"proc/driver/nvidia/gpus/0000:1a:00.0/information": "x",
		"proc/driver/nvidia/gpus/0000:5e:00.0/power":       "x",
		"usr/local/cuda": "->/usr/local/cuda-11.8",
		"usr/local/cuda-11.8/targets/x86_64-linux/lib/libcudart.so.11.8.89": "x",
		"usr/local/cuda-11.8/targets/x86_64-linux/lib/libcudart.so.11.0":    "->libcudart.so.11.8.89",
	})
	r := Root(dir)
	got, err := r.Glob("proc/driver/nvidia/gpus/*/information")
	want := []string{
		"/proc/driver/nvidia/gpus/0000:1a:00.0/information",
		"/proc/driver/nvidia/gpus/0000:3b:00.0/information",
	}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Glob gpus = %q, %v; want %q", got, err, want)
	}
	got, err = r.Glob("/usr/local/cuda/targets/*/lib/libcudart.so.*")
	want = []string{
		"/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.11.0",
		"/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.11.8.89",
	}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Glob through a link = %q, %v; want %q", got, err, want)
	}
	if got, err := r.Glob("nothing/*/here"); err != nil || got != nil {
		t.Errorf("Glob with no match = %q, %v", got, err)
	}
	if _, err := r.Glob("proc/["); err == nil {
		t.Error("Glob of a malformed pattern: want an error")
	}
}

func TestMissingCoversNotExistAndNotADirectory(t *testing.T) {
	dir := tree(t, map[string]string{"file": "x"})
	r := Root(dir)
	for _, p := range []string{"absent", "file/below"} {
		_, err := r.ReadFile(p)
		if !Missing(err) {
			t.Errorf("ReadFile(%q): Missing(%v) = false", p, err)
		}
	}
	if Missing(nil) || Missing(errors.New("other")) {
		t.Error("Missing is true for an unrelated error")
	}
}

func TestReadFileMaxRefusesLargeAndSpecialFiles(t *testing.T) {
	dir := tree(t, map[string]string{"small": "1234", "big": strings.Repeat("x", 100)})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := Root(dir)
	if data, err := r.ReadFileMax("small", 4); err != nil || string(data) != "1234" {
		t.Errorf("ReadFileMax(small, 4) = %q, %v", data, err)
	}
	if _, err := r.ReadFileMax("big", 99); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFileMax(big, 99): err = %v, want ErrTooLarge", err)
	}
	if _, err := r.ReadFileMax("fifo", 10); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("ReadFileMax(fifo): err = %v, want a refusal that does not block", err)
	}
	if _, err := r.ReadFileMax("/", 10); err == nil {
		t.Error("ReadFileMax of a directory: want an error")
	}
}

// FuzzPath proves that no argument makes Path or Resolve name a file
// outside the root.
func FuzzPath(f *testing.F) {
	for _, s := range []string{"proc/driver/nvidia/version", "../../etc/passwd", "/a/../..", "..", "", "a//b/./c", "/..//../x"} {
		f.Add(s)
	}
	dir := tree(f, map[string]string{"link": "->/../..", "rel": "->../../../x"})
	r := Root(dir)
	f.Fuzz(func(t *testing.T, p string) {
		for _, got := range []string{r.Path(p), mustResolve(t, r, p)} {
			if got != dir && !strings.HasPrefix(got, dir+"/") {
				t.Fatalf("%q leaves the root %q: %q", p, dir, got)
			}
		}
	})
}

func mustResolve(t *testing.T, r Root, p string) string {
	got, err := r.Resolve(p)
	if errors.Is(err, syscall.ELOOP) {
		return string(r)
	}
	if err != nil {
		t.Fatalf("Resolve(%q): %v", p, err)
	}
	return got
}

// within runs f and fails the test if it has not returned after d: a read
// that blocks (an open(2) of a FIFO waits for a writer) must fail loudly,
// not hang the suite.
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still blocked after %v", d)
	}
}

func TestReadsRefuseAFIFOWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "proc/driver/nvidia/version")
	if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	r := Root(dir)
	reads := map[string]func() error{
		"Open":        func() error { f, err := r.Open("/proc/driver/nvidia/version"); f.Close(); return err },
		"ReadFile":    func() error { _, err := r.ReadFile("/proc/driver/nvidia/version"); return err },
		"ReadFileMax": func() error { _, err := r.ReadFileMax("/proc/driver/nvidia/version", 100); return err },
	}
	for name, read := range reads {
		t.Run(name, func(t *testing.T) {
			var err error
			within(t, 2*time.Second, func() { err = read() })
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), fifo) ||
				!strings.Contains(err.Error(), "not a regular file (a FIFO)") || Missing(err) {
				t.Errorf("err = %v, want %q refused as not a regular file (a FIFO)", err, fifo)
			}
		})
	}
	// A FIFO where a directory belongs is not a directory: ENOTDIR, which
	// gatherers read as "not there".
	t.Run("ReadDir", func(t *testing.T) {
		var err error
		within(t, 2*time.Second, func() { _, err = r.ReadDir("/proc/driver/nvidia/version") })
		if !Missing(err) {
			t.Errorf("ReadDir(FIFO): err = %v, want ENOTDIR", err)
		}
	})
	t.Run("Glob", func(t *testing.T) {
		var got []string
		within(t, 2*time.Second, func() { got, _ = r.Glob("/proc/driver/nvidia/version/*") })
		if len(got) != 0 {
			t.Errorf("Glob under a FIFO = %q", got)
		}
	})
}

func TestReadsRefuseDevicesAndDirectories(t *testing.T) {
	host := Root("/")
	if _, err := host.ReadFile("/dev/null"); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "/dev/null: not a regular file (a character device)") {
		t.Errorf("ReadFile(/dev/null): err = %v", err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Root(dir).ReadFile("d"); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a directory") {
		t.Errorf("ReadFile(directory): err = %v", err)
	}
}

func TestReadDirIsSortedAndReadFileReadsToTheEnd(t *testing.T) {
	dir := tree(t, map[string]string{"d/b": "", "d/a": "", "d/c": "", "f": strings.Repeat("x", 100_000)})
	r := Root(dir)
	entries, err := r.ReadDir("d")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"a", "b", "c"}) {
		t.Errorf("ReadDir = %q, want sorted", names)
	}
	if b, err := r.ReadFile("f"); err != nil || len(b) != 100_000 {
		t.Errorf("ReadFile = %d bytes, %v", len(b), err)
	}
	// procfs files report size 0 and are read to the end all the same.
	if b, err := Root("/").ReadFile("/proc/self/status"); err != nil || !strings.Contains(string(b), "VmPeak") {
		t.Errorf("ReadFile(/proc/self/status) = %d bytes, %v", len(b), err)
	}
}

func TestMissingDirectoryKeepsTheRestAsWritten(t *testing.T) {
	dir := tree(t, map[string]string{"etc/os-release": "x", "usr/lib/link": "->/etc"})
	r := Root(dir)
	for _, tc := range []struct{ path, want string }{
		{"usr/local/cuda/targets/x86_64-linux/lib", "usr/local/cuda/targets/x86_64-linux/lib"},
		{"usr/lib/link/missing/deeper", "etc/missing/deeper"},
		// A ".." after a missing component climbs lexically, as before:
		// the walk goes on component by component.
		{"absent/../usr/lib/link/os-release", "etc/os-release"},
	} {
		got, err := r.Resolve(tc.path)
		if err != nil || got != filepath.Join(dir, tc.want) {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.path, got, err, filepath.Join(dir, tc.want))
		}
	}
}

// A directory of more entries than MaxDirEntries is listed (ReadDir,
// ReadDirNames) up to the
// bound, sorted, with an error that says so; one at the bound is whole.
func TestReadDirStopsAtMaxDirEntries(t *testing.T) {
	dir, err := os.MkdirTemp("/dev/shm", "fsroot-test-")
	if err != nil {
		dir = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	for i := range MaxDirEntries {
		f, err := os.Create(filepath.Join(dir, strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	r := Root(dir)
	if entries, err := r.ReadDir("/"); err != nil || len(entries) != MaxDirEntries {
		t.Fatalf("%d entries, %v; want all %d", len(entries), err, MaxDirEntries)
	}
	if names, err := r.ReadDirNames("/"); err != nil || len(names) != MaxDirEntries {
		t.Fatalf("ReadDirNames: %d names, %v; want all %d", len(names), err, MaxDirEntries)
	}
	for i := range 5 {
		if err := os.WriteFile(filepath.Join(dir, "more"+strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := r.ReadDir("/")
	if !errors.Is(err, ErrTooManyEntries) || !strings.Contains(err.Error(), "the first 32768 read") || len(entries) != MaxDirEntries {
		t.Fatalf("%d entries, %v", len(entries), err)
	}
	if !slices.IsSortedFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }) {
		t.Error("the entries are not sorted")
	}
	names, err := r.ReadDirNames("/")
	if !errors.Is(err, ErrTooManyEntries) || len(names) != MaxDirEntries || !slices.IsSorted(names) {
		t.Fatalf("ReadDirNames: %d names (sorted: %v), %v", len(names), slices.IsSorted(names), err)
	}
}

// LastPath names the last path a Root was asked about, as it is on this
// machine: where a gatherer stood when a deadline passed.
func TestLastPathNamesTheLastPathAsked(t *testing.T) {
	dir := t.TempDir()
	r := Root(dir)
	r.Stat("/usr/lib/libcuda.so.1")
	if got, want := LastPath(), filepath.Join(dir, "usr/lib/libcuda.so.1"); got != want {
		t.Errorf("LastPath() = %q after Stat, want %q", got, want)
	}
	r.ReadDir("etc")
	if got, want := LastPath(), filepath.Join(dir, "etc"); got != want {
		t.Errorf("LastPath() = %q after ReadDir, want %q", got, want)
	}
}

// A path resolve finds missing fails without the call being made, with the
// error the kernel gives that call on the path: the same operation, path
// and errno (ENOENT under a missing directory, ENOTDIR under a file), for
// every method, with and without a link on the way.
func TestMissingPathsFailAsTheKernelWould(t *testing.T) {
	dir := tree(t, map[string]string{"etc/os-release": "x", "usr/lib/link": "->/etc", "usr/lib/dangling": "->/nowhere/at/all"})
	r := Root(dir)
	ops := []struct {
		name    string
		viaRoot func(p string) error
		viaOS   func(host string) error
	}{
		{"Stat", func(p string) error { _, err := r.Stat(p); return err }, func(h string) error { _, err := os.Stat(h); return err }},
		{"Lstat", func(p string) error { _, err := r.Lstat(p); return err }, func(h string) error { _, err := os.Lstat(h); return err }},
		{"Readlink", func(p string) error { _, err := r.Readlink(p); return err }, func(h string) error { _, err := os.Readlink(h); return err }},
		{"Open", func(p string) error { f, err := r.Open(p); f.Close(); return err }, func(h string) error { f, err := os.Open(h); f.Close(); return err }},
		{"ReadDir", func(p string) error { _, err := r.ReadDir(p); return err }, func(h string) error { _, err := os.ReadDir(h); return err }},
	}
	for _, p := range []string{
		"usr/local/cuda/lib64/libcudart.so.12", // a missing directory
		"etc/os-release/deeper",                // a file where a directory belongs
		"usr/lib/link/missing/deeper",          // through a link, then missing
		"usr/lib/link/os-release/deeper",       // through a link, then a file
		"usr/lib/dangling/lib",                 // through a dangling link
		"absent",                               // the last component
	} {
		host, err := r.Resolve(p)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", p, err)
		}
		for _, op := range ops {
			got, want := op.viaRoot(p), op.viaOS(host)
			var gotPE, wantPE *fs.PathError
			if !errors.As(got, &gotPE) || !errors.As(want, &wantPE) || *gotPE != *wantPE {
				t.Errorf("%s(%q) = %v; the kernel says %v", op.name, p, got, want)
			}
		}
	}
}

// ReadDirNamesFunc holds only the names kept, sorted, and says when the
// directory held more entries than it looked at.
func TestReadDirNamesFuncKeepsWhatItIsAskedForWithinItsBound(t *testing.T) {
	files := map[string]string{}
	for i := range 10 {
		files["f"+strconv.Itoa(i)] = ""
	}
	files["x.pth"], files["a.pth"] = "", ""
	r := Root(tree(t, files))
	pth := func(n string) bool { return strings.HasSuffix(n, ".pth") }
	names, err := r.ReadDirNamesFunc("/", 100, pth)
	if err != nil || !slices.Equal(names, []string{"a.pth", "x.pth"}) {
		t.Errorf("ReadDirNamesFunc = %q, %v; want the two .pth files", names, err)
	}
	names, err = r.ReadDirNamesFunc("/", 5, pth)
	if !errors.Is(err, ErrTooManyEntries) || !slices.Equal(names, []string{"a.pth", "x.pth"}) {
		t.Errorf("past its bound: %q, %v; want what it kept and ErrTooManyEntries", names, err)
	}
	if _, err := r.ReadDirNamesFunc("/missing", 5, nil); !Missing(err) {
		t.Errorf("a missing directory: %v", err)
	}
}

// ReadHead reads no more than it is asked for, and a short file whole.
func TestReadHeadReadsAtMostN(t *testing.T) {
	r := Root(tree(t, map[string]string{"script": "#!/usr/bin/python3\nprint()\n", "empty": ""}))
	if b, err := r.ReadHead("/script", 5); err != nil || string(b) != "#!/us" {
		t.Errorf("ReadHead(5) = %q, %v", b, err)
	}
	if b, err := r.ReadHead("/script", 256); err != nil || string(b) != "#!/usr/bin/python3\nprint()\n" {
		t.Errorf("ReadHead(256) = %q, %v", b, err)
	}
	if b, err := r.ReadHead("/empty", 256); err != nil || len(b) != 0 {
		t.Errorf("ReadHead of an empty file = %q, %v", b, err)
	}
	if _, err := r.ReadHead("/missing", 256); !Missing(err) {
		t.Errorf("ReadHead of a missing file: %v", err)
	}
}

// The kind predicates follow links inside the root, and RealPath names
// where the links lead as a path inside it.
func TestKindsAndRealPathFollowLinksInsideTheRoot(t *testing.T) {
	r := Root(tree(t, map[string]string{
		"opt/venv/bin/python3":  "->/usr/bin/python3.11",
		"usr/bin/python3.11":    "elf",
		"usr/lib/python3/os.py": "",
		"lib":                   "->usr/lib",
	}))
	for _, tc := range []struct {
		p                 string
		file, dir, exists bool
		real              string
	}{
		{"/opt/venv/bin/python3", true, false, true, "/usr/bin/python3.11"},
		{"/lib/python3", false, true, true, "/usr/lib/python3"},
		{"/missing", false, false, false, "/missing"},
	} {
		if r.IsFile(tc.p) != tc.file || r.IsDir(tc.p) != tc.dir || r.Exists(tc.p) != tc.exists {
			t.Errorf("%s: IsFile %v IsDir %v Exists %v", tc.p, r.IsFile(tc.p), r.IsDir(tc.p), r.Exists(tc.p))
		}
		if got := r.RealPath(tc.p); got != tc.real {
			t.Errorf("RealPath(%s) = %s, want %s", tc.p, got, tc.real)
		}
	}
}

// The prefix listing reads what the kernel's getdents returns, as
// ReadDirNames does, and keeps only the names it asks for.
func TestReadDirNamesPrefixKeepsWhatReadDirNamesWould(t *testing.T) {
	dir := t.TempDir()
	for i := range 3000 {
		name := fmt.Sprintf("prog%04d", i)
		if i%1000 == 0 {
			name = fmt.Sprintf("python3.%d", 10+i/1000)
		}
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Root(dir).ReadDirNamesPrefix("/", MaxDirEntries, "python3.")
	if err != nil || !slices.Equal(got, []string{"python3.10", "python3.11", "python3.12"}) {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := Root(dir).ReadDirNamesPrefix("/", 100, "python3."); !errors.Is(err, ErrTooManyEntries) {
		t.Errorf("past its bound: %v", err)
	}
}

func FuzzDirentNames(f *testing.F) {
	// A real getdents64 buffer of a directory holding "a" and "python3.12".
	dir := f.TempDir()
	for _, n := range []string{"a", "python3.12"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	d, err := os.Open(dir)
	if err != nil {
		f.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := syscall.ReadDirent(int(d.Fd()), buf)
	d.Close()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(buf[:n])
	f.Fuzz(func(t *testing.T, b []byte) {
		count := direntNames(b, func(name []byte) {
			if bytes.IndexByte(name, 0) >= 0 {
				t.Errorf("name %q holds a NUL", name)
			}
		})
		if count > len(b)/19 {
			t.Errorf("%d entries in %d bytes", count, len(b))
		}
	})
}
