package fatbintest

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
)

// tool returns the path of a binutils program, failing loudly without it.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: install binutils (apt-get install binutils) to cross-check the ELF writer: %v", name, err)
	}
	return p
}

func writeSample(t *testing.T) (string, SO) {
	t.Helper()
	so := SO{
		Fatbin: []Container{
			{Entries: []Entry{{Kind: Cubin, SM: 80}, {Kind: PTX, SM: 80, PTXMajor: 7, PTXMinor: 8}}},
			{Entries: []Entry{{Kind: Cubin, SM: 90, Accel: true}}},
		},
		RelFatbin: []Container{{Entries: []Entry{{Kind: PTX, SM: 70}}}},
	}
	path := filepath.Join(t.TempDir(), "libsample.so")
	if err := so.Write(path); err != nil {
		t.Fatal(err)
	}
	return path, so
}

// The writer's sections are what readelf and objdump, not only debug/elf, see.
func TestWriterAgreesWithReadelfAndObjdump(t *testing.T) {
	path, so := writeSample(t)
	want := map[string]int64{
		".nv_fatbin":     FatbinSection(".nv_fatbin", so.Fatbin...).size(),
		"__nv_relfatbin": FatbinSection("__nv_relfatbin", so.RelFatbin...).size(),
	}

	out, err := exec.Command(tool(t, "readelf"), "-S", "-W", path).CombinedOutput()
	if err != nil {
		t.Fatalf("readelf -S: %v\n%s", err, out)
	}
	if bytes.Contains(out, []byte("Warning")) || bytes.Contains(out, []byte("Error")) {
		t.Errorf("readelf complains:\n%s", out)
	}
	// [ 1] .nv_fatbin  PROGBITS  0000000000000040 000040 0000c8 00   A  0   0  8
	for name, size := range want {
		re := regexp.MustCompile(regexp.QuoteMeta(name) + `\s+PROGBITS\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)\s+00\s+A\s+0\s+0\s+8`)
		m := re.FindSubmatch(out)
		if m == nil {
			t.Errorf("readelf -S lists no PROGBITS, alloc, align-8 %s:\n%s", name, out)
			continue
		}
		if got, _ := strconv.ParseInt(string(m[1]), 16, 64); got != size {
			t.Errorf("readelf: %s size %#x, want %#x", name, got, size)
		}
	}

	out, err = exec.Command(tool(t, "objdump"), "-h", path).CombinedOutput()
	if err != nil {
		t.Fatalf("objdump -h: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("file format elf64-x86-64")) {
		t.Errorf("objdump does not read an elf64-x86-64 file:\n%s", out)
	}
	for name, size := range want {
		re := regexp.MustCompile(regexp.QuoteMeta(name) + `\s+([0-9a-f]+)\s`)
		m := re.FindSubmatch(out)
		if m == nil {
			t.Errorf("objdump -h lists no %s:\n%s", name, out)
			continue
		}
		if got, _ := strconv.ParseInt(string(m[1]), 16, 64); got != size {
			t.Errorf("objdump: %s size %#x, want %#x", name, got, size)
		}
	}
}

// debug/elf reads the same sections back, and Bytes matches the written file.
func TestBytesMatchWrittenFile(t *testing.T) {
	path, so := writeSample(t)
	onDisk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := so.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(onDisk, mem) {
		t.Fatalf("Bytes() differs from the written file (%d vs %d bytes)", len(mem), len(onDisk))
	}
	f, err := elf.NewFile(bytes.NewReader(mem))
	if err != nil {
		t.Fatal(err)
	}
	sec := f.Section(".nv_fatbin")
	if sec == nil {
		t.Fatal("debug/elf finds no .nv_fatbin")
	}
	data, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint32(data); got != 0xBA55ED50 {
		t.Errorf("first container magic %#x, want 0xBA55ED50", got)
	}
	// First entry: a cubin for sm_80 whose payload is a CUDA ELF header.
	e := data[16:]
	if kind, arch := binary.LittleEndian.Uint16(e), binary.LittleEndian.Uint32(e[0x1c:]); kind != 2 || arch != 80 {
		t.Errorf("first entry kind %d arch %d, want 2 and 80", kind, arch)
	}
	if !bytes.HasPrefix(e[64:], []byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0x33, 7}) {
		t.Errorf("cubin payload starts % x, want a CUDA ELF header", e[64:73])
	}
}

// The cubin header carries e_flags as LLVM ELF.h lays them out.
func TestCubinHeaderFlags(t *testing.T) {
	tests := []struct {
		name  string
		sm    int
		abi   int
		accel bool
		want  uint32
	}{
		{"ABI7PlainSMInLowByte", 80, 7, false, 80 | 80<<16 | 0x400},
		{"ABI7AccelBit0x800", 90, 7, true, 90 | 90<<16 | 0x400 | 0x800},
		{"ABI8SMInBits8To15", 100, 8, false, 100 << 8},
		{"ABI8AccelBit0x8", 100, 8, true, 100<<8 | 0x8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := CubinHeader(tt.sm, tt.abi, tt.accel)
			if got := binary.LittleEndian.Uint32(h[0x30:]); got != tt.want {
				t.Errorf("e_flags %#x, want %#x", got, tt.want)
			}
			if h[8] != byte(tt.abi) || binary.LittleEndian.Uint16(h[18:]) != 190 {
				t.Errorf("EI_ABIVERSION %d e_machine %d, want %d and 190", h[8], binary.LittleEndian.Uint16(h[18:]), tt.abi)
			}
		})
	}
}

// A sparse 1 GiB library takes almost no disk.
func TestWriteSparseSOIsSparse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "libhuge.so")
	const size = 1 << 30
	if err := WriteSparseSO(path, size, []Entry{{Kind: Cubin, SM: 80}, {Kind: PTX, SM: 90}}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < size-64<<10 || fi.Size() > size+64<<10 {
		t.Errorf("file is %d bytes, want about %d", fi.Size(), size)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Fatal("no stat_t for the file")
	}
	if used := st.Blocks * 512; used > 1<<20 {
		t.Errorf("file uses %d bytes of disk, want under 1 MiB (holes)", used)
	}
}

// The worked example is the byte sequence of an nvcc .fatbin.c file.
func TestWorkedExampleContainer(t *testing.T) {
	b := WorkedExampleContainer()
	prefix := []byte{0x50, 0xED, 0x55, 0xBA, 0x01, 0x00, 0x10, 0x00, 0x38, 0x03, 0, 0, 0, 0, 0, 0,
		0x02, 0x00, 0x01, 0x01, 0x40, 0x00, 0x00, 0x00, 0xf8, 0x02}
	if !bytes.HasPrefix(b, prefix) {
		t.Errorf("container starts % x, want % x", b[:len(prefix)], prefix)
	}
	if len(b) != 0x10+0x40+0x2f8 {
		t.Errorf("length %#x, want %#x", len(b), 0x10+0x40+0x2f8)
	}
	if b[0x10+0x1c] != 0x46 || !bytes.HasPrefix(b[0x50:], []byte{0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x33, 0x07}) {
		t.Errorf("arch byte %#x or payload start % x differs from the note", b[0x10+0x1c], b[0x50:0x59])
	}
}
