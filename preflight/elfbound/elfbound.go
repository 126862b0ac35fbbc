// Package elfbound reads ELF files with memory bounded by constants, not
// by what the file claims. File reads the header and then section headers
// and strings in place, a block at a time (a library of 65 535 sections or
// with an 11 MiB string table costs a few KiB); Check tells, before
// debug/elf reads a file, whether the parts debug/elf.NewFile reads whole
// are of a sane size. NewFile reads the section header table and the
// section-name string table (.shstrtab) as large as the file header and
// the section headers claim; a library whose .shstrtab claims 6 GiB (a
// sparse or hostile file) would cost 6 GiB of memory. Real libraries have
// tens of sections and a .shstrtab of a few hundred bytes.
package elfbound

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Limits on what NewFile would read.
const (
	MaxSections      = 1 << 16 // section headers (64 bytes each in ELF64: 4 MiB)
	MaxSectionNames  = 1 << 20 // bytes of .shstrtab
	elfHeaderMaxSize = 64
)

// ErrTooLarge is wrapped by Check's errors.
var ErrTooLarge = errors.New("ELF headers claim more than gpu-preflight reads")

// Check reads the ELF header of r and the header of its section-name
// table, and returns an error wrapping ErrTooLarge when the section header
// table or the section-name table is larger than MaxSections or
// MaxSectionNames. A file that is not ELF, or too short to tell, passes:
// debug/elf then says what is wrong with it.
func Check(r io.ReaderAt) error {
	var h [elfHeaderMaxSize]byte
	if n, _ := r.ReadAt(h[:], 0); n < 52 || string(h[:4]) != "\x7fELF" {
		return nil
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if h[5] == 2 {
		bo = binary.BigEndian
	}
	var shoff, shsize, sizeOff, linkOff uint64
	var shentsize, shnum, shstrndx uint64
	switch h[4] {
	case 1: // ELFCLASS32
		shoff = uint64(bo.Uint32(h[0x20:]))
		shentsize, shnum, shstrndx = uint64(bo.Uint16(h[0x2e:])), uint64(bo.Uint16(h[0x30:])), uint64(bo.Uint16(h[0x32:]))
		shsize, sizeOff, linkOff = 40, 0x14, 0x18
	case 2: // ELFCLASS64
		shoff = bo.Uint64(h[0x28:])
		shentsize, shnum, shstrndx = uint64(bo.Uint16(h[0x3a:])), uint64(bo.Uint16(h[0x3c:])), uint64(bo.Uint16(h[0x3e:]))
		shsize, sizeOff, linkOff = 64, 0x20, 0x28
	default:
		return nil
	}
	if shoff == 0 || shentsize < shsize {
		return nil
	}
	// readSize and readLink read sh_size and sh_link of section i.
	hdr := make([]byte, shsize)
	readHdr := func(i uint64) bool {
		n, _ := r.ReadAt(hdr, int64(shoff+i*shentsize))
		return n == len(hdr)
	}
	size := func() uint64 {
		if shsize == 40 {
			return uint64(bo.Uint32(hdr[sizeOff:]))
		}
		return bo.Uint64(hdr[sizeOff:])
	}
	// Extended numbering (elf(5)): section 0 holds the real count in
	// sh_size and the real name-table index in sh_link.
	if shnum == 0 || shstrndx == 0xffff {
		if !readHdr(0) {
			return nil
		}
		if shnum == 0 {
			shnum = size()
		}
		if shstrndx == 0xffff {
			shstrndx = uint64(bo.Uint32(hdr[linkOff:]))
		}
	}
	if shnum > MaxSections {
		return fmt.Errorf("%w: %d section headers (at most %d)", ErrTooLarge, shnum, MaxSections)
	}
	if shstrndx == 0 || shstrndx >= shnum || !readHdr(shstrndx) {
		return nil
	}
	if n := size(); n > MaxSectionNames {
		return fmt.Errorf("%w: a section-name table of %d bytes (at most %d)", ErrTooLarge, n, MaxSectionNames)
	}
	return nil
}
