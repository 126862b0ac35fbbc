package elfbound

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// realLibraries are shared libraries of this machine, built by Debian.
func realLibraries(t testing.TB) []string {
	m, _ := filepath.Glob("/usr/lib/x86_64-linux-gnu/lib*.so.*")
	if len(m) < 20 {
		t.Fatalf("found %d shared libraries in /usr/lib/x86_64-linux-gnu; the comparison needs a Debian system's", len(m))
	}
	return m[:min(len(m), 200)]
}

// File lists the same sections, with the same headers and names, as
// debug/elf on real libraries.
func TestFileAgreesWithDebugELF(t *testing.T) {
	for _, p := range realLibraries(t) {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := elf.NewFile(f)
		if err != nil {
			f.Close()
			continue // a linker script named like a library
		}
		got, err := Open(f)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if got.Class != Class(want.Class) || got.Data != Data(want.Data) || got.Machine != Machine(want.Machine) || got.Type != Type(want.Type) {
			t.Errorf("%s: header %v %v %v %v, debug/elf %v %v %v %v", p, got.Class, got.Data, got.Machine, got.Type, want.Class, want.Data, want.Machine, want.Type)
		}
		names, err := got.SectionNames()
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		err = got.Sections(func(s Section) bool {
			w := want.Sections[i].SectionHeader
			name, _ := names.String(uint64(s.NameOff), 256)
			if name != w.Name || s.Type != SectionType(w.Type) || s.Flags != SectionFlag(w.Flags) || s.Offset != w.Offset || s.Size != w.FileSize || s.Link != w.Link || s.Entsize != w.Entsize {
				t.Errorf("%s: section %d: %q %+v; debug/elf %+v", p, i, name, s, w)
			}
			i++
			return true
		})
		if err != nil || i != len(want.Sections) {
			t.Errorf("%s: %d sections (%v), debug/elf %d", p, i, err, len(want.Sections))
		}
		if sec, ok, err := got.SectionByName(".dynamic"); err != nil || ok != (want.Section(".dynamic") != nil) || ok && sec.Offset != want.Section(".dynamic").Offset {
			t.Errorf("%s: SectionByName(.dynamic) = %+v, %v, %v", p, sec, ok, err)
		}
		f.Close()
	}
}

// manySections is an ELF64 header and n section headers, the last the
// section-name table, every section named ".s".
func manySections(n int) []byte {
	le := binary.LittleEndian
	names := []byte("\x00.s\x00.shstrtab\x00")
	b := make([]byte, 64+len(names))
	copy(b[64:], names)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	shoff := len(b)
	sh := make([]byte, 64*n)
	for i := 1; i < n; i++ {
		le.PutUint32(sh[64*i:], 1)
		le.PutUint32(sh[64*i+4:], uint32(elf.SHT_PROGBITS))
	}
	last := sh[64*(n-1):]
	le.PutUint32(last, 4)
	le.PutUint32(last[4:], uint32(elf.SHT_STRTAB))
	le.PutUint64(last[24:], 64)
	le.PutUint64(last[32:], uint64(len(names)))
	b = append(b, sh...)
	copy(b, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1})
	le.PutUint16(b[16:], uint16(elf.ET_DYN))
	le.PutUint16(b[18:], uint16(elf.EM_X86_64))
	le.PutUint64(b[40:], uint64(shoff))
	le.PutUint16(b[52:], 64)
	le.PutUint16(b[58:], 64)
	le.PutUint16(b[60:], uint16(n))
	le.PutUint16(b[62:], uint16(n-1))
	return b
}

// countingReader counts the bytes read from r and the largest read.
type countingReader struct {
	r             *bytes.Reader
	total, widest int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.total += len(p)
	c.widest = max(c.widest, len(p))
	return c.r.ReadAt(p, off)
}

// 65 535 section headers are walked a block at a time: no read is wider
// than a block, and the name lookups share windows.
func TestSectionsAreReadABlockAtATime(t *testing.T) {
	c := &countingReader{r: bytes.NewReader(manySections(65535))}
	f, err := Open(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := f.SectionByName(".missing"); ok || err != nil {
		t.Fatalf("SectionByName(.missing) = %v, %v", ok, err)
	}
	if f.NumSections() != 65535 {
		t.Errorf("%d sections", f.NumSections())
	}
	if c.widest > sectionBlock {
		t.Errorf("a read of %d bytes, wider than a block of section headers", c.widest)
	}
	if _, err := Open(bytes.NewReader(manySections(2))); err != nil {
		t.Fatal(err)
	}
}

func TestStringTable(t *testing.T) {
	long := strings.Repeat("a", 3*window)
	data := "\x00short\x00" + long + "\x00" + strings.Repeat("b", window-3) + "\x00tail"
	st := &StringTable{r: strings.NewReader("pad" + data), off: 3, size: uint64(len(data))}
	at := func(s string) uint64 { return uint64(strings.Index(data, s)) }
	for _, tc := range []struct {
		off  uint64
		max  int
		want string
		err  string
	}{
		{at("short"), 100, "short", ""},
		{at("hort"), 100, "hort", ""},
		{0, 100, "", ""},
		{at("short"), 4, "", "longer than 4 bytes"},
		{at("short"), 5, "short", ""},
		{at("aaa"), len(long), long, ""},
		{at("aaa"), len(long) - 1, "", "longer than 12287 bytes"},
		{at("bbb"), window, strings.Repeat("b", window-3), ""},
		{at("tail"), 100, "", "has no NUL before the table ends"},
		{uint64(len(data)), 100, "", "offset 16394 outside the 16394-byte string table"},
	} {
		got, err := st.String(tc.off, tc.max)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("String(%d, %d) = %.20q, %v; want %.20q", tc.off, tc.max, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !errors.Is(err, ErrBadString) || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("String(%d, %d) = %.20q, %v; want an error saying %q", tc.off, tc.max, got, err, tc.err)
		}
	}
	if ok, err := st.Equal(at("short"), "shor"); ok || err != nil {
		t.Errorf("Equal(short, shor) = %v, %v", ok, err)
	}
	if ok, err := st.Equal(at("short"), "short"); !ok || err != nil {
		t.Errorf("Equal(short, short) = %v, %v", ok, err)
	}
	if _, err := (&StringTable{}).String(0, 10); !errors.Is(err, ErrBadString) {
		t.Errorf("the empty table gave %v", err)
	}
}

// FuzzFile holds File to its bounds on any input, from seeds of real
// libraries (Debian 12's libdl.so.2, committed with the loader model's
// seeds, and this machine's): Open, the section walk and every name never
// fail by panic.
func FuzzFile(f *testing.F) {
	for _, p := range []string{"../ldso/testdata/libdl.so.2", "/lib/x86_64-linux-gnu/libutil.so.1"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add(manySections(3))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Open(bytes.NewReader(b))
		if err != nil {
			return
		}
		names, err := file.SectionNames()
		if err != nil {
			return
		}
		n := 0
		_ = file.Sections(func(s Section) bool {
			if name, err := names.String(uint64(s.NameOff), 64); err == nil && len(name) > 64 {
				t.Fatalf("a name of %d bytes past the bound of 64", len(name))
			}
			n++
			return n < 1000
		})
	})
}
