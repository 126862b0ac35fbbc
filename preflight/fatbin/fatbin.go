// Package fatbin lists the GPU code a shared library carries for the CUDA
// runtime to load: the cubins and PTX in the fatbins of its .nv_fatbin
// section. It reads headers and the heads of payloads and seeks past the
// rest. The layout and its sources are in docs/fatbin.md; all fields are
// little-endian.
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

// SectionName is the ELF section whose fatbins the CUDA runtime loads
// (fatbinary_section.h). __nv_relfatbin is nvlink's input, never loaded:
// it is not scanned (docs/fatbin.md).
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
	// flagArchSpecific marks an entry nvcc builds for an 'a' target.
	flagArchSpecific = 0x100000
)

// Limits that keep a corrupt or hostile file cheap to scan.
const (
	maxResync   = 64 << 20 // read per section looking for the next magic
	maxWarnings = 32       // the rest are counted in the last one
	maxGroups   = 64       // target sets listed; real libraries have a handful
)

// maxEntries bounds Result.Entries, which only tests and debugging read
// (Images and Fatbins keep counting past it); a variable for the tests.
var maxEntries = 1 << 13

// Kind is an entry's raw kind field.
type Kind uint16

// Entry kinds, NVIDIA fatbinary.h; 0x10 is "ELF_ALT" per nvopen-tools.
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

// compressionOf reads the compression bits; ZSTD, the newer, wins both.
func compressionOf(flags uint64) Compression {
	switch {
	case flags&flagZSTD != 0:
		return CompressionZSTD
	case flags&flagLZ4 != 0:
		return CompressionLZ4
	}
	return CompressionNone
}

// Entry is one fatbin entry's header, at Offset in Section, in the
// Container'th container (from 0), whose header is at ContainerOffset. Arch
// is the target with its suffix, zero for kinds skipped; the code version is
// the cubin ABI or the PTX ISA. NoCode marks an entry without a function (a
// device-link stub) and Defect one that cannot load: neither is an image.
type Entry struct {
	Section              string
	Offset               int64
	Kind                 Kind
	Arch                 gpuarch.Arch
	RawArch              uint32
	CodeMajor, CodeMinor uint16
	Flags                uint64
	Compression          Compression
	HeaderSize           uint32
	PayloadSize          uint64
	DecompressedSize     uint64
	Container            int
	ContainerOffset      int64
	NoCode               bool
	Defect               string
}

// Result is what a library's fatbins hold: the entries in file order (at
// most maxEntries), the distinct loadable images, and the fatbins grouped
// by the images they carry. The runtime picks one image per fatbin, so a
// GPU runs a library only where every fatbin has one for it.
type Result struct {
	Sections   []string
	Containers int
	Entries    []Entry
	Images     []facts.KernelImage
	Fatbins    []facts.FatbinGroup
	Warnings   []string
}

// ScanFile scans the fatbins of the ELF file at path. A file without fatbin
// sections is not an error: its Result is empty.
func ScanFile(path string) (Result, error) {
	// O_NONBLOCK: a FIFO in a library's place cannot block the open.
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
	// Readahead would read most of a cold library for a few headers.
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM)
	// elfbound, not debug/elf, which holds every section header.
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

// section is what the scanner reads of an ELF section.
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
