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
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/preflight/elfbound"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
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

// imageKey is what makes two entries the same image.
type imageKey struct {
	arch       gpuarch.Arch
	ptxVersion [2]uint16 // zero for cubins
}

type scanner struct {
	res    Result
	images map[imageKey]int
	// inContainer is the images of the container being read; groups counts
	// containers by groupKey of their images, keyed in groupOrder order.
	inContainer []imageKey
	inSet       map[imageKey]bool // inContainer's members
	groups      map[string]int
	groupOrder  [][]imageKey
	warnings    int // including those past maxWarnings
	entriesLeft int // entries not kept past maxEntries

	// Per section.
	name      string
	container int64 // the offset of the container being read
	rs        io.ReadSeeker
	size      int64 // readable size: the header's, or less if the file ends early
	resync    int64 // bytes read so far looking for a magic

	// ahead holds the bytes at aheadOff read by prefetch, so that an entry
	// header and the cubin ELF header after it cost one read, not two.
	ahead    []byte
	aheadOff int64
	// hdr and peek are reused buffers for entry headers and payload heads.
	hdr, peek []byte
	// lz4 is the buffer payloads are decompressed into.
	lz4 []byte
}

// prefetchLen is one entry header and a cubin's ELF header.
const prefetchLen = entryHeaderMin + cubinELFHeader

func (s *scanner) warnf(format string, args ...any) {
	s.warnings++
	if s.warnings <= maxWarnings {
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf(format, args...))
	}
}

// finish turns the image counts into sorted facts and closes the warnings.
func (s *scanner) finish() {
	if s.entriesLeft > 0 {
		s.warnf("%d more entries were counted in Images but not listed in Entries", s.entriesLeft)
		s.entriesLeft = 0
	}
	if s.warnings > maxWarnings {
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("%d more warnings left out", s.warnings-maxWarnings))
		s.warnings = maxWarnings
	}
	keys := make([]imageKey, 0, len(s.images))
	for k := range s.images {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareImages)
	s.res.Images = s.res.Images[:0]
	for _, k := range keys {
		s.res.Images = append(s.res.Images, k.image(s.images[k]))
	}
	s.res.Fatbins = s.res.Fatbins[:0]
	for _, g := range s.groupOrder {
		fg := facts.FatbinGroup{Count: s.groups[groupKey(g)]}
		for _, k := range g {
			fg.Images = append(fg.Images, k.image(0))
		}
		s.res.Fatbins = append(s.res.Fatbins, fg)
	}
	slices.SortStableFunc(s.res.Fatbins, func(a, b facts.FatbinGroup) int { return cmp.Compare(b.Count, a.Count) })
}

// compareImages orders images by kind (cubin first), arch, suffix and PTX
// version.
func compareImages(a, b imageKey) int {
	if a.arch.PTX != b.arch.PTX {
		if a.arch.PTX {
			return 1 // "cubin" before "ptx"
		}
		return -1
	}
	return cmp.Or(
		cmp.Compare(a.arch.Major, b.arch.Major),
		cmp.Compare(a.arch.Minor, b.arch.Minor),
		cmp.Compare(a.arch.Suffix, b.arch.Suffix),
		cmp.Compare(a.ptxVersion[0], b.ptxVersion[0]),
		cmp.Compare(a.ptxVersion[1], b.ptxVersion[1]),
	)
}

// image is k as a fact; count is how many entries carry it.
func (k imageKey) image(count int) facts.KernelImage {
	img := facts.KernelImage{Kind: "cubin", Arch: k.arch.String(), Count: count}
	if k.arch.PTX {
		img.Kind = "ptx"
		img.PTXVersion = fmt.Sprintf("%d.%d", k.ptxVersion[0], k.ptxVersion[1])
	}
	return img
}

// groupKey names a sorted set of images: 8 bytes per image, no
// formatting, since it runs once per container.
func groupKey(g []imageKey) string {
	b := make([]byte, 0, 8*len(g))
	for _, k := range g {
		ptx := byte(0)
		if k.arch.PTX {
			ptx = 1
		}
		b = append(b, byte(k.arch.Major), byte(k.arch.Minor), k.arch.Suffix, ptx,
			byte(k.ptxVersion[0]>>8), byte(k.ptxVersion[0]), byte(k.ptxVersion[1]>>8), byte(k.ptxVersion[1]))
	}
	return string(b)
}

// endContainer files the images of the container just read under its
// group. A container without images (only device-link stubs, or only
// defective entries) is no fatbin a GPU could lack an image for.
func (s *scanner) endContainer() {
	g := s.inContainer
	s.inContainer = nil
	clear(s.inSet)
	if len(g) == 0 {
		return
	}
	slices.SortFunc(g, compareImages)
	g = slices.Compact(g)
	key := groupKey(g)
	if s.groups[key] == 0 {
		if len(s.groupOrder) >= maxGroups {
			key = "" // counted, not listed: see maxGroups
		} else {
			s.groupOrder = append(s.groupOrder, g)
		}
	}
	s.groups[key]++
}

// errTruncated marks a read that ran into the end of the file.
var errTruncated = errors.New("file ends early")

// prefetch reads up to n bytes at off (fewer at the section's end) for
// readAt to serve. A failed read is not an error here: readAt will meet it.
func (s *scanner) prefetch(off int64, n int) {
	n = int(min(int64(n), s.size-off))
	if n <= 0 {
		return
	}
	if cap(s.ahead) < n {
		s.ahead = make([]byte, n)
	}
	s.ahead, s.aheadOff = s.ahead[:n], off
	if err := s.readFull(s.ahead, off); err != nil {
		s.ahead = s.ahead[:0]
	}
}

// readAt reads len(buf) bytes at off in the current section, from what
// prefetch read when it holds them.
func (s *scanner) readAt(buf []byte, off int64) error {
	if off >= s.aheadOff && off-s.aheadOff <= int64(len(s.ahead)) &&
		int64(len(buf)) <= int64(len(s.ahead))-(off-s.aheadOff) {
		copy(buf, s.ahead[off-s.aheadOff:])
		return nil
	}
	return s.readFull(buf, off)
}

// readFull reads len(buf) bytes at off in the current section from the file.
func (s *scanner) readFull(buf []byte, off int64) error {
	if _, err := s.rs.Seek(off, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.ReadFull(s.rs, buf); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return errTruncated
		}
		return err
	}
	return nil
}

// section walks one fatbin section's containers back to back.
func (s *scanner) section(sec *section) error {
	s.name = sec.name
	s.resync = 0
	s.ahead = s.ahead[:0]
	if sec.typ == elfbound.SHT_NOBITS {
		s.warnf("section %s has no data in the file (SHT_NOBITS): not scanned", sec.name)
		return nil
	}
	if sec.flags&elfbound.SHF_COMPRESSED != 0 {
		// Reading it would mean decompressing it whole; no toolchain writes one.
		s.warnf("section %s is ELF-compressed: not scanned", sec.name)
		return nil
	}
	s.rs = sec.open()
	if sec.size > 1<<62 {
		s.size = 1 << 62
	} else {
		s.size = int64(sec.size)
	}
	if err := s.fitToFile(); err != nil {
		return err
	}

	hdr := make([]byte, containerHeaderLen)
	off := int64(0)
	for off < s.size {
		if s.size-off < containerHeaderLen {
			s.trailing(off)
			return nil
		}
		s.prefetch(off, containerHeaderLen+prefetchLen)
		if err := s.readAt(hdr, off); err != nil {
			return s.readFailed(err, off)
		}
		magic := binary.LittleEndian.Uint32(hdr[0:])
		headerSize := int64(binary.LittleEndian.Uint16(hdr[6:]))
		fatSize := binary.LittleEndian.Uint64(hdr[8:])
		if magic != containerMagic || headerSize < containerHeaderLen || headerSize > s.size-off {
			why := fmt.Sprintf("bad magic 0x%08x", magic)
			if magic == containerMagic {
				why = fmt.Sprintf("header size %d", headerSize)
			}
			next, err := s.findMagic(off)
			if err != nil {
				return err
			}
			if next < 0 {
				s.warnf("corrupt container at %s offset %d (%s): no further container found", s.name, off, why)
				return nil
			}
			s.warnf("corrupt container at %s offset %d (%s): skipped to next magic at %d", s.name, off, why, next)
			off = next
			continue
		}
		s.res.Containers++
		body := off + headerSize
		end := s.size
		if fatSize <= uint64(s.size-body) {
			end = body + int64(fatSize)
		} else {
			s.warnf("container at %s offset %d claims %d bytes, past the section end at %d", s.name, off, fatSize, s.size)
		}
		s.container = off
		err := s.entries(body, end)
		s.endContainer()
		if err != nil {
			return err
		}
		off = end
	}
	return nil
}

// fitToFile shrinks s.size to what the file really holds when the section
// header claims more, so that payload bounds are checked against real
// bytes. It costs a few one-byte reads.
func (s *scanner) fitToFile() error {
	if s.size == 0 {
		return nil
	}
	one := make([]byte, 1)
	err := s.readAt(one, s.size-1)
	if err == nil {
		return nil
	}
	if err != errTruncated {
		return err
	}
	// Binary search for the first offset that cannot be read.
	lo, hi := int64(0), s.size-1 // lo: readable length known; hi: unreadable offset
	for lo < hi {
		mid := lo + (hi-lo)/2
		switch err := s.readAt(one, mid); err {
		case nil:
			lo = mid + 1
		case errTruncated:
			hi = mid
		default:
			return err
		}
	}
	s.warnf("section %s is truncated: it claims %d bytes, the file holds %d", s.name, s.size, lo)
	s.size = lo
	return nil
}

// readFailed turns a failed read at off into a warning (truncation) or the
// error to return.
func (s *scanner) readFailed(err error, off int64) error {
	if err == errTruncated {
		s.warnf("section %s is truncated at offset %d", s.name, off)
		return nil
	}
	return err
}

// trailing reports bytes after the last container that are too few for a
// container header, unless they are zero padding.
func (s *scanner) trailing(off int64) {
	buf := make([]byte, s.size-off)
	if err := s.readAt(buf, off); err != nil {
		return
	}
	for _, b := range buf {
		if b != 0 {
			s.warnf("%d trailing bytes at %s offset %d are too few for a container header", len(buf), s.name, off)
			return
		}
	}
}

// findMagic looks for the next container magic at an 8-aligned offset after
// off, reading forward in chunks, at most maxResync bytes per section. It
// returns -1 when there is none (or the budget is spent).
func (s *scanner) findMagic(off int64) (int64, error) {
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], containerMagic)
	pos := (off/containerAlign + 1) * containerAlign
	buf := make([]byte, 64<<10)
	for pos+containerHeaderLen <= s.size {
		if s.resync >= maxResync {
			s.warnf("gave up looking for a container magic in %s after reading %d bytes", s.name, s.resync)
			return -1, nil
		}
		n := int64(len(buf))
		if rest := s.size - pos; rest < n {
			n = rest
		}
		chunk := buf[:n]
		if err := s.readAt(chunk, pos); err != nil {
			if err == errTruncated {
				return -1, nil
			}
			return -1, err
		}
		s.resync += n
		for i := 0; i+4 <= len(chunk); i += containerAlign {
			if [4]byte(chunk[i:i+4]) == magic {
				return pos + int64(i), nil
			}
		}
		pos += n // n is a multiple of 8 unless it is the section's tail
	}
	return -1, nil
}

// entries walks the entries of one container, body to end: each is
// header_size bytes of header followed by payload_size bytes of payload, and
// the next starts right after (note 1.3). Only headers are read.
func (s *scanner) entries(body, end int64) error {
	if s.hdr == nil {
		s.hdr, s.peek = make([]byte, entryHeaderMin), make([]byte, noCodeProbeMax)
	}
	hdr, peek := s.hdr, s.peek
	for pos := body; pos < end; {
		if end-pos < entryHeaderMin {
			s.warnf("container in %s ends with %d bytes at offset %d, too few for an entry header", s.name, end-pos, pos)
			return nil
		}
		if pos < s.aheadOff || pos+entryHeaderMin > s.aheadOff+int64(len(s.ahead)) {
			s.prefetch(pos, int(min(prefetchLen, end-pos)))
		}
		if err := s.readAt(hdr, pos); err != nil {
			return s.readFailed(err, pos)
		}
		e := Entry{
			Section:          s.name,
			Offset:           pos,
			Container:        s.res.Containers - 1,
			ContainerOffset:  s.container,
			Kind:             Kind(binary.LittleEndian.Uint16(hdr[offKind:])),
			HeaderSize:       binary.LittleEndian.Uint32(hdr[offHeaderSize:]),
			PayloadSize:      binary.LittleEndian.Uint64(hdr[offPayloadSize:]),
			CodeMinor:        binary.LittleEndian.Uint16(hdr[offCodeMinor:]),
			CodeMajor:        binary.LittleEndian.Uint16(hdr[offCodeMajor:]),
			RawArch:          binary.LittleEndian.Uint32(hdr[offArch:]),
			Flags:            binary.LittleEndian.Uint64(hdr[offFlags:]),
			DecompressedSize: binary.LittleEndian.Uint64(hdr[offDecompressed:]),
		}
		e.Compression = compressionOf(e.Flags)
		if e.HeaderSize < entryHeaderMin || int64(e.HeaderSize) > end-pos {
			s.warnf("corrupt entry at %s offset %d (header size %d): rest of the container skipped", s.name, pos, e.HeaderSize)
			return nil
		}
		payload := pos + int64(e.HeaderSize)
		next := end
		if e.PayloadSize > uint64(end-payload) {
			e.Defect = "payload runs past the end of its container"
			s.warnf("entry at %s offset %d: payload of %d bytes runs past the container end at %d", s.name, pos, e.PayloadSize, end)
		} else {
			next = payload + int64(e.PayloadSize)
			if e.PayloadSize == 0 {
				e.Defect = "empty payload"
			}
		}
		if e.Kind.IsCubin() || e.Kind.IsPTX() {
			var p payloadView
			if e.Defect == "" {
				var err error
				p, err = s.payloadHead(e, payload, peek)
				if err != nil {
					return err
				}
			}
			s.classify(&e, p)
		}
		s.add(e)
		pos = next
	}
	return nil
}

// payloadView is what was read of an entry's payload: its head (the
// cubin's ELF header, or the start of a PTX text), decompressed when the
// payload is LZ4-compressed, and for a small payload the whole of it.
// told is set when whether it holds code is known without the whole
// payload (an uncompressed cubin's section headers), code then says so.
type payloadView struct {
	head       []byte
	whole      bool // head is the entire (decompressed) payload
	told, code bool
}

// payloadHead reads the part of a payload the suffix and no-code rules look
// at: at most payloadPeek bytes of its head, or all of a payload no larger
// than noCodeProbeMax (noCodeDecompressedMax decompressed). LZ4 payloads
// are decompressed as far as those bytes reach; ZSTD payloads are not
// read. Of a larger uncompressed cubin it reads the section headers. It
// returns an empty view when the file ends first.
func (s *scanner) payloadHead(e Entry, payload int64, buf []byte) (payloadView, error) {
	if e.Compression == CompressionZSTD {
		return payloadView{}, nil
	}
	n := min(int64(ptxPeek), int64(e.PayloadSize))
	if e.Kind.IsCubin() {
		n = min(n, cubinELFHeader)
	}
	whole := false
	if e.PayloadSize <= noCodeProbeMax && (e.Compression == CompressionNone || e.DecompressedSize <= noCodeDecompressedMax) {
		n, whole = int64(e.PayloadSize), true
	}
	if e.Compression == CompressionLZ4 && !whole {
		if e.Kind.IsCubin() {
			// Decompressing every cubin's head would cost a read and
			// a decode per entry (cuBLASLt has 1,931); above the probe
			// size the entry flags tell the suffix (archSuffix).
			return payloadView{}, nil
		}
		n = min(int64(payloadPeek), int64(e.PayloadSize))
	}
	if int64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	head := buf[:n]
	if err := s.readAt(head, payload); err != nil {
		if err == errTruncated {
			return payloadView{}, nil // fitToFile makes this unlikely; tell nothing
		}
		return payloadView{}, err
	}
	if e.Compression == CompressionLZ4 {
		limit := payloadPeek
		if whole {
			limit = int(e.DecompressedSize)
		}
		s.lz4 = lz4Into(s.lz4, head, limit)
		out := s.lz4
		return payloadView{head: out, whole: whole && uint64(len(out)) == e.DecompressedSize}, nil
	}
	if e.Kind.IsCubin() && !whole {
		v := payloadView{head: head}
		v.code, v.told = s.cubinSectionsHaveCode(payload, e.PayloadSize, head)
		return v, nil
	}
	if e.Kind.IsPTX() && !whole && !hasTargetLine(head) && e.PayloadSize > uint64(n) {
		more := buf[n:min(int64(payloadPeek), int64(e.PayloadSize))]
		if err := s.readAt(more, payload+n); err != nil {
			if err == errTruncated {
				return payloadView{head: head}, nil
			}
			return payloadView{}, err
		}
		head = buf[:n+int64(len(more))]
	}
	return payloadView{head: head, whole: whole}, nil
}

// cubinSectionsHaveCode tells whether the uncompressed cubin of size bytes
// at payload, whose ELF header is head, has a .text.* section, reading only
// its section header table and section names (bounded by
// maxCubinSectionTable and maxCubinShstrtab); told is false when they
// cannot be read, and the cubin is then taken to hold code.
func (s *scanner) cubinSectionsHaveCode(payload int64, size uint64, head []byte) (code, told bool) {
	t, ok := cubinSectionTable(head, size)
	if !ok || t.tableLen() > maxCubinSectionTable {
		return true, false
	}
	table := make([]byte, t.tableLen())
	if s.readAt(table, payload+int64(t.shoff)) != nil {
		return true, false
	}
	stroff, strsize := t.section(table, t.shstrndx)
	if stroff > size || strsize > size-stroff || strsize > maxCubinShstrtab {
		return true, false
	}
	strtab := make([]byte, strsize)
	if s.readAt(strtab, payload+int64(stroff)) != nil {
		return true, false
	}
	return t.anyText(table, strtab), true
}

// classify fills e.Arch and counts e as an image when it is loadable.
func (s *scanner) classify(e *Entry, p payloadView) {
	if !validSM(e.RawArch) {
		if e.Defect == "" {
			e.Defect = fmt.Sprintf("arch %d is not an SM number", e.RawArch)
		}
		return
	}
	e.Arch = archFromSM(e.RawArch)
	e.Arch.PTX = e.Kind.IsPTX()
	e.Arch.Suffix = archSuffix(e.Kind, e.RawArch, e.Flags, p.head)
	switch {
	case p.whole:
		e.NoCode = !hasCode(e.Kind, p.head)
	case p.told:
		e.NoCode = !p.code
	}
	if e.Defect != "" || e.NoCode {
		return
	}
	k := imageKey{arch: e.Arch}
	if e.Arch.PTX {
		k.ptxVersion = [2]uint16{e.CodeMajor, e.CodeMinor}
	}
	s.images[k]++
	// A set: a container of 262 000 entries carries a few distinct images,
	// and one of many distinct images is bounded by the file's size.
	if !s.inSet[k] {
		if s.inSet == nil {
			s.inSet = map[imageKey]bool{}
		}
		s.inSet[k] = true
		s.inContainer = append(s.inContainer, k)
	}
}

func (s *scanner) add(e Entry) {
	if len(s.res.Entries) >= maxEntries {
		s.entriesLeft++
		return
	}
	s.res.Entries = append(s.res.Entries, e)
}
