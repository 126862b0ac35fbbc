package ldso

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/ldso/ldsotest"
)

// readelfDynamic is what binutils' `readelf -d` says of the entries
// ReadDynamic reads.
func readelfDynamic(t *testing.T, file string) Dynamic {
	t.Helper()
	out, err := exec.Command("readelf", "-dW", file).Output()
	if err != nil {
		t.Fatalf("readelf -dW %s (binutils is needed: it is the truth here): %v", file, err)
	}
	var d Dynamic
	line := regexp.MustCompile(`\((NEEDED|SONAME|RPATH|RUNPATH|FLAGS_1)\)\s+(.*)$`)
	for _, l := range strings.Split(string(out), "\n") {
		m := line.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		val := m[2]
		if i, j := strings.Index(val, "["), strings.LastIndex(val, "]"); i >= 0 && j > i {
			val = val[i+1 : j]
		}
		switch m[1] {
		case "NEEDED":
			d.Needed = append(d.Needed, val)
		case "SONAME":
			d.Soname = val
		case "RPATH":
			d.RPath = splitPath(val)
		case "RUNPATH":
			d.HasRunPath, d.RunPath = true, splitPath(val)
		case "FLAGS_1":
			d.NoDefLib = slices.Contains(strings.Fields(val), "NODEFLIB")
		}
	}
	if d.HasRunPath {
		d.RPath = nil
	}
	return d
}

// systemLibraries are up to n shared libraries of this machine, real ELF
// files built by Debian.
func systemLibraries(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"/usr/lib/x86_64-linux-gnu/*.so*", "/usr/lib/aarch64-linux-gnu/*.so*", "/usr/lib/gcc/*/*/*.so*"} {
		m, _ := filepath.Glob(pat)
		for _, p := range m {
			if len(out) == n {
				break
			}
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && isELF(p) {
				out = append(out, p)
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("found %d shared libraries on this machine; the comparison needs a Debian system's", len(out))
	}
	return out
}

// isELF says whether the file at p starts with the ELF magic: glibc's
// libc.so and libm.so are GNU ld scripts, which only the static linker
// reads. Which of them the first n libraries take in depends on what else
// the machine has installed.
func isELF(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	magic := make([]byte, 4)
	_, err = io.ReadFull(f, magic)
	return err == nil && string(magic) == elf.ELFMAG
}

// ReadDynamic reads what readelf reads from the dynamic section of every
// real library tried, and of libraries gcc builds with DT_RUNPATH and
// DT_RPATH.
func TestReadDynamicAgreesWithReadelf(t *testing.T) {
	dir := t.TempDir()
	ldsotest.Build(t, dir, ldsotest.Lib{Path: "dep/libdep.so.1", Soname: "libdep.so.1"})
	built := []string{
		ldsotest.Build(t, dir, ldsotest.Lib{Path: "a/libr.so", Soname: "libr.so", Needs: []string{"dep/libdep.so.1"}, RunPath: "$ORIGIN/../dep:/opt/x:/opt/y"}),
		ldsotest.Build(t, dir, ldsotest.Lib{Path: "a/libp.so", Soname: "libp.so", Needs: []string{"dep/libdep.so.1"}, RPath: "/opt/p"}),
	}
	libs := append(built, systemLibraries(t, 300)...)
	for _, p := range libs {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadDynamic(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		got.Arch = 0
		if want := readelfDynamic(t, p); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %+v\nwant %+v (readelf -d)", p, got, want)
		}
	}
	t.Logf("%d libraries compared", len(libs))
}

// dynObject is ldsotest.DynamicObject of [tag, value] pairs.
func dynObject(entries [][2]uint64, strtab []byte) []byte {
	dyn := make([]ldsotest.Dyn, len(entries))
	for i, e := range entries {
		dyn[i] = ldsotest.Dyn{Tag: elf.DynTag(e[0]), Val: e[1]}
	}
	return ldsotest.DynamicObject(dyn, strtab)
}

// The dynamic section is read as glibc reads it: entries up to DT_NULL,
// the last DT_SONAME and DT_RUNPATH winning, DT_RPATH ignored beside
// DT_RUNPATH.
func TestReadDynamicReadsAsGlibcDoes(t *testing.T) {
	strtab := []byte("\x00liba.so\x00libb.so\x00old.so\x00new.so\x00/r1\x00/r2:/r3\x00/rp\x00libafter.so\x00")
	at := func(s string) uint64 { return uint64(bytes.Index(strtab, []byte("\x00"+s+"\x00")) + 1) }
	obj := dynObject([][2]uint64{
		{uint64(elf.DT_NEEDED), at("liba.so")},
		{uint64(elf.DT_SONAME), at("old.so")},
		{uint64(elf.DT_RPATH), at("/rp")},
		{uint64(elf.DT_RUNPATH), at("/r1")},
		{uint64(elf.DT_NEEDED), at("libb.so")},
		{uint64(elf.DT_SONAME), at("new.so")},
		{uint64(elf.DT_RUNPATH), at("/r2:/r3")},
		{uint64(elf.DT_FLAGS_1), df1NoDefLib},
		{uint64(elf.DT_NULL), 0},
		{uint64(elf.DT_NEEDED), at("libafter.so")},
	}, strtab)
	d, err := ReadDynamic(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	want := Dynamic{Soname: "new.so", Needed: []string{"liba.so", "libb.so"}, RunPath: []string{"/r2", "/r3"}, HasRunPath: true, NoDefLib: true, Arch: FlagX8664Lib64}
	if fmt.Sprint(d) != fmt.Sprint(want) {
		t.Errorf("got %+v\nwant %+v", d, want)
	}
}

// A hostile dynamic section is read within bounds, and the error says
// what was cut; what could be read is kept.
func TestReadDynamicBoundsHostileObjects(t *testing.T) {
	noNUL := bytes.Repeat([]byte("x"), 1<<20)
	var needed4000 [][2]uint64
	for i := range 4000 {
		needed4000 = append(needed4000, [2]uint64{uint64(elf.DT_NEEDED), uint64(i * 200)})
	}
	long := append(bytes.Repeat([]byte("y"), 190<<10), 0)
	var needed700 [][2]uint64
	for range 700 {
		needed700 = append(needed700, [2]uint64{uint64(elf.DT_NEEDED), 0})
	}
	okStr := []byte("\x00libok.so\x00")
	var needed512x4K [][2]uint64
	for i := range maxNeeded {
		needed512x4K = append(needed512x4K, [2]uint64{uint64(elf.DT_NEEDED), uint64(i)})
	}
	for _, tc := range []struct {
		name    string
		obj     []byte
		want    []string // in the error
		needed  int
		soname  string
		runpath int
	}{
		{"4000 DT_NEEDED into a NUL-less 1 MiB .dynstr", dynObject(needed4000, noNUL),
			[]string{"4000 DT_NEEDED entries, more than the 512 read", "DT_NEEDED 0: bad string: the string at offset 0 of the string table is longer than 4096 bytes", "and "}, 0, "", 0},
		{"700 DT_NEEDED naming one 190 KiB string", dynObject(needed700, long),
			[]string{"DT_NEEDED 0: bad string: the string at offset 0 of the string table is longer than 4096 bytes", "700 DT_NEEDED entries, more than the 512 read", "and 509 more"}, 0, "", 0},
		{"a name running off the end of the table", dynObject([][2]uint64{{uint64(elf.DT_SONAME), 1}, {uint64(elf.DT_NEEDED), 99}}, []byte("\x00abc")),
			[]string{"DT_SONAME: bad string: the string at offset 1 of the 4-byte string table has no NUL", "DT_NEEDED 0: bad string: offset 99 outside the 4-byte string table"}, 0, "", 0},
		{"a DT_RUNPATH of 8 000 directories", dynObject([][2]uint64{{uint64(elf.DT_NEEDED), 1}, {uint64(elf.DT_RUNPATH), uint64(len(okStr))}},
			append(append(okStr, strings.Repeat("/d:", 8000)...), 0)),
			[]string{"DT_RUNPATH has 8000 directories, more than the 256 searched"}, 1, "", maxDirs},
		{"512 DT_NEEDED of up to 4 KiB each", dynObject(needed512x4K, append(bytes.Repeat([]byte("x"), maxName), 0)),
			[]string{"read in part: DT_NEEDED 16 and the 495 after it: the object's names pass 65536 bytes: not followed"}, 16, "", 0},
		{"a dynamic section with no DT_NULL", dynObject(slices.Repeat([][2]uint64{{uint64(elf.DT_SONAME), 1}}, maxDynEntries+10), okStr),
			[]string{"a dynamic section of 65546 entries without DT_NULL in the first 65536"}, 0, "libok.so", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ReadDynamic(bytes.NewReader(tc.obj))
			if err == nil {
				t.Fatalf("no error; got %+v", d)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if len(d.Needed) != tc.needed || d.Soname != tc.soname || len(d.RunPath) != tc.runpath {
				t.Errorf("kept %d needed, soname %q, %d runpath dirs; want %d, %q, %d", len(d.Needed), d.Soname, len(d.RunPath), tc.needed, tc.soname, tc.runpath)
			}
		})
	}
}

// FuzzReadDynamic holds ReadDynamic to its bounds on any input, from seeds
// of real objects: Debian's small glibc stubs and what gcc builds here.
func FuzzReadDynamic(f *testing.F) {
	for _, p := range []string{"testdata/libdl.so.2", "/lib/x86_64-linux-gnu/libutil.so.1"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add(dynObject([][2]uint64{{uint64(elf.DT_NEEDED), 1}, {uint64(elf.DT_RUNPATH), 1}}, []byte("\x00liba.so\x00")))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, _ := ReadDynamic(bytes.NewReader(b))
		if len(d.Needed) > maxNeeded || len(d.RunPath) > maxDirs || len(d.RPath) > maxDirs {
			t.Fatalf("past the bounds: %d needed, %d runpath, %d rpath", len(d.Needed), len(d.RunPath), len(d.RPath))
		}
		for _, n := range append(d.Needed, d.Soname) {
			if len(n) > maxName {
				t.Fatalf("a name of %d bytes", len(n))
			}
		}
	})
}

// bombFS is an image whose root object needs n libraries in /lib, each of
// which needs 512 names of up to 4 KiB: ReadDynamic keeps maxStrings of
// each, and Load must bound what they hold together.
type bombFS struct {
	n     int
	reads int
	peak  uint64 // the largest live heap seen between reads
}

func (b *bombFS) IsFile(p string) bool { return p == "/root.so" || strings.HasPrefix(p, "/lib/lib") }

func (b *bombFS) Dynamic(p string) (Dynamic, error) {
	if b.reads++; b.reads%64 == 0 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		b.peak = max(b.peak, m.HeapAlloc)
	}
	if p == "/root.so" {
		var names []byte
		var dyn [][2]uint64
		for i := range b.n {
			dyn = append(dyn, [2]uint64{uint64(elf.DT_NEEDED), uint64(len(names) + 1)})
			names = append(names, fmt.Sprintf("\x00lib%d.so", i)...)
		}
		return ReadDynamic(bytes.NewReader(dynObject(dyn, append(names, 0))))
	}
	var dyn [][2]uint64
	for i := range maxNeeded {
		dyn = append(dyn, [2]uint64{uint64(elf.DT_NEEDED), uint64(i * 7)})
	}
	return ReadDynamic(bytes.NewReader(dynObject(dyn, append(bytes.Repeat([]byte("x"), maxName), 0))))
}

// What the dynamic sections of all loaded objects hold together stays
// within maxHeld: past it, objects are recorded, not followed, and say so.
func TestLoadBoundsWhatObjectsHoldTogether(t *testing.T) {
	fs := &bombFS{n: maxNeeded}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	objs := Load(fs, Env{SystemDirs: []string{"/lib"}}, nil, []string{"/root.so"})
	cut := 0
	for _, o := range objs {
		if strings.Contains(o.Error, "4194304 bytes of names, the loader model's bound") {
			cut++
		}
	}
	if cut < maxNeeded/2 || len(objs) <= maxNeeded {
		t.Errorf("%d objects, %d cut at the bound", len(objs), cut)
	}
	if grew := int64(fs.peak) - int64(before.HeapAlloc); grew > 3*maxHeld {
		t.Errorf("the live heap grew by %d bytes while loading, past 3 x maxHeld", grew)
	}
	t.Logf("%d objects, %d cut; live heap peak %.1f MiB over %.1f MiB", len(objs), cut, float64(fs.peak)/(1<<20), float64(before.HeapAlloc)/(1<<20))
}
