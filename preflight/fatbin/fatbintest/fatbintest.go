// Package fatbintest builds synthetic ELF64 shared objects with CUDA
// fatbins in them, for tests of code that reads fatbins. It uses the
// standard library only and writes the layout of
// docs/fatbin.md "Layout" (NVIDIA fatbinary.h, jiegec's
// fatbinary, ZLUDA, cubinsizes.py): a 16-byte container header, entries
// with a 64-byte (or longer) header, payloads whose cubins begin with a
// real-looking CUDA ELF header.
//
// Large payloads are holes in the written file, so WriteSparseSO makes a
// 1 GiB library that costs a few KiB of disk.
package fatbintest

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
)

// Kind is an entry kind (fatbinary.h).
type Kind uint16

// Entry kinds. CubinAlt is the 0x10 "ELF_ALT" kind nvopen-tools reports;
// NVVM is NVVM IR, which readers skip.
const (
	PTX      Kind = 1
	Cubin    Kind = 2
	NVVM     Kind = 8
	CubinAlt Kind = 0x10
)

// Compression is the compression flag to set on an entry.
type Compression int

// Compression flags (docs/fatbin.md "Layout").
const (
	None Compression = iota
	LZ4              // flag 0x2000
	ZSTD             // flag 0x8000
)

// Flag values written in entry headers (docs/fatbin.md "Layout").
const (
	Flag64Bit = 0x1
	FlagLinux = 0x10
	FlagLZ4   = 0x2000
	FlagZSTD  = 0x8000
)

// Entry describes one fatbin entry to write.
type Entry struct {
	Kind Kind
	// SM is the decimal arch written in the header: 80 for sm_80.
	SM int
	// Accel marks an architecture-specific ('a') target: a cubin gets the
	// accelerator bit in its ELF e_flags (0x800 under ABI 7, 0x8 under
	// ABI 8), a PTX text gets ".target sm_XYa".
	Accel bool
	// Family marks a family ('f') target; only a PTX text shows it
	// (".target sm_XYf"), as nvcc's cubins for sm_100f and sm_100 are the same.
	Family bool
	// ABI is the cubin's EI_ABIVERSION, 7 (before CUDA 13) by default, or 8.
	ABI int
	// PTXMajor and PTXMinor are a PTX entry's ISA version, written as the
	// header's code version and in ".version"; 8.4 by default.
	PTXMajor, PTXMinor int
	// HeaderSize is the entry header's length: 64 for a cubin and 72 for PTX
	// (64 plus the ptxas-options pair options_offset points at) by default;
	// less than 64 counts as 64 (use HeaderSizeField for a corrupt one).
	HeaderSize int
	// PayloadSize is the payload's length. By default it is what the
	// payload needs (a cubin ELF header, a short PTX text); a larger size
	// pads with zeros, which are holes in a written file.
	PayloadSize int64
	// Compression sets a compression flag and makes the payload look
	// compressed (a ZSTD frame magic for ZSTD).
	Compression Compression
	// Flags are ORed into the default flags (64-bit, Linux).
	Flags uint64
	// HeaderSizeField and PayloadSizeField, when non-zero, are written in
	// place of the true sizes, to make corrupt entries.
	HeaderSizeField  uint32
	PayloadSizeField uint64
}

// Container is one fatbin container to write.
type Container struct {
	Entries []Entry
	// BadMagic writes 0x0BADF00D instead of the magic 0xBA55ED50.
	BadMagic bool
	// HeaderSize is the container header's length, 16 by default (and at
	// least); more pads it with zeros.
	HeaderSize int
	// FatSize, when non-zero, is written in place of the entries' true length.
	FatSize uint64
	// Pad adds that many zero bytes after the container, as clang's "weird
	// next offset" does (docs/fatbin.md "Layout").
	Pad int
}

// SO is a synthetic shared object.
type SO struct {
	// Fatbin is .nv_fatbin; RelFatbin is __nv_relfatbin, written only when
	// it has containers.
	Fatbin    []Container
	RelFatbin []Container
	// Extra sections are written before the fatbin sections.
	Extra []Section
}

func (so SO) sections() []Section {
	secs := append([]Section{}, so.Extra...)
	secs = append(secs, FatbinSection(".nv_fatbin", so.Fatbin...))
	if len(so.RelFatbin) > 0 {
		secs = append(secs, FatbinSection("__nv_relfatbin", so.RelFatbin...))
	}
	return secs
}

// Write writes the shared object to path, with zero ranges as holes.
func (so SO) Write(path string) error { return WriteELF(path, so.sections()...) }

// Bytes returns the shared object's bytes (at most 64 MiB).
func (so SO) Bytes() ([]byte, error) { return ELF(so.sections()...) }

// Containers turns entry lists into containers, one per list.
func Containers(lists ...[]Entry) []Container {
	cs := make([]Container, len(lists))
	for i, l := range lists {
		cs[i] = Container{Entries: l}
	}
	return cs
}

// WriteSO writes a shared object whose .nv_fatbin holds one container per
// entry list.
func WriteSO(path string, containers ...[]Entry) error {
	return SO{Fatbin: Containers(containers...)}.Write(path)
}

// WriteSparseSO writes a shared object of about size bytes (within a few
// KiB): the entries' payloads share the space evenly and are holes after
// their first bytes. It fails when size is too small for the entries.
func WriteSparseSO(path string, size int64, containers ...[]Entry) error {
	n := 0
	for _, c := range containers {
		n += len(c)
	}
	if n == 0 {
		return fmt.Errorf("fatbintest: WriteSparseSO needs at least one entry")
	}
	overhead := layoutELF(SO{Fatbin: Containers(containers...)}.sections()).size
	share := (size - overhead) / int64(n) / 8 * 8
	if share < 1024 {
		return fmt.Errorf("fatbintest: %d bytes is too small for %d sparse entries", size, n)
	}
	big := make([][]Entry, len(containers))
	for i, c := range containers {
		big[i] = make([]Entry, len(c))
		for j, e := range c {
			e.PayloadSize = share
			big[i][j] = e
		}
	}
	return WriteSO(path, big...)
}

// FatbinSection returns a fatbin section (SHF_ALLOC, align 8) named name
// holding the containers back to back.
func FatbinSection(name string, containers ...Container) Section {
	s := Section{Name: name, Flags: elf.SHF_ALLOC, Align: 8}
	var off int64
	for _, c := range containers {
		off = c.put(&s, off)
	}
	s.Size = off
	return s
}

var le = binary.LittleEndian

// put lays the container out in s at off and returns where the next begins.
func (c Container) put(s *Section, off int64) int64 {
	hsize := max(c.HeaderSize, 16)
	body := off + int64(hsize)
	pos := body
	for _, e := range c.Entries {
		pos = e.put(s, pos)
	}
	fatSize := uint64(pos - body)
	if c.FatSize != 0 {
		fatSize = c.FatSize
	}
	h := make([]byte, hsize)
	magic := uint32(0xBA55ED50)
	if c.BadMagic {
		magic = 0x0BADF00D
	}
	le.PutUint32(h[0:], magic)
	le.PutUint16(h[4:], 1)
	le.PutUint16(h[6:], uint16(hsize))
	le.PutUint64(h[8:], fatSize)
	s.pieces = append(s.pieces, piece{off, h})
	return pos + int64(c.Pad)
}

// put lays the entry out in s at off and returns where the next begins.
func (e Entry) put(s *Section, off int64) int64 {
	hsize := max(e.HeaderSize, 64)
	if e.HeaderSize == 0 && e.Kind == PTX {
		hsize = 72
	}
	head := e.payloadHead()
	psize := max(e.PayloadSize, int64(len(head)))
	psize = (psize + 7) / 8 * 8 // stored sizes are padded to 8

	flags := uint64(Flag64Bit|FlagLinux) | e.Flags
	switch e.Compression {
	case LZ4:
		flags |= FlagLZ4
	case ZSTD:
		flags |= FlagZSTD
	}
	major, minor := 1, 7 // cubin ABI code version [1,7]
	if e.Kind.isCubin() && e.abi() >= 8 {
		minor = 8
	}
	if e.Kind == PTX {
		major, minor = e.ptxVersion()
	}
	h := make([]byte, hsize)
	le.PutUint16(h[0x00:], uint16(e.Kind))
	le.PutUint16(h[0x02:], 0x0101)
	hfield := uint32(hsize)
	if e.HeaderSizeField != 0 {
		hfield = e.HeaderSizeField
	}
	le.PutUint32(h[0x04:], hfield)
	pfield := uint64(psize)
	if e.PayloadSizeField != 0 {
		pfield = e.PayloadSizeField
	}
	le.PutUint64(h[0x08:], pfield)
	if e.Compression != None {
		le.PutUint32(h[0x10:], uint32(min(psize, 1<<32-1)))
		le.PutUint64(h[0x38:], uint64(psize)*4)
	}
	if e.Kind == PTX && hsize >= 72 {
		le.PutUint32(h[0x14:], 0x40) // options_offset -> {u32 off, u32 len} = {0, 0}
	}
	le.PutUint16(h[0x18:], uint16(minor))
	le.PutUint16(h[0x1A:], uint16(major))
	le.PutUint32(h[0x1C:], uint32(e.SM))
	le.PutUint64(h[0x28:], flags)
	s.pieces = append(s.pieces, piece{off, h})
	s.pieces = append(s.pieces, piece{off + int64(hsize), head})
	return off + int64(hsize) + psize
}

func (k Kind) isCubin() bool { return k == Cubin || k == CubinAlt }

func (e Entry) abi() int {
	if e.ABI == 0 {
		return 7
	}
	return e.ABI
}

func (e Entry) ptxVersion() (int, int) {
	if e.PTXMajor == 0 && e.PTXMinor == 0 {
		return 8, 4
	}
	return e.PTXMajor, e.PTXMinor
}

// payloadHead returns the non-zero start of the payload.
func (e Entry) payloadHead() []byte {
	switch {
	case e.Compression == ZSTD:
		return []byte{0x28, 0xB5, 0x2F, 0xFD, 0x60, 0x00, 0x01, 0x00}
	case e.Compression == LZ4:
		return []byte{0xF0, 0x1F, 0x7F, 'E', 'L', 'F', 0x02, 0x01}
	case e.Kind.isCubin():
		return CubinHeader(e.SM, e.abi(), e.Accel)
	case e.Kind == PTX:
		major, minor := e.ptxVersion()
		suffix := ""
		if e.Accel {
			suffix = "a"
		} else if e.Family {
			suffix = "f"
		}
		return fmt.Appendf(nil, "//\n// Generated by NVIDIA NVVM Compiler\n//\n// Compiler Build ID: synthetic\n"+
			"// Cuda compilation tools, release 12.4, V12.4.131\n// Based on NVVM 7.0.1\n//\n\n"+
			".version %d.%d\n.target sm_%d%s\n.address_size 64\n\n.visible .entry k()\n{\nret;\n}\n\x00", major, minor, e.SM, suffix)
	}
	return []byte{0xde, 0xad, 0xbe, 0xef}
}

// CubinHeader returns the 64-byte ELF header a cubin for sm starts with:
// 7f 45 4c 46, ELFCLASS64, little-endian, OSABI 0x33 (CUDA), EI_ABIVERSION
// abi, ET_EXEC, e_machine 190 (EM_CUDA), and e_flags at 0x30 per LLVM's
// BinaryFormat/ELF.h EF_CUDA_*: under ABI 7 the SM in bits 0-7, the virtual
// SM in bits 16-23, EF_CUDA_64BIT_ADDRESS 0x400 and, for 'a',
// EF_CUDA_ACCELERATORS_V1 0x800; under ABI 8 the SM in bits 8-15 and, for
// 'a', EF_CUDA_ACCELERATORS 0x8 (docs/fatbin.md "Layout").
func CubinHeader(sm, abi int, accel bool) []byte {
	h := make([]byte, 64)
	copy(h, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0x33, byte(abi)})
	le.PutUint16(h[16:], uint16(elf.ET_EXEC))
	le.PutUint16(h[18:], 190)
	le.PutUint32(h[20:], 1)
	var flags uint32
	if abi >= 8 {
		flags = uint32(sm&0xff) << 8
		if accel {
			flags |= 0x8
		}
	} else {
		flags = uint32(sm&0xff) | uint32(sm&0xff)<<16 | 0x400
		if accel {
			flags |= 0x800
		}
	}
	le.PutUint32(h[0x30:], flags)
	le.PutUint16(h[52:], 64) // e_ehsize
	le.PutUint16(h[58:], 64) // e_shentsize
	return h
}

// WorkedExampleContainer returns the container of the nvcc .fatbin.c quads of
// worked example, byte for byte as the nvcc .fatbin.c quads give it: magic
// 50 ED 55 BA, version 1, header size 0x10, fatSize 0x338; one ELF entry
// (kind 2, version 0x0101, header 0x40) with payload size 0x2f8, code
// version [1,7], arch 0x46 (sm_70), flags 0x11; a payload that begins
// 7f 45 4c 46 02 01 01 33 07 and is zeros after its ELF header.
func WorkedExampleContainer() []byte {
	b := make([]byte, 0x10+0x338)
	le.PutUint64(b[0x00:], 0x00100001ba55ed50)
	le.PutUint64(b[0x08:], 0x338)
	e := b[0x10:]
	le.PutUint64(e[0x00:], 0x0000004001010002) // kind 2, version 0x0101, header 0x40
	le.PutUint64(e[0x08:], 0x2f8)
	le.PutUint64(e[0x18:], 0x0000004600010007) // minor 7, major 1, arch 0x46
	le.PutUint64(e[0x28:], 0x11)
	copy(e[0x40:], CubinHeader(70, 7, false))
	return b
}
