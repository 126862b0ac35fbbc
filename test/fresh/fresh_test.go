//go:build fresh

// Package fresh proves the README's promise of "a fresh Debian or Ubuntu
// machine" against real ones: a debootstrap --variant=minbase root of each
// Debian release in freshReleases, where nothing else was installed, runs
// `make deps`, `make run` and `make dist`; and `make run` works under an
// Ubuntu apt layout, which has no Debian source at all. On the release this
// machine runs, with the same Go and gcc, make dist there must give this
// checkout's SHA256SUMS: the same bytes from a host with other packages.
// Root (debootstrap, chroot, mount namespaces); make test-fresh runs it.
package fresh

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// freshReleases are the Debian releases the suite bootstraps: this
// machine's (bookworm) and the next (trixie).
var freshReleases = []string{"bookworm", "trixie"}

func must(t *testing.T, r harness.Result, what string) harness.Result {
	t.Helper()
	if r.Code != 0 {
		t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", what, r.Code, tail(r.Stdout), tail(r.Stderr))
	}
	return r
}

// tail is the end of a long output, where the error is.
func tail(s string) string {
	const n = 6000
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// clone makes a clone of HEAD in a new folder under dir: the committed
// files only, as a user's clone has. A local clone hard-links the objects
// (--no-local copied them, 30 s at this machine's load); not --shared,
// whose borrowed objects would be out of the chroot's reach.
func clone(t *testing.T, dir string) string {
	t.Helper()
	src := harness.Root(t)
	head := strings.TrimSpace(must(t, harness.Run(t, time.Minute, src, os.Environ(), "git", "rev-parse", "HEAD"), "git rev-parse").Stdout)
	d := filepath.Join(dir, "src")
	must(t, harness.Run(t, 5*time.Minute, dir, os.Environ(), "git", "clone", "-q", src, d), "git clone")
	must(t, harness.Run(t, time.Minute, d, os.Environ(), "git", "checkout", "-q", head), "git checkout")
	return d
}

// enter runs cmd in a chroot of lowers plus a new upper layer (enter.sh).
func enter(t *testing.T, limit time.Duration, gocache, lowers, upper, src, cmd string) harness.Result {
	t.Helper()
	env := append(os.Environ(), "GOCACHE_DIR="+gocache)
	return harness.Run(t, limit, harness.Root(t), env, "bash", filepath.Join(harness.Root(t), "test", "fresh", "enter.sh"), lowers, upper, src, cmd)
}

// depsLayer returns an overlay layer holding what `make deps` installed in
// the fresh root of release: made now, or kept from an earlier run with
// the same package list (scripts/deps.sh --list) and root recipe (its name
// holds their hash), so a warm run does not install 500 MB of packages
// again. FRESH_REDO=1 makes it
// again. Making it installs only make first, as the README tells a user on
// a bare machine, then runs make deps; the layer is kept only when that
// passed.
func depsLayer(t *testing.T, cache, root, release, src string) string {
	t.Helper()
	deps := []byte(must(t, harness.Run(t, time.Minute, src, os.Environ(), "bash", "scripts/deps.sh", "--list"), "deps.sh --list").Stdout)
	recipe, err := os.ReadFile(filepath.Join(root, ".gpu-preflight-fresh"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append(deps, recipe...))
	layer := filepath.Join(cache, "fresh", release+"-deps-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(filepath.Join(layer, ".make-deps-passed")); err == nil && os.Getenv("FRESH_REDO") == "" {
		t.Logf("%s: make deps passed in a fresh root with this package list before; reusing %s (FRESH_REDO=1 redoes it)", release, layer)
		return layer
	}
	upper := layer + ".tmp"
	// What an interrupted run left (enter.sh's mounts ended with it).
	for _, d := range []string{upper, upper + ".work", upper + ".root"} {
		os.RemoveAll(d)
	}
	// apt fetches the packages: noted, so make test does not hold this
	// run to the warm-cache suite times (scripts/log-download.sh).
	must(t, harness.Run(t, time.Minute, harness.Root(t), os.Environ(), "bash", "scripts/log-download.sh", "fresh: make deps in a fresh "+release+" root"), "log-download.sh")
	start := time.Now()
	r := enter(t, 20*time.Minute, filepath.Join(cache, "fresh", release+"-gocache"), root, upper, src,
		"export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq --no-install-recommends make >/dev/null && "+
			"make deps && dpkg-query -W -f='${Package}\\n' | wc -l && touch /.make-deps-passed")
	must(t, r, "apt-get install make, then make deps, in a fresh "+release+" root")
	t.Logf("%s: make deps in a fresh root: %v, %s packages installed in all", release, time.Since(start).Round(time.Second), strings.TrimSpace(lastLine(r.Stdout)))
	// apt's downloads and lists are not part of what make deps proved.
	for _, d := range []string{"var/cache/apt/archives", "var/lib/apt/lists"} {
		os.RemoveAll(filepath.Join(upper, d))
	}
	os.RemoveAll(layer)
	if err := os.Rename(upper, layer); err != nil {
		t.Fatal(err)
	}
	return layer
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// sums reads a SHA256SUMS file: file name to hash.
func sums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if h, name, ok := strings.Cut(sc.Text(), "  "); ok {
			m[name] = h
		}
	}
	return m
}

// TestFreshDebianRunsMakeDepsRunAndDist: in a fresh root of each release,
// `make deps` installs everything (checked by what follows, not by a
// list), then `make run` and `make dist` pass as the first build commands.
// libc6-dev-arm64-cross is removed before the build: a host without it once
// built a different arm64 binary (docs/BUILDING.md). On the release this
// machine runs, whose Go and gcc are this machine's, dist/SHA256SUMS must
// equal this checkout's (make test-fresh runs make dist here first); on
// another release gcc differs, and dist/BUILDINFO says how. The arm64
// binary runs there through qemu-binfmt.sh, in a root whose /proc shows no
// binfmt_misc while the host's kernel may hold the handler already.
func TestFreshDebianRunsMakeDepsRunAndDist(t *testing.T) {
	cache := harness.Cache(t)
	host := filepath.Join(harness.Root(t), "dist")
	hostSums := sums(t, filepath.Join(host, "SHA256SUMS"))
	hostInfo, err := os.ReadFile(filepath.Join(host, "BUILDINFO"))
	if err != nil {
		t.Fatalf("%v: run the suite with 'make test-fresh', which runs make dist first", err)
	}
	for _, release := range freshReleases {
		t.Run(release, func(t *testing.T) {
			root := strings.TrimSpace(must(t, harness.Run(t, 15*time.Minute, harness.Root(t), os.Environ(), "bash", "scripts/fresh-root.sh", release, filepath.Join(cache, "fresh", release)), "fresh-root.sh "+release).Stdout)
			dir := t.TempDir()
			src := clone(t, dir)
			layer := depsLayer(t, cache, root, release, src)
			start := time.Now()
			r := enter(t, 20*time.Minute, filepath.Join(cache, "fresh", release+"-gocache"), layer+":"+root, filepath.Join(dir, "upper"), src,
				"dpkg -r libc6-dev-arm64-cross >/dev/null && ! dpkg-query -W -f='${Status}' libc6-dev-arm64-cross 2>/dev/null | grep -q 'ok installed' && "+
					"make run >run.log 2>&1 && make dist && dist/gpu-preflight-linux-amd64 version && "+
					"bash scripts/qemu-binfmt.sh && dist/gpu-preflight-linux-arm64 version")
			must(t, r, "make run and make dist in a fresh "+release+" root, and both release binaries")
			for _, arch := range []string{"amd64", "arm64"} {
				if !strings.Contains(r.Stdout, "linux/"+arch+", NVML probe embedded)") {
					t.Errorf("%s: no %s release binary said its version:\n%s", release, arch, r.Stdout)
				}
			}
			t.Logf("%s: make run and make dist: %v", release, time.Since(start).Round(time.Second))
			got := sums(t, filepath.Join(src, "dist", "SHA256SUMS"))
			info, err := os.ReadFile(filepath.Join(src, "dist", "BUILDINFO"))
			if err != nil {
				t.Fatal(err)
			}
			version, toolchain := splitBuildInfo(info)
			hostVersion, hostToolchain := splitBuildInfo(hostInfo)
			if version != hostVersion {
				t.Fatalf("%s: the fresh root built %s from HEAD, this checkout's dist/ is %s: commit what is not committed, then make test-fresh", release, version, hostVersion)
			}
			if toolchain != hostToolchain {
				t.Logf("%s: another toolchain, so other bytes; dist/BUILDINFO there:\n%s\nhere:\n%s", release, info, hostInfo)
				return
			}
			for name, h := range hostSums {
				if got[name] != h {
					t.Errorf("%s: dist/%s is %s in the fresh root and %s here, with the same dist/BUILDINFO:\n%s", release, name, got[name], h, info)
				}
			}
			if len(got) != len(hostSums) {
				t.Errorf("%s: SHA256SUMS lists %d files there, %d here", release, len(got), len(hostSums))
			}
			if !t.Failed() {
				t.Logf("%s: dist/SHA256SUMS identical to this machine's:\n%s", release, mustRead(t, filepath.Join(src, "dist", "SHA256SUMS")))
			}
		})
	}
}

// splitBuildInfo splits dist/BUILDINFO into its version line and the rest,
// the toolchain.
func splitBuildInfo(b []byte) (version, toolchain string) {
	first, rest, _ := strings.Cut(string(b), "\n")
	return first, rest
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ubuntuLayouts are the two apt layouts Ubuntu ships, neither naming a
// Debian mirror: 24.04's deb822 ubuntu.sources and 22.04's sources.list.
var ubuntuLayouts = map[string][2]string{
	"noble-deb822": {"sources.list.d/ubuntu.sources", "Types: deb\nURIs: http://archive.ubuntu.com/ubuntu/\nSuites: noble noble-updates noble-backports\nComponents: main restricted universe multiverse\nSigned-By: /usr/share/keyrings/ubuntu-archive-keyring.gpg\n"},
	"jammy-list":   {"sources.list", "deb http://archive.ubuntu.com/ubuntu/ jammy main restricted\ndeb http://security.ubuntu.com/ubuntu/ jammy-security main restricted\n"},
}

// hostMirror is the Debian mirror this machine's apt uses, read from its
// own sources by the same code the build uses (scripts/apt-sources.sh).
func hostMirror(t *testing.T) string {
	t.Helper()
	r := must(t, harness.Run(t, time.Minute, harness.Root(t), os.Environ(), "bash", "-c", "source scripts/apt-sources.sh && host_debian_source && echo \"$debian_uri\""), "host_debian_source")
	return strings.TrimSpace(r.Stdout)
}

// TestUbuntuAptLayoutTakesTheSysrootFromSysrootMirror: in a private mount
// namespace whose /etc/apt holds only an Ubuntu layout, the sysroot comes
// from SYSROOT_MIRROR (this machine's Debian mirror, as Ubuntu's archive has
// no bullseye), which it says; under 24.04's layout that is make run from a
// fresh clone with an empty cache, under 22.04's scripts/sysroot.sh alone
// (nothing else in the build reads apt's sources). Without SYSROOT_MIRROR,
// sysroot.sh says it takes Debian's default mirror, and why.
func TestUbuntuAptLayoutTakesTheSysrootFromSysrootMirror(t *testing.T) {
	mirror := hostMirror(t)
	if mirror == "" {
		t.Fatal("this machine's apt sources name no Debian mirror")
	}
	for name, layout := range ubuntuLayouts {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src := clone(t, dir)
			etc := filepath.Join(dir, "apt")
			if err := os.MkdirAll(filepath.Join(etc, "sources.list.d"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(etc, layout[0]), []byte(layout[1]), 0o644); err != nil {
				t.Fatal(err)
			}
			// Only this layout under /etc/apt, for everything the command runs.
			// make run on Ubuntu 24.04's layout; on 22.04's, the sysroot alone
			// (the rest of the build does not read apt's sources).
			build := `SYSROOT_MIRROR="$MIRROR" make run`
			if name != "noble-deb822" {
				build = `SYSROOT_MIRROR="$MIRROR" bash scripts/sysroot.sh amd64 "$CACHE/sysroot-bullseye-amd64"`
			}
			script := `mount --bind "$APT_LAYOUT" /etc/apt && find /etc/apt -type f && ` +
				`{ env -u SYSROOT_MIRROR bash scripts/sysroot.sh arm64 "$CACHE/sysroot-default" >"$CACHE.default.log" 2>&1; head -n 1 "$CACHE.default.log"; } && ` +
				build
			env := append(os.Environ(), "APT_LAYOUT="+etc, "MIRROR="+mirror, "CACHE="+filepath.Join(dir, "cache"))
			cmd := exec.Command("unshare", "--mount", "--propagation", "private", "bash", "-c", script)
			cmd.Dir, cmd.Env = src, env
			out, err := cmd.CombinedOutput()
			text := string(out)
			if err != nil {
				t.Fatalf("make run under the %s apt layout: %v\n%s", name, err, tail(text))
			}
			if !strings.Contains(text, "/etc/apt/"+layout[0]+"\n") || strings.Contains(text, "debian.sources") {
				t.Errorf("/etc/apt in the namespace is not the %s layout alone:\n%s", name, tail(text))
			}
			if !strings.Contains(text, "from http://deb.debian.org/debian (the default: the host's apt sources name no Debian mirror") {
				t.Errorf("without SYSROOT_MIRROR, sysroot.sh did not say it takes the default mirror and why:\n%s", tail(text))
			}
			if !strings.Contains(text, "packages from "+mirror+" (SYSROOT_MIRROR)") {
				t.Errorf("make run did not say it took the sysroot from SYSROOT_MIRROR=%s:\n%s", mirror, tail(text))
			}
			if name != "noble-deb822" {
				return
			}
			if !strings.Contains(text, "probe-build: built") {
				t.Errorf("make run built no probe:\n%s", tail(text))
			}
			if v := must(t, harness.Run(t, time.Minute, src, nil, filepath.Join(src, "bin", "gpu-preflight"), "version"), "version"); !strings.Contains(v.Stdout, "NVML probe embedded)") {
				t.Errorf("the shim built under %s says %q", name, v.Stdout)
			}
		})
	}
}
