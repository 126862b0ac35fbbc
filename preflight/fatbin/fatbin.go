// Package fatbin lists the GPU code a shared library carries for the CUDA
// runtime to load: the cubins and PTX in the fatbins of its .nv_fatbin
// section, one fatbin per translation unit or device link. It reads
// headers (and the head of small payloads) and seeks past the rest, so
// scanning a 1 GiB library reads a few hundred KiB.
//
// The layout and its sources are in docs/fatbin.md (NVIDIA fatbinary.h and
// fatbinary_section.h; jiegec/fatbinary; ZLUDA dark_api/src/fatbin.rs;
// pytorch/test-infra cubinsizes.py; what nvcc 11.8 and 12.4 write, listed
// with cuobjdump, in testdata/nvcc). All fields are little-endian.
package fatbin

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"

	"github.com/gpu-preflight/gpu-preflight/preflight/elfbound"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
	"golang.org/x/sys/unix"
)

// SectionName is the ELF section that holds the fatbins the CUDA runtime
// registers and loads (fatbinary_section.h FATBIN_DATA_SECTION_NAME).
//
// __nv_relfatbin is deliberately not scanned. fatbinary_section.h calls it
// "pre-linked relocatable fatbin data": input for nvlink when the library
// is device-linked into something else, never loaded by the runtime. nvcc's
// device-link step puts libcudadevrt's relocatable objects there (sm_35 to
// sm_90 and compute_90 PTX with CUDA 11.8) into every library built without
// a real target, so counting it made a PTX-only compute_80 library look
// like it carried cubins for a V100 (measured: testdata/nvcc/ptx80.so).
// cuobjdump agrees: --list-elf and --list-ptx show only .nv_fatbin when it
// exists, and the relocatable images only with -all.
const SectionName = ".nv_fatbin"

// Container header, NVIDIA fatbinary.h struct fatBinaryHeader (note 1.2).
const (
	containerMagic     = 0xBA55ED50
	containerHeaderLen = 16 // magic u32, version u16, headerSize u16, fatSize u64
	containerAlign     = 8  // ".align 8"; headerSize and fatSize are multiples of 8
)

// Entry header (note 1.3): at least 64 bytes; header_size says how many.
const (
	entryHeaderMin = 64

	offKind           = 0x00 // u16
	offVersion        = 0x02 // u16, 0x0101
	offHeaderSize     = 0x04 // u32
	offPayloadSize    = 0x08 // u64
	offCompressedSize = 0x10 // u32
	offCodeMinor      = 0x18 // u16
	offCodeMajor      = 0x1A // u16
	offArch           = 0x1C // u32, decimal SM
	offFlags          = 0x28 // u64
	offDecompressed   = 0x38 // u64
)

// Entry flags (docs/fatbin.md).
const (
	flagLZ4  = 0x2000 // LZ4 block; nvcc's default for PTX, -Xfatbin -compress-all for cubins
	flagZSTD = 0x8000 // newer CUDA, "balanced"/"size" compress modes
	// flagArchSpecific is set on every entry nvcc 12.4 builds for an 'a'
	// target (sm_90a, compute_90a): 0x100011 / 0x102011 against 0x11 /
	// 0x2011, measured on testdata/nvcc. archSuffix reads it.
	flagArchSpecific = 0x100000
)

// Limits that keep a corrupt or hostile file cheap to scan.
const (
	// maxResync bounds how far, per section, the scanner reads forward looking
	// for the next container magic after a corrupt one.
	maxResync = 64 << 20
	// maxWarnings bounds Result.Warnings; the rest are counted in the last one.
	maxWarnings = 32
	// maxGroups bounds Result.Fatbins. Real libraries have a handful of
	// distinct target sets (one per build flavour of their kernels); past
	// the bound, further sets are not listed.
	maxGroups = 64
)

// maxEntries bounds Result.Entries (about 128 bytes each): only tests and
// debugging read the entries, the checks read Images and Fatbins, which
// keep counting past it. The largest library in the notes
// (libcublasLt.so.13) has 5,712 entries; 8192 cost 1 MiB where 2^18 (a
// hostile 262 000-entry library) cost 119 MiB. A variable so that a test
// can lower it.
var maxEntries = 1 << 13

// Kind is an entry's raw kind field.
type Kind uint16

// Entry kinds, NVIDIA fatbinary.h; 0x10 is "ELF_ALT" per nvopen-tools, which
// cuobjdump counts as ELF (nvopen-tools' fatbin format notes, uncorroborated).
const (
	KindPTX      Kind = 1
	KindCubin    Kind = 2
	KindCubinAlt Kind = 0x10
)

// IsCubin reports whether the entry holds a cubin (ELF, SASS).
func (k Kind) IsCubin() bool { return k == KindCubin || k == KindCubinAlt }

// IsPTX reports whether the entry holds PTX text.
func (k Kind) IsPTX() bool { return k == KindPTX }

// String returns "cubin", "ptx", or "kind 0xN" for kinds this package skips.
func (k Kind) String() string {
	switch {
	case k.IsCubin():
		return "cubin"
	case k.IsPTX():
		return "ptx"
	}
	return "kind 0x" + strconv.FormatUint(uint64(k), 16)
}

// Compression is how an entry's payload is compressed.
type Compression uint8

// Compression kinds, from the entry flags (docs/fatbin.md "Layout").
const (
	CompressionNone Compression = iota
	CompressionLZ4
	CompressionZSTD
)

// String returns "", "lz4" or "zstd".
func (c Compression) String() string {
	switch c {
	case CompressionLZ4:
		return "lz4"
	case CompressionZSTD:
		return "zstd"
	}
	return ""
}

// compressionOf reads the compression bits. No entry is known to set both;
// if one does, ZSTD wins because it is the newer scheme.
func compressionOf(flags uint64) Compression {
	switch {
	case flags&flagZSTD != 0:
		return CompressionZSTD
	case flags&flagLZ4 != 0:
		return CompressionLZ4
	}
	return CompressionNone
}

// Entry is one fatbin entry's header.
type Entry struct {
	// Section is the ELF section the entry is in; Offset is where its header
	// starts in that section.
	Section string
	Offset  int64
	Kind    Kind
	// Arch is the target: the header's decimal arch, the suffix archSuffix
	// found, and PTX set for PTX entries. Zero for kinds this package skips.
	Arch gpuarch.Arch
	// RawArch is the header's arch field as stored.
	RawArch uint32
	// CodeMajor and CodeMinor are the header's code version: the cubin ABI
	// ([1,7]) for a cubin, the PTX ISA version ([8,4]) for PTX.
	CodeMajor, CodeMinor uint16
	Flags                uint64
	Compression          Compression
	HeaderSize           uint32
	PayloadSize          uint64
	// DecompressedSize is the header's uncompressed size, meaningful when
	// Compression is set.
	DecompressedSize uint64
	// Container is the index of the fatbin (container) the entry is in,
	// counted from 0 in file order.
	Container int
	// ContainerOffset is where that container's header starts in Section.
	ContainerOffset int64
	// NoCode is set on an entry that holds no function: the cubin stub
	// nvcc's device-link step adds for every real target of a library built
	// without -rdc, or the cubin and PTX of a translation unit without
	// kernels. cuobjdump lists them, but they are no kernel image, so they
	// are left out of Result.Images and Result.Fatbins. Only payloads small
	// enough to read whole (noCodeProbeMax) are looked into.
	NoCode bool
	// Defect says why the entry cannot be a loadable image (truncated, empty,
	// impossible arch); such entries are left out of Result.Images.
	Defect string
}

// Result is what a library's fatbins hold.
type Result struct {
	// Sections are the fatbin sections found, in SectionNames order.
	Sections []string
	// Containers counts the container headers read, over all sections.
	Containers int
	// Entries are the entry headers read, in file order (at most maxEntries;
	// a warning says when more were left out).
	Entries []Entry
	// Images are the distinct loadable targets, sorted by kind, then arch,
	// then PTX version, each with how many entries carry it.
	Images []facts.KernelImage
	// Fatbins groups the fatbins that carry at least one image by the set
	// of images they carry. The runtime picks one image per fatbin, so a
	// GPU runs a library's kernels only where each fatbin has an image for
	// it: the union in Images is not enough to tell.
	Fatbins []facts.FatbinGroup
	// Warnings describe corrupt or truncated regions and what was skipped.
	Warnings []string
}

// ScanFile scans the fatbins of the ELF file at path. A file without fatbin
// sections is not an error: its Result is empty.
func ScanFile(path string) (Result, error) {
	// O_NONBLOCK so that a FIFO where a library was expected cannot block
	// the open; it has no effect on regular files.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Result{}, fmt.Errorf("fatbin: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return Result{}, fmt.Errorf("fatbin: %w", err)
	} else if !fi.Mode().IsRegular() {
		return Result{}, fmt.Errorf("fatbin: %s is not a regular file (%s)", path, fi.Mode().Type())
	}
	// The scan reads a few hundred bytes every few hundred KiB: the
	// kernel's readahead would read most of a cold 1 GiB library for
	// them. A hint only; a failure changes nothing but speed.
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM)
	// elfbound rather than debug/elf: debug/elf keeps a value per section
	// header (43 MiB for a library of 65 535 sections), elfbound walks them
	// a block at a time.
	ef, err := elfbound.Open(f)
	if err != nil {
		return Result{}, fmt.Errorf("fatbin: %s is not a readable ELF file: %w", path, err)
	}
	es, ok, err := ef.SectionByName(SectionName)
	if err != nil {
		return Result{}, fmt.Errorf("fatbin: %s is not a readable ELF file: %w", path, err)
	}
	var sec *section
	if ok {
		sec = &section{name: SectionName, typ: es.Type, flags: es.Flags, size: es.Size,
			open: func() io.ReadSeeker { return ef.SectionReader(es) }}
	}
	r, err := scanSection(sec)
	if err != nil {
		return r, fmt.Errorf("%w (in %s)", err, path)
	}
	return r, nil
}

// section is what the scanner reads of an ELF section: from elfbound, or
// in the tests from debug/elf (Scan in export_test.go).
type section struct {
	name  string
	typ   elfbound.SectionType
	flags elfbound.SectionFlag
	size  uint64
	open  func() io.ReadSeeker
}

// scanSection scans the fatbin section sec; nil is a file without one.
func scanSection(sec *section) (Result, error) {
	s := scanner{images: map[imageKey]int{}, groups: map[string]int{}}
	if sec != nil {
		s.res.Sections = append(s.res.Sections, SectionName)
		if err := s.section(sec); err != nil {
			s.finish()
			return s.res, fmt.Errorf("fatbin: reading section %s: %w", SectionName, err)
		}
	}
	s.finish()
	return s.res, nil
}
