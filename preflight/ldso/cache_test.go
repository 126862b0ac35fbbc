package ldso

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/ldso/ldsotest"
)

var seedCaches = []string{"ld.so.cache.debian12", "ld.so.cache.new", "ld.so.cache.old", "ld.so.cache.compat"}

func ldconfig(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/sbin/ldconfig", "/usr/sbin/ldconfig"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatal("ldconfig (glibc's libc-bin) is needed: it is the truth the cache parser is compared with")
	return ""
}

// ldconfigList is what `ldconfig -p -C file` prints, as "name (flags) =>
// path" lines, in order.
func ldconfigList(t *testing.T, file string) []string {
	t.Helper()
	out, err := exec.Command(ldconfig(t), "-p", "-C", file).Output()
	if err != nil {
		t.Fatalf("ldconfig -p -C %s: %v", file, err)
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "\t") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	return lines
}

// flagText is ldconfig's print_entry wording for the flags used here.
func flagText(f int32) string {
	arch := ""
	switch f & FlagArchMask {
	case FlagX8664Lib64:
		arch = ",x86-64"
	case FlagAArch64:
		arch = ",AArch64"
	}
	if f&FlagTypeMask == FlagELFLibc6 {
		return "libc6" + arch
	}
	return fmt.Sprintf("%#x", f)
}

func parsed(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := ParseCache(b)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var lines []string
	for _, e := range entries {
		lines = append(lines, fmt.Sprintf("%s (%s) => %s", e.Name, flagText(e.Flags), e.Path))
	}
	return lines
}

// The parser reads every format as glibc's own ldconfig -p does: the
// committed seeds, and caches the installed ldconfig writes now.
func TestParseCacheAgreesWithLdconfig(t *testing.T) {
	files := []string{}
	for _, s := range seedCaches {
		files = append(files, filepath.Join("testdata", s))
	}
	root := t.TempDir()
	for _, d := range []string{"etc", "opt/a", "opt/b"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cc := gcc(t)
	for _, l := range []lib{
		{Path: "opt/a/libcudart.so.12", Soname: "libcudart.so.12"},
		{Path: "opt/b/libcudart.so.12", Soname: "libcudart.so.12"},
		{Path: "opt/b/libnccl.so.2", Soname: "libnccl.so.2"},
	} {
		build(t, cc, root, l, false)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/ld.so.conf"), []byte("/opt/a\n/opt/b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"new", "old", "compat"} {
		if out, err := exec.Command(ldconfig(t), "-r", root, "-c", format, "-C", "/etc/cache."+format).CombinedOutput(); err != nil {
			t.Fatalf("ldconfig -c %s: %v\n%s", format, err, out)
		}
		files = append(files, filepath.Join(root, "etc/cache."+format))
	}
	for _, f := range files {
		got, want := parsed(t, f), ldconfigList(t, f)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s:\nparsed  %q\nldconfig %q", f, got, want)
		}
	}
}

// ld.so takes the first entry of a name built for its architecture.
func TestLookupTakesTheFirstEntryOfTheArchitecture(t *testing.T) {
	entries := []CacheEntry{
		{Name: "libcudart.so.12", Path: "/usr/lib/aarch64-linux-gnu/libcudart.so.12", Flags: FlagELFLibc6 | FlagAArch64},
		{Name: "libcudart.so.12", Path: "/opt/a/libcudart.so.12", Flags: FlagELFLibc6 | FlagX8664Lib64},
		{Name: "libcudart.so.12", Path: "/opt/b/libcudart.so.12", Flags: FlagELFLibc6 | FlagX8664Lib64},
	}
	if p, ok := Lookup(entries, "libcudart.so.12", FlagX8664Lib64); !ok || p != "/opt/a/libcudart.so.12" {
		t.Errorf("x86-64: %q %v", p, ok)
	}
	if p, ok := Lookup(entries, "libcudart.so.12", FlagAArch64); !ok || p != "/usr/lib/aarch64-linux-gnu/libcudart.so.12" {
		t.Errorf("aarch64: %q %v", p, ok)
	}
	if _, ok := Lookup(entries, "libcudnn.so.9", FlagX8664Lib64); ok {
		t.Error("a name not in the cache was found")
	}
}

func TestParseCacheRejects(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "ld.so.cache.new"))
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][]byte{
		"empty":            nil,
		"not a cache":      []byte("hello world, this is not a cache file at all"),
		"truncated header": b[:30],
		"truncated table":  b[:60],
		"offset past end":  b[:130],
		"too large":        make([]byte, MaxCacheSize+1),
	} {
		if e, err := ParseCache(in); err == nil {
			t.Errorf("%s: parsed %d entries, want an error", name, len(e))
		}
	}
}

// A cache of 87 000 entries that all name one 4 KiB string, in either
// format, 1 MiB or 16 MiB large, is read with the string kept once and the
// entries past maxCacheEntries left out, saying so; reading it allocates
// a few MiB, not the 711 MiB of a copy per entry.
func TestReadCacheBoundsHostileCaches(t *testing.T) {
	for _, format := range []string{ldsotest.CacheOld, ldsotest.CacheNew} {
		for _, size := range []int{1 << 20, MaxCacheSize} {
			t.Run(fmt.Sprintf("%s/%d", format, size), func(t *testing.T) {
				b := ldsotest.OneStringCache(format, 87000, 4000, size)
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				entries, err := ReadCache(bytes.NewReader(b), int64(len(b)))
				runtime.ReadMemStats(&after)
				if err == nil || !strings.Contains(err.Error(), "87000 entries, more than the 32768 read: the rest are left out") {
					t.Errorf("error %v does not say what was left out", err)
				}
				if len(entries) != maxCacheEntries || entries[0].Name != strings.Repeat("l", 4000) || entries[0].Path != entries[0].Name {
					t.Fatalf("%d entries, the first %.20q => %.20q", len(entries), entries[0].Name, entries[0].Path)
				}
				if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
					t.Errorf("reading it allocated %d bytes", n)
				}
			})
		}
	}
	// Distinct long strings stop at maxCacheStrings.
	b := ldsotest.OneStringCache(ldsotest.CacheNew, 2000, 4000, 0)
	for i := range 2000 {
		binary.LittleEndian.PutUint32(b[48+24*i+4:], uint32(48+24*2000+i))
	}
	entries, err := ParseCache(b)
	if err == nil || !strings.Contains(err.Error(), "pass 4194304 bytes: the other") || len(entries) > 1300 {
		t.Errorf("%d entries, error %v", len(entries), err)
	}
}

// FuzzParseCache: whatever the bytes, the parser returns without panicking,
// and every entry it returns has a name and a path inside the input.
func FuzzParseCache(f *testing.F) {
	for _, s := range seedCaches {
		b, err := os.ReadFile(filepath.Join("testdata", s))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, _ := ParseCache(b)
		if len(entries) > maxCacheEntries || len(entries)*oldEntryLen > len(b) {
			t.Fatalf("%d entries from %d bytes", len(entries), len(b))
		}
		for _, e := range entries {
			if len(e.Name) > maxString || len(e.Path) > maxString {
				t.Fatalf("entry longer than PATH_MAX: %q", e.Name)
			}
		}
	})
}
