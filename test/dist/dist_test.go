//go:build dist

// Package dist tests the release build (make dist, mk/dist.mk): that it
// is byte-reproducible from two folders, that a user without root builds it
// from a fresh clone with `make run` as the first command, and that the
// linux/arm64 binary works, run here under qemu-user-static against
// Debian's real arm64 libnvidia-ml1 and the fake NVML compiled for arm64.
// make test-dist builds what it needs first; a missing prerequisite fails,
// it never skips.
package dist

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

func must(t *testing.T, r harness.Result, what string) harness.Result {
	t.Helper()
	if r.Code != 0 {
		t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", what, r.Code, r.Stdout, r.Stderr)
	}
	return r
}

// nonRoot is the user the second build runs as.
const nonRoot = "nobody"

// TestDistIsReproducibleFromTwoFolders clones HEAD twice. The first clone
// runs `make dist` as this user, with the checkout's sysroots and Go
// caches; the second, owned by nobody, runs `make run` as its very first
// command and then `make dist`, with its own HOME, Go caches and sysroots
// (apt-get download as nobody; kept under the checkout's .cache/dist-nobody
// so a warm run stays fast). Both dist/ folders must be byte-identical, and
// their SHA256SUMS must hold.
func TestDistIsReproducibleFromTwoFolders(t *testing.T) {
	src := harness.Root(t)
	head := strings.TrimSpace(must(t, harness.Run(t, time.Minute, src, os.Environ(), "git", "rev-parse", "HEAD"), "git rev-parse").Stdout)
	// Not t.TempDir: its parent is private to this user, and nobody must
	// reach the second clone.
	base, err := os.MkdirTemp("", "gpu-preflight-dist-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	lap := func(what string) { t.Logf("%s: %v", what, time.Since(start).Round(100*time.Millisecond)) }
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, dir := range []string{a, b} {
		must(t, harness.Run(t, 5*time.Minute, base, os.Environ(), "git", "clone", "-q", "--no-local", src, dir), "git clone")
		must(t, harness.Run(t, time.Minute, dir, os.Environ(), "git", "checkout", "-q", head), "git checkout")
	}

	// a: this user, the checkout's sysroots and Go caches.
	envA := append(os.Environ(), "CACHE="+filepath.Join(src, ".cache"))
	must(t, harness.Run(t, 20*time.Minute, a, envA, "make", "dist"), "make dist in "+a)
	lap("clones and make dist in a")

	// b: nobody, from nothing but the clone (and persistent caches).
	home := filepath.Join(src, ".cache", "dist-nobody")
	for _, d := range []string{home, filepath.Join(home, "cache"), filepath.Join(home, "gocache"), filepath.Join(home, "gomodcache")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must(t, harness.Run(t, time.Minute, base, os.Environ(), "chown", "-R", nonRoot, b, home), "chown")
	goroot := strings.TrimSpace(must(t, harness.Run(t, time.Minute, src, os.Environ(), "go", "env", "GOROOT"), "go env").Stdout)
	envB := []string{"PATH=" + filepath.Join(goroot, "bin") + ":/usr/bin:/bin", "HOME=" + home, "CACHE=" + filepath.Join(home, "cache"),
		"GOCACHE=" + filepath.Join(home, "gocache"), "GOMODCACHE=" + filepath.Join(home, "gomodcache"), "GOFLAGS=-modcacherw"}
	asNobody := func(args ...string) harness.Result {
		return harness.Run(t, 20*time.Minute, b, nil, "runuser", append([]string{"-u", nonRoot, "--", "env", "-i"}, append(envB, args...)...)...)
	}
	if id := asNobody("id", "-u"); strings.TrimSpace(id.Stdout) == "0" {
		t.Fatalf("runuser -u %s gave uid 0", nonRoot)
	}
	first := asNobody("make", "run")
	if first.Code != 0 {
		t.Fatalf("make run as the first command of a fresh clone, as %s: exit %d\nstdout:\n%s\nstderr:\n%s", nonRoot, first.Code, first.Stdout, first.Stderr)
	}
	if v := asNobody("bin/gpu-preflight", "version"); !strings.Contains(v.Stdout, "NVML probe embedded)") {
		t.Errorf("the shim make run built as %s says %q", nonRoot, v.Stdout)
	}
	lap("make run as nobody in b")
	must(t, asNobody("make", "dist"), "make dist as "+nonRoot)
	lap("make dist as nobody in b")

	names := []string{"gpu-preflight-linux-amd64", "gpu-preflight-linux-arm64", "SHA256SUMS"}
	for _, n := range names {
		da, err := os.ReadFile(filepath.Join(a, "dist", n))
		if err != nil {
			t.Fatal(err)
		}
		db, err := os.ReadFile(filepath.Join(b, "dist", n))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(da, db) {
			t.Errorf("dist/%s differs between %s (%d bytes) and %s (%d bytes)", n, a, len(da), b, len(db))
		}
	}
	must(t, harness.Run(t, time.Minute, filepath.Join(b, "dist"), os.Environ(), "sha256sum", "-c", "SHA256SUMS"), "sha256sum -c")
	sums, _ := os.ReadFile(filepath.Join(a, "dist", "SHA256SUMS"))
	t.Logf("dist/SHA256SUMS from both folders:\n%s", sums)
}

// dist returns the checkout's own release binary for arch (make test-dist
// runs make dist first).
func dist(t *testing.T, arch string) string {
	t.Helper()
	p := filepath.Join(harness.Root(t), "dist", "gpu-preflight-linux-"+arch)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%v: run the suite with 'make test-dist', which runs make dist", err)
	}
	return p
}

// TestVersionSaysArchAndProbe: each release binary names its architecture
// and carries the probe (the arm64 one runs under qemu through binfmt_misc).
func TestVersionSaysArchAndProbe(t *testing.T) {
	for _, arch := range []string{"amd64", "arm64"} {
		r := must(t, harness.Run(t, time.Minute, t.TempDir(), nil, dist(t, arch), "version"), arch+" version")
		if !strings.Contains(r.Stdout, "linux/"+arch+", NVML probe embedded)") {
			t.Errorf("%s: version says %q", arch, r.Stdout)
		}
		f, err := elf.Open(dist(t, arch))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Errorf("%s: a %v program header: not static", arch, p.Type)
			}
		}
		if f.Machine != want {
			t.Errorf("%s: ELF machine %v", arch, f.Machine)
		}
		f.Close()
	}
}

// TestArm64ProbeNeedsAtMostGLIBC228 reads the arm64 probe's version needs.
func TestArm64ProbeNeedsAtMostGLIBC228(t *testing.T) {
	f, err := elf.Open(filepath.Join(harness.Root(t), "bin", "linux-arm64", "gpu-preflight-nvml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 {
		t.Fatalf("machine %v", f.Machine)
	}
	syms, err := f.ImportedSymbols()
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^GLIBC_(\d+)\.(\d+)`)
	highest, seen := [2]int{}, 0
	for _, s := range syms {
		m := re.FindStringSubmatch(s.Version)
		if m == nil {
			continue
		}
		seen++
		maj, _ := strconv.Atoi(m[1])
		minor, _ := strconv.Atoi(m[2])
		if maj > highest[0] || maj == highest[0] && minor > highest[1] {
			highest = [2]int{maj, minor}
		}
	}
	t.Logf("highest glibc version the arm64 probe needs: GLIBC_%d.%d (%d versioned imports)", highest[0], highest[1], seen)
	if seen == 0 || highest[0] != 2 || highest[1] > 28 {
		t.Errorf("the arm64 probe needs GLIBC_%d.%d (%d versioned imports); want at most 2.28", highest[0], highest[1], seen)
	}
}

// arm64Root is the glibc the arm64 programs run on under qemu: Debian's
// libc6-arm64-cross (bookworm's glibc 2.36, a newer one than the probe was
// linked against), installed with gcc-aarch64-linux-gnu.
const arm64Root = "/usr/aarch64-linux-gnu"

// checkArm64 runs the arm64 shim's `check --json` with NVML library lib and
// returns the record it printed.
func checkArm64(t *testing.T, lib string, extra ...string) map[string]any {
	t.Helper()
	env := append([]string{"PATH=/usr/bin:/bin", "QEMU_LD_PREFIX=" + arm64Root, "PREFLIGHT_NVML_LIBRARY=" + lib,
		"PREFLIGHT_PROVENANCE_DIR=off", "PREFLIGHT_LOG_FORMAT=json", "PREFLIGHT_ROOT=" + t.TempDir()}, extra...)
	r := harness.Run(t, 2*time.Minute, t.TempDir(), env, dist(t, "arm64"), "check", "--json")
	schematest.Validate(t, []byte(r.Stdout))
	var rec map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &rec); err != nil {
		t.Fatalf("check --json printed no record (exit %d): %v\n%s", r.Code, err, r.Stderr)
	}
	return rec
}

// get walks a decoded record: get(rec, "host", "nvml", "outcome").
var get = harness.Field

// TestArm64OnDebianLibnvidiaML: the arm64 shim under qemu starts its
// embedded arm64 probe from a memfd, which loads Debian's real arm64
// libnvidia-ml1 and reports "Driver Not Loaded" (there is no GPU here).
func TestArm64OnDebianLibnvidiaML(t *testing.T) {
	r := must(t, harness.Run(t, 10*time.Minute, harness.Root(t), os.Environ(), "bash", "scripts/nvidia-libs.sh", filepath.Join(harness.Root(t), ".cache", "nvidia-arm64"), "arm64"), "nvidia-libs.sh arm64")
	lib := strings.TrimSpace(r.Stdout)
	rec := checkArm64(t, lib)
	nvml := get(rec, "host", "nvml")
	if get(nvml, "outcome") != "driver-not-loaded" || get(nvml, "error") != "Driver Not Loaded" || get(nvml, "via") != "memfd" {
		t.Errorf("host.nvml = %v, want driver-not-loaded from the memfd probe", nvml)
	}
}

// TestArm64OnFakeNVML: the same with the fake NVML cross-compiled for
// arm64, playing 8 H100s on driver 550.54.15.
func TestArm64OnFakeNVML(t *testing.T) {
	dir := t.TempDir()
	lib, err := fakenvml.BuildWith(dir, "aarch64-linux-gnu-gcc")
	if err != nil {
		t.Fatal(err)
	}
	scenario, err := fakenvml.H100x8("550.54.15", 12040).Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec := checkArm64(t, lib, fakenvml.EnvScenario+"="+scenario)
	if get(rec, "host", "driver", "version") != "550.54.15" || get(rec, "host", "driver", "source") != "nvml-memfd" {
		t.Errorf("host.driver = %v, want 550.54.15 from the embedded probe", get(rec, "host", "driver"))
	}
	if gpus, _ := get(rec, "host", "gpus").([]any); len(gpus) != 8 || get(gpus[0], "computeCapability") != "9.0" {
		t.Errorf("host.gpus = %v, want 8 H100s (9.0)", get(rec, "host", "gpus"))
	}
}

// TestInstallRunsWordForWord runs the README's install commands (between
// its install markers) in this checkout, as a newcomer's shell would.
func TestInstallRunsWordForWord(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(harness.Root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- install -->")
	block, _, ok2 := strings.Cut(rest, "<!-- /install -->")
	if !ok || !ok2 {
		t.Fatal("README.md has no <!-- install --> ... <!-- /install --> block")
	}
	var cmds []string
	in := false
	for _, line := range strings.Split(block, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		if line = strings.TrimSpace(line); in && line != "" {
			cmds = append(cmds, line)
		}
	}
	for _, want := range []string{"make build", "make dist"} {
		if !slices.Contains(cmds, want) {
			t.Errorf("the install block lacks %q (it has %q)", want, cmds)
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES":
			continue // a newcomer's shell is not inside make
		}
		env = append(env, kv)
	}
	for _, c := range cmds {
		r := harness.Run(t, 20*time.Minute, harness.Root(t), env, "bash", "-c", c)
		if r.Code != 0 {
			t.Errorf("%q exits %d\nstdout:\n%s\nstderr:\n%s", c, r.Code, r.Stdout, r.Stderr)
		}
		if strings.HasSuffix(c, " version") && !strings.Contains(r.Stdout, "NVML probe embedded)") {
			t.Errorf("%q printed %q", c, r.Stdout)
		}
	}
}
