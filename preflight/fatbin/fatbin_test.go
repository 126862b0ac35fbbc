package fatbin_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin"
	ft "github.com/gpu-preflight/gpu-preflight/preflight/fatbin/fatbintest"
	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
)

func cubin(sm int) ft.Entry { return ft.Entry{Kind: ft.Cubin, SM: sm} }

func ptx(sm, major, minor int) ft.Entry {
	return ft.Entry{Kind: ft.PTX, SM: sm, PTXMajor: major, PTXMinor: minor}
}

func img(kind, arch, ptxVersion string, count int) facts.KernelImage {
	return facts.KernelImage{Kind: kind, Arch: arch, PTXVersion: ptxVersion, Count: count}
}

// scanBytes scans an in-memory ELF file.
func scanBytes(t testing.TB, b []byte) fatbin.Result {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("debug/elf rejects the synthetic file: %v", err)
	}
	r, err := fatbin.Scan(f)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	return r
}

func soBytes(t testing.TB, so ft.SO) []byte {
	t.Helper()
	b, err := so.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawSection wraps hand-made section bytes in an ELF file.
func rawSection(t testing.TB, data []byte) []byte {
	t.Helper()
	b, err := ft.ELF(ft.Section{Name: ".nv_fatbin", Flags: elf.SHF_ALLOC, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// containerHeader returns a 16-byte container header.
func containerHeader(fatSize uint64) []byte {
	h := make([]byte, 16)
	binary.LittleEndian.PutUint32(h, 0xBA55ED50)
	binary.LittleEndian.PutUint16(h[4:], 1)
	binary.LittleEndian.PutUint16(h[6:], 16)
	binary.LittleEndian.PutUint64(h[8:], fatSize)
	return h
}

// entryHeader returns a 64-byte entry header.
func entryHeader(kind uint16, headerSize uint32, payloadSize uint64, arch uint32) []byte {
	h := make([]byte, 64)
	binary.LittleEndian.PutUint16(h, kind)
	binary.LittleEndian.PutUint16(h[2:], 0x0101)
	binary.LittleEndian.PutUint32(h[4:], headerSize)
	binary.LittleEndian.PutUint64(h[8:], payloadSize)
	binary.LittleEndian.PutUint16(h[0x18:], 7)
	binary.LittleEndian.PutUint16(h[0x1a:], 1)
	binary.LittleEndian.PutUint32(h[0x1c:], arch)
	binary.LittleEndian.PutUint64(h[0x28:], 0x11)
	return h
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// Each case is one layout rule of docs/fatbin.md "Layout".
func TestScanLayoutRules(t *testing.T) {
	tests := []struct {
		name           string
		file           []byte // when set, scanned instead of so
		so             ft.SO
		wantImages     []facts.KernelImage
		wantContainers int
		wantEntries    int
		wantWarn       []string // substrings, in order; none means no warnings
	}{
		{
			name:           "OneCubin",
			so:             ft.SO{Fatbin: ft.Containers([]ft.Entry{cubin(80)})},
			wantImages:     []facts.KernelImage{img("cubin", "sm_80", "", 1)},
			wantContainers: 1, wantEntries: 1,
		},
		{
			name:           "ContainersBackToBack",
			so:             ft.SO{Fatbin: ft.Containers([]ft.Entry{cubin(80), cubin(86)}, []ft.Entry{cubin(80)}, []ft.Entry{ptx(80, 7, 8)})},
			wantImages:     []facts.KernelImage{img("cubin", "sm_80", "", 2), img("cubin", "sm_86", "", 1), img("ptx", "compute_80", "7.8", 1)},
			wantContainers: 3, wantEntries: 4,
		},
		{
			name: "EntryHeaderSizeOver64IsHonoured",
			so: ft.SO{Fatbin: ft.Containers([]ft.Entry{
				{Kind: ft.Cubin, SM: 100, HeaderSize: 112, ABI: 8},
				{Kind: ft.PTX, SM: 120, HeaderSize: 80, PTXMajor: 8, PTXMinor: 7},
				cubin(120),
			})},
			wantImages:     []facts.KernelImage{img("cubin", "sm_100", "", 1), img("cubin", "sm_120", "", 1), img("ptx", "compute_120", "8.7", 1)},
			wantContainers: 1, wantEntries: 3,
		},
		{
			name:           "ContainerHeaderSizeOver16IsHonoured",
			so:             ft.SO{Fatbin: []ft.Container{{HeaderSize: 32, Entries: []ft.Entry{cubin(75)}}, {Entries: []ft.Entry{cubin(80)}}}},
			wantImages:     []facts.KernelImage{img("cubin", "sm_75", "", 1), img("cubin", "sm_80", "", 1)},
			wantContainers: 2, wantEntries: 2,
		},
		{
			name:           "UnknownKindIsSkipped",
			so:             ft.SO{Fatbin: ft.Containers([]ft.Entry{{Kind: ft.NVVM, SM: 80}, {Kind: 0x40, SM: 90}, cubin(80)})},
			wantImages:     []facts.KernelImage{img("cubin", "sm_80", "", 1)},
			wantContainers: 1, wantEntries: 3,
		},
		{
			name:           "Kind0x10IsACubin",
			so:             ft.SO{Fatbin: ft.Containers([]ft.Entry{{Kind: ft.CubinAlt, SM: 90}})},
			wantImages:     []facts.KernelImage{img("cubin", "sm_90", "", 1)},
			wantContainers: 1, wantEntries: 1,
		},
		{
			name: "BadMagicIsScannedPast",
			so: ft.SO{Fatbin: []ft.Container{
				{BadMagic: true, Entries: []ft.Entry{cubin(70), cubin(75)}},
				{Entries: []ft.Entry{cubin(80)}},
			}},
			wantImages:     []facts.KernelImage{img("cubin", "sm_80", "", 1)},
			wantContainers: 1, wantEntries: 1,
			wantWarn: []string{"corrupt container at .nv_fatbin offset 0 (bad magic 0x0badf00d): skipped to next magic at 272"},
		},
		{
			name:           "PaddingBetweenContainersIsScannedPast",
			so:             ft.SO{Fatbin: []ft.Container{{Pad: 24, Entries: []ft.Entry{cubin(80)}}, {Entries: []ft.Entry{cubin(90)}}}},
			wantImages:     []facts.KernelImage{img("cubin", "sm_80", "", 1), img("cubin", "sm_90", "", 1)},
			wantContainers: 2, wantEntries: 2,
			wantWarn: []string{"bad magic 0x00000000): skipped to next magic at 168"},
		},
		{
			name:           "BadMagicWithNoContainerAfter",
			so:             ft.SO{Fatbin: []ft.Container{{Entries: []ft.Entry{cubin(80)}}, {BadMagic: true, Entries: []ft.Entry{cubin(90)}}}},
			wantImages:     []facts.KernelImage{img("cubin", "sm_80", "", 1)},
			wantContainers: 1, wantEntries: 1,
			wantWarn: []string{"corrupt container at .nv_fatbin offset 144 (bad magic 0x0badf00d): no further container found"},
		},
		{
			name:           "PayloadLargerThanSection",
			so:             ft.SO{Fatbin: ft.Containers([]ft.Entry{cubin(70), {Kind: ft.Cubin, SM: 80, PayloadSizeField: 1 << 40}, cubin(90)})},
			wantImages:     []facts.KernelImage{img("cubin", "sm_70", "", 1)},
			wantContainers: 1, wantEntries: 2,
			wantWarn: []string{"entry at .nv_fatbin offset 144: payload of 1099511627776 bytes runs past the container end at 400"},
		},
		{
			name:           "FatSizeLargerThanSection",
			so:             ft.SO{Fatbin: []ft.Container{{FatSize: 1 << 60, Entries: []ft.Entry{cubin(80), cubin(86)}}}},
			wantImages:     []facts.KernelImage{img("cubin", "sm_80", "", 1), img("cubin", "sm_86", "", 1)},
			wantContainers: 1, wantEntries: 2,
			wantWarn: []string{"container at .nv_fatbin offset 0 claims 1152921504606846976 bytes, past the section end at 272"},
		},
		{
			name:           "EntryHeaderSizeUnder64IsCorrupt",
			so:             ft.SO{Fatbin: ft.Containers([]ft.Entry{cubin(80), {Kind: ft.Cubin, SM: 90, HeaderSizeField: 32}}, []ft.Entry{cubin(86)})},
			wantImages:     []facts.KernelImage{img("cubin", "sm_80", "", 1), img("cubin", "sm_86", "", 1)},
			wantContainers: 2, wantEntries: 2,
			wantWarn: []string{"corrupt entry at .nv_fatbin offset 144 (header size 32): rest of the container skipped"},
		},
		{
			name:           "PTXISAVersionIsTheCodeVersion",
			so:             ft.SO{Fatbin: ft.Containers([]ft.Entry{ptx(80, 7, 8), ptx(90, 8, 4), ptx(90, 8, 4), ptx(90, 8, 8)})},
			wantImages:     []facts.KernelImage{img("ptx", "compute_80", "7.8", 1), img("ptx", "compute_90", "8.4", 2), img("ptx", "compute_90", "8.8", 1)},
			wantContainers: 1, wantEntries: 4,
		},
		{
			// __nv_relfatbin is nvlink's input, never loaded (SectionName).
			name: "RelocatableSectionIsNotScanned",
			so: ft.SO{
				Fatbin:    ft.Containers([]ft.Entry{cubin(80)}),
				RelFatbin: ft.Containers([]ft.Entry{ptx(70, 7, 0)}, []ft.Entry{cubin(60)}),
			},
			wantImages:     []facts.KernelImage{img("cubin", "sm_80", "", 1)},
			wantContainers: 1, wantEntries: 1,
		},
		{
			name: "ArchsSortedAndSuffixFromCubinHeader",
			so: ft.SO{Fatbin: ft.Containers(
				[]ft.Entry{{Kind: ft.Cubin, SM: 90, Accel: true}, cubin(90), cubin(86)},
				[]ft.Entry{cubin(80), cubin(70), {Kind: ft.Cubin, SM: 90, Accel: true}},
			)},
			wantImages: []facts.KernelImage{
				img("cubin", "sm_70", "", 1), img("cubin", "sm_80", "", 1), img("cubin", "sm_86", "", 1),
				img("cubin", "sm_90", "", 1), img("cubin", "sm_90a", "", 2),
			},
			wantContainers: 2, wantEntries: 6,
		},
		{
			name:           "ABI8CubinSuffix",
			so:             ft.SO{Fatbin: ft.Containers([]ft.Entry{{Kind: ft.Cubin, SM: 100, ABI: 8, Accel: true}, {Kind: ft.Cubin, SM: 120, ABI: 8}})},
			wantImages:     []facts.KernelImage{img("cubin", "sm_100a", "", 1), img("cubin", "sm_120", "", 1)},
			wantContainers: 1, wantEntries: 2,
		},
		{
			name: "PTXSuffixFromTargetLine",
			so: ft.SO{Fatbin: ft.Containers([]ft.Entry{
				{Kind: ft.PTX, SM: 90, Accel: true, PTXMajor: 8, PTXMinor: 0},
				{Kind: ft.PTX, SM: 100, Family: true, PTXMajor: 8, PTXMinor: 8},
			})},
			wantImages:     []facts.KernelImage{img("ptx", "compute_90a", "8.0", 1), img("ptx", "compute_100f", "8.8", 1)},
			wantContainers: 1, wantEntries: 2,
		},
		{
			name: "CompressedPayloadsKeepTheHeaderArch",
			so: ft.SO{Fatbin: ft.Containers([]ft.Entry{
				{Kind: ft.Cubin, SM: 90, Accel: true, Compression: ft.ZSTD},
				{Kind: ft.PTX, SM: 80, Compression: ft.LZ4, PTXMajor: 7, PTXMinor: 0},
			})},
			wantImages:     []facts.KernelImage{img("cubin", "sm_90", "", 1), img("ptx", "compute_80", "7.0", 1)},
			wantContainers: 1, wantEntries: 2,
		},
		{
			name:           "EmptyContainerThenOne",
			so:             ft.SO{Fatbin: []ft.Container{{}, {Entries: []ft.Entry{cubin(80)}}}},
			wantImages:     []facts.KernelImage{img("cubin", "sm_80", "", 1)},
			wantContainers: 2, wantEntries: 1,
		},
		{
			name:           "ZeroPayloadIsNotAnImage",
			file:           nil, // set below
			wantContainers: 1, wantEntries: 1,
		},
		{
			name:           "ArchZeroIsNotAnImage",
			so:             ft.SO{Fatbin: ft.Containers([]ft.Entry{{Kind: ft.Cubin, SM: 0}, cubin(80)})},
			wantImages:     []facts.KernelImage{img("cubin", "sm_80", "", 1)},
			wantContainers: 1, wantEntries: 2,
		},
		{
			name:           "WorkedExampleFromTheNote",
			file:           nil, // set below
			wantImages:     []facts.KernelImage{img("cubin", "sm_70", "", 1)},
			wantContainers: 1, wantEntries: 1,
		},
		{
			name:           "TrailingGarbageTooShortForAContainer",
			file:           nil, // set below
			wantImages:     []facts.KernelImage{img("cubin", "sm_70", "", 1)},
			wantContainers: 1, wantEntries: 1,
			wantWarn: []string{"8 trailing bytes at .nv_fatbin offset 840 are too few for a container header"},
		},
	}
	files := map[string][]byte{
		"ZeroPayloadIsNotAnImage":              rawSection(t, cat(containerHeader(64), entryHeader(2, 64, 0, 80))),
		"WorkedExampleFromTheNote":             rawSection(t, ft.WorkedExampleContainer()),
		"TrailingGarbageTooShortForAContainer": rawSection(t, cat(ft.WorkedExampleContainer(), []byte{1, 2, 3, 4, 5, 6, 7, 8})),
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := files[tt.name]
			if b == nil {
				b = soBytes(t, tt.so)
			}
			r := scanBytes(t, b)
			if !reflect.DeepEqual(r.Images, tt.wantImages) && (len(r.Images) > 0 || len(tt.wantImages) > 0) {
				t.Errorf("Images:\n got %+v\nwant %+v", r.Images, tt.wantImages)
			}
			if r.Containers != tt.wantContainers {
				t.Errorf("Containers = %d, want %d", r.Containers, tt.wantContainers)
			}
			if len(r.Entries) != tt.wantEntries {
				t.Errorf("len(Entries) = %d, want %d", len(r.Entries), tt.wantEntries)
			}
			if len(r.Warnings) != len(tt.wantWarn) {
				t.Fatalf("Warnings = %q, want %d matching %q", r.Warnings, len(tt.wantWarn), tt.wantWarn)
			}
			for i, w := range tt.wantWarn {
				if !strings.Contains(r.Warnings[i], w) {
					t.Errorf("Warnings[%d] = %q, want it to contain %q", i, r.Warnings[i], w)
				}
			}
		})
	}
}

// Entries keep the header fields as stored.
func TestEntryFields(t *testing.T) {
	r := scanBytes(t, soBytes(t, ft.SO{Fatbin: ft.Containers([]ft.Entry{
		{Kind: ft.Cubin, SM: 90, Accel: true},
		{Kind: ft.PTX, SM: 80, PTXMajor: 7, PTXMinor: 8, Compression: ft.ZSTD},
		{Kind: ft.Cubin, SM: 86, Compression: ft.LZ4, HeaderSize: 112},
	})}))
	want := []fatbin.Entry{
		{Section: ".nv_fatbin", Offset: 16, Kind: fatbin.KindCubin, Arch: gpuarch.Arch{Major: 9, Minor: 0, Suffix: 'a'}, RawArch: 90,
			CodeMajor: 1, CodeMinor: 7, Flags: 0x11, HeaderSize: 64, PayloadSize: 64},
		{Section: ".nv_fatbin", Offset: 144, Kind: fatbin.KindPTX, Arch: gpuarch.Arch{Major: 8, Minor: 0, PTX: true}, RawArch: 80,
			CodeMajor: 7, CodeMinor: 8, Flags: 0x8011, Compression: fatbin.CompressionZSTD, HeaderSize: 72, PayloadSize: 8, DecompressedSize: 32},
		{Section: ".nv_fatbin", Offset: 224, Kind: fatbin.KindCubin, Arch: gpuarch.Arch{Major: 8, Minor: 6}, RawArch: 86,
			CodeMajor: 1, CodeMinor: 7, Flags: 0x2011, Compression: fatbin.CompressionLZ4, HeaderSize: 112, PayloadSize: 8, DecompressedSize: 32},
	}
	if !reflect.DeepEqual(r.Entries, want) {
		t.Errorf("Entries:\n got %+v\nwant %+v", r.Entries, want)
	}
	if got := r.Entries[1].Compression.String(); got != "zstd" {
		t.Errorf("Compression.String() = %q, want zstd", got)
	}
}

// A library without fatbin sections is a fact, not an error.
func TestNoFatbinSections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "libplain.so")
	if err := ft.WriteELF(path, ft.Section{Name: ".text", Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Data: []byte{0xc3}}); err != nil {
		t.Fatal(err)
	}
	r, err := fatbin.ScanFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Sections) != 0 || r.Containers != 0 || len(r.Images) != 0 || len(r.Warnings) != 0 {
		t.Errorf("got %+v, want an empty Result", r)
	}
}

// ScanFile says what failed for a missing file and for a file that is not ELF.
func TestScanFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := fatbin.ScanFile(filepath.Join(dir, "missing.so")); err == nil || !strings.Contains(err.Error(), "missing.so") {
		t.Errorf("missing file: err = %v, want one naming the file", err)
	}
	text := filepath.Join(dir, "notelf.so")
	if err := os.WriteFile(text, []byte("INPUT(-lfoo)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := fatbin.ScanFile(text); err == nil || !strings.Contains(err.Error(), "not a readable ELF file") {
		t.Errorf("linker script: err = %v, want not a readable ELF file", err)
	}
	if _, err := fatbin.ScanFile(dir); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("directory: err = %v, want not a regular file", err)
	}
	// A FIFO must not block the scan waiting for a writer.
	fifo := filepath.Join(dir, "libfifo.so")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := fatbin.ScanFile(fifo); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("FIFO: err = %v, want not a regular file", err)
	}
}

// A file cut short inside its fatbin keeps what was read and says where it ends.
func TestTruncatedSection(t *testing.T) {
	tests := []struct {
		name       string
		cut        int64 // bytes of the file kept
		wantImages []facts.KernelImage
		wantWarn   string
	}{
		// Layout: .nv_fatbin at 64; container 0 at 64, entries at 80 (sm_80,
		// 128 bytes) and 208 (sm_86); container 1 at 336 (sm_90).
		{"InsideSecondEntryPayload", 64 + 16 + 128 + 64 + 10, []facts.KernelImage{img("cubin", "sm_80", "", 1)},
			"section .nv_fatbin is truncated: it claims 416 bytes, the file holds 218"},
		{"InsideSecondEntryHeader", 64 + 16 + 128 + 20, []facts.KernelImage{img("cubin", "sm_80", "", 1)},
			"section .nv_fatbin is truncated: it claims 416 bytes, the file holds 164"},
		{"InsideSecondContainerHeader", 64 + 272 + 8, []facts.KernelImage{img("cubin", "sm_80", "", 1), img("cubin", "sm_86", "", 1)},
			"the file holds 280"},
		{"AtSectionStart", 64, nil, "the file holds 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			full := soBytes(t, ft.SO{Fatbin: ft.Containers([]ft.Entry{cubin(80), cubin(86)}, []ft.Entry{cubin(90)})})
			f, err := elf.NewFile(bytes.NewReader(full))
			if err != nil {
				t.Fatal(err)
			}
			if s := f.Section(".nv_fatbin"); s.Offset != 64 || s.Size != 416 {
				t.Fatalf("layout changed: .nv_fatbin at %d size %d, want 64 and 416", s.Offset, s.Size)
			}
			// Keep the section headers after .nv_fatbin readable, so that
			// debug/elf opens the file and the section reader meets the cut.
			r, err := fatbin.Scan(mustELF(t, cutReader{full, tt.cut, 64 + 416}))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.Images, tt.wantImages) && (len(r.Images) > 0 || len(tt.wantImages) > 0) {
				t.Errorf("Images = %+v, want %+v", r.Images, tt.wantImages)
			}
			if len(r.Warnings) == 0 || !strings.Contains(r.Warnings[0], tt.wantWarn) {
				t.Errorf("Warnings = %q, want the first to contain %q", r.Warnings, tt.wantWarn)
			}
		})
	}
}

// cutReader reads b but pretends the bytes from cut up to tail are past the
// end of the file, as a file cut inside .nv_fatbin would be to the section
// reader; the ELF section headers and .shstrtab from tail on stay readable.
type cutReader struct {
	b         []byte
	cut, tail int64
}

func (c cutReader) ReadAt(p []byte, off int64) (int, error) {
	tail := c.tail
	if off >= tail {
		return bytes.NewReader(c.b).ReadAt(p, off)
	}
	if off >= c.cut {
		return 0, io.EOF
	}
	n := copy(p, c.b[off:min(c.cut, tail)])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func mustELF(t testing.TB, r io.ReaderAt) *elf.File {
	t.Helper()
	f, err := elf.NewFile(r)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A file really cut short on disk: ScanFile still answers.
func TestScanFileOnTruncatedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "libcut.so")
	so := ft.SO{
		Extra:  []ft.Section{{Name: ".text", Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Data: []byte{0xc3}}},
		Fatbin: ft.Containers([]ft.Entry{cubin(80)}, []ft.Entry{cubin(90)}),
	}
	if err := so.Write(path); err != nil {
		t.Fatal(err)
	}
	// Cutting the file drops the section header table too, so debug/elf
	// cannot open it: ScanFile must say so rather than panic or pretend.
	if err := os.Truncate(path, 64+8+16+128+10); err != nil {
		t.Fatal(err)
	}
	if _, err := fatbin.ScanFile(path); err == nil || !strings.Contains(err.Error(), "not a readable ELF file") {
		t.Errorf("err = %v, want not a readable ELF file", err)
	}
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r     io.ReaderAt
	n     atomic.Int64
	calls atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	c.calls.Add(1)
	return n, err
}

// hugeLibrary writes a sparse 1 GiB library shaped like a framework's:
// containers of 5 cubins and a PTX each.
func hugeLibrary(t testing.TB, containers int) string {
	t.Helper()
	lists := make([][]ft.Entry, containers)
	for i := range lists {
		lists[i] = []ft.Entry{cubin(70), cubin(75), cubin(80), cubin(86), {Kind: ft.Cubin, SM: 90, Accel: true}, ptx(90, 8, 4)}
	}
	path := filepath.Join(t.TempDir(), "libtorch_cuda.so")
	if err := ft.WriteSparseSO(path, 1<<30, lists...); err != nil {
		t.Fatal(err)
	}
	return path
}

// Only headers are read: what a scan reads grows with the number of entries,
// not with their payloads, and a 1 GiB library of 3,072 entries costs well
// under 1 MiB of reads.
func TestScanReadsOnlyHeaders(t *testing.T) {
	const containers = 512
	path := hugeLibrary(t, containers)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fi, _ := f.Stat(); fi.Size() < 1<<30-1<<20 {
		t.Fatalf("library is %d bytes, want about 1 GiB", fi.Size())
	}
	c := &countingReaderAt{r: f}
	r, err := fatbin.Scan(mustELF(t, c))
	if err != nil {
		t.Fatal(err)
	}
	want := []facts.KernelImage{
		img("cubin", "sm_70", "", containers), img("cubin", "sm_75", "", containers), img("cubin", "sm_80", "", containers),
		img("cubin", "sm_86", "", containers), img("cubin", "sm_90a", "", containers), img("ptx", "compute_90", "8.4", containers),
	}
	if !reflect.DeepEqual(r.Images, want) || r.Containers != containers || len(r.Warnings) != 0 {
		t.Fatalf("scan of the 1 GiB library: %d containers, images %+v, warnings %q", r.Containers, r.Images, r.Warnings)
	}
	// Per container: its 16-byte header; per entry 128 bytes, a 64-byte entry
	// header and the cubin's 64-byte ELF header after it, read at once; per
	// PTX 256 bytes of text more. Plus what debug/elf reads of the ELF headers.
	const elfOverhead = 16 << 10
	bound := int64(containers * (16 + 6*128 + 256 + elfOverhead/containers))
	got := c.n.Load()
	t.Logf("read %d bytes in %d reads of a 1 GiB library", got, c.calls.Load())
	if got > bound || got >= 1<<20 {
		t.Errorf("read %d bytes, want at most %d and under 1 MiB: payloads are being read", got, bound)
	}
}

// The bar (docs/sources.md, "What gpu-preflight is held to"): a 1 GiB
// library's fatbins in under 100 ms warm, held here on every run of the
// unit suite. CPU time, not wall time: other builds sharing the CPUs
// stretch the wall clock, not the scan's work. The least of five scans, so
// that a garbage collection of the test's own setup is not counted.
func TestScanFile1GiBUnder100ms(t *testing.T) {
	const bar = 100 * time.Millisecond
	path := hugeLibrary(t, 1024)                     // 6,144 entries, as the benchmark below
	if _, err := fatbin.ScanFile(path); err != nil { // warm the page cache
		t.Fatal(err)
	}
	least := time.Duration(1 << 62)
	for range 5 {
		before := cpuTime(t)
		r, err := fatbin.ScanFile(path)
		if err != nil || r.Containers != 1024 {
			t.Fatalf("ScanFile: %d containers, %v", r.Containers, err)
		}
		least = min(least, time.Duration(cpuTime(t)-before))
	}
	t.Logf("a scan of the 1 GiB library: %v of CPU at least, of five", least)
	if least > bar {
		t.Errorf("a scan of a 1 GiB library of 6,144 entries took %v of CPU at best of five, over the %v bar", least, bar)
	}
}

// The same, as a benchmark:
//
//	go test -run '^$' -bench ScanFile1GiB ./preflight/fatbin/
func BenchmarkScanFile1GiB(b *testing.B) {
	path := hugeLibrary(b, 1024)                     // 6,144 entries
	if _, err := fatbin.ScanFile(path); err != nil { // warm the page cache
		b.Fatal(err)
	}
	// Wall time suffers when other processes share the CPUs; the process's
	// CPU time per scan (cpu-ns/op) does not.
	before := cpuTime(b)
	n := 0
	for b.Loop() {
		r, err := fatbin.ScanFile(path)
		if err != nil || r.Containers != 1024 {
			b.Fatalf("ScanFile: %d containers, %v", r.Containers, err)
		}
		n++
	}
	b.ReportMetric(float64(cpuTime(b)-before)/float64(n), "cpu-ns/op")
}

// cpuTime returns the process's user and system CPU time in nanoseconds.
func cpuTime(t testing.TB) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// rawPTX returns a .nv_fatbin with one PTX entry for sm whose text is text.
func rawPTX(t testing.TB, sm uint32, text string) []byte {
	t.Helper()
	payload := []byte(text)
	payload = append(payload, make([]byte, 8-len(payload)%8)...)
	h := entryHeader(1, 64, uint64(len(payload)), sm)
	binary.LittleEndian.PutUint32(h[0x18:], 8<<16|4) // code version [8,4]
	return rawSection(t, cat(containerHeader(uint64(64+len(payload))), h, payload))
}

// The PTX ".target" line is found anywhere in a small PTX, which is read
// whole (up to noCodeProbeMax), and up to 1 KiB into a large one.
func TestPTXTargetAfterLongPreamble(t *testing.T) {
	tests := []struct {
		name     string
		preamble int
		body     int // bytes of code after the .target line
		want     string
	}{
		{"WithinFirstRead", 100, 0, "compute_90a"},
		{"PastFirstRead", 600, 0, "compute_90a"},
		{"SmallIsReadWhole", 1100, 0, "compute_90a"},
		{"LargeWithinPeek", 600, 80 << 10, "compute_90a"},
		{"LargePastPeekLimitReadsPlain", 1100, 80 << 10, "compute_90"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := "//" + strings.Repeat("x", tt.preamble) + "\n.version 8.4\n.target sm_90a\n.address_size 64\n" +
				".visible .entry k()\n{\n" + strings.Repeat("ret;\n", tt.body/5) + "}\n"
			r := scanBytes(t, rawPTX(t, 90, text))
			want := []facts.KernelImage{img("ptx", tt.want, "8.4", 1)}
			if !reflect.DeepEqual(r.Images, want) {
				t.Errorf("Images = %+v, want %+v", r.Images, want)
			}
		})
	}
}

// Many corrupt regions give a bounded list of warnings that says how many
// were left out.
func TestWarningsAreBounded(t *testing.T) {
	var cs []ft.Container
	for range 40 {
		cs = append(cs, ft.Container{Entries: []ft.Entry{cubin(80), {Kind: ft.Cubin, SM: 80, HeaderSizeField: 8}}})
	}
	r := scanBytes(t, soBytes(t, ft.SO{Fatbin: cs}))
	if len(r.Warnings) != 33 || r.Warnings[32] != "8 more warnings left out" {
		t.Errorf("got %d warnings ending %q, want 33 ending \"8 more warnings left out\"", len(r.Warnings), r.Warnings[len(r.Warnings)-1])
	}
	if want := []facts.KernelImage{img("cubin", "sm_80", "", 40)}; !reflect.DeepEqual(r.Images, want) || r.Containers != 40 {
		t.Errorf("Images = %+v, Containers = %d, want %+v and 40", r.Images, r.Containers, want)
	}
}

// After a corrupt container the scan reads forward at most 64 MiB for the
// next magic, so a corrupt 1 GiB library still scans quickly.
func TestResyncIsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "libcorrupt.so")
	so := ft.SO{Fatbin: []ft.Container{
		{BadMagic: true, Entries: []ft.Entry{cubin(80)}, Pad: 100 << 20},
		{Entries: []ft.Entry{cubin(90)}},
	}}
	if err := so.Write(path); err != nil {
		t.Fatal(err)
	}
	r, err := fatbin.ScanFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Images) != 0 || len(r.Warnings) != 2 ||
		!strings.Contains(r.Warnings[0], "gave up looking for a container magic in .nv_fatbin after reading 67108864 bytes") ||
		!strings.Contains(r.Warnings[1], "no further container found") {
		t.Errorf("Images %+v, Warnings %q: want none, and a give-up warning", r.Images, r.Warnings)
	}
	// Within the budget the next container is found.
	so.Fatbin[0].Pad = 1 << 20
	if err := so.Write(path); err != nil {
		t.Fatal(err)
	}
	r, err = fatbin.ScanFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []facts.KernelImage{img("cubin", "sm_90", "", 1)}; !reflect.DeepEqual(r.Images, want) {
		t.Errorf("Images = %+v, want %+v (warnings %q)", r.Images, want, r.Warnings)
	}
}

// Sections that hold no file data are reported, not read.
func TestNobitsAndCompressedSectionsAreNotRead(t *testing.T) {
	for _, tt := range []struct {
		sec  ft.Section
		want string
	}{
		{ft.Section{Name: ".nv_fatbin", Type: elf.SHT_NOBITS, Flags: elf.SHF_ALLOC, Size: 1 << 40},
			"section .nv_fatbin has no data in the file (SHT_NOBITS): not scanned"},
		{ft.Section{Name: ".nv_fatbin", Flags: elf.SHF_ALLOC | elf.SHF_COMPRESSED, Data: make([]byte, 64)},
			"section .nv_fatbin is ELF-compressed: not scanned"},
	} {
		b, err := ft.ELF(tt.sec)
		if err != nil {
			t.Fatal(err)
		}
		r := scanBytes(t, b)
		if !reflect.DeepEqual(r.Warnings, []string{tt.want}) || len(r.Images) != 0 || len(r.Sections) != 1 {
			t.Errorf("got %+v, want no images and warning %q", r, tt.want)
		}
	}
}

func TestScanNil(t *testing.T) {
	if _, err := fatbin.Scan(nil); err == nil {
		t.Error("Scan(nil) succeeded, want an error")
	}
}
