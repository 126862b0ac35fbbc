package fatbintest

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
)

// Section is one section of a synthetic ELF64 file.
type Section struct {
	Name string
	// Type defaults to SHT_PROGBITS.
	Type elf.SectionType
	// Flags defaults to none; fatbin sections get SHF_ALLOC.
	Flags elf.SectionFlag
	// Align defaults to 8, the fatbin sections' ".align 8".
	Align uint64
	// Data is the start of the contents.
	Data []byte
	// Size, when larger than len(Data), makes the section that long; the rest
	// reads as zeros and is a hole in a written file.
	Size int64

	// pieces are further non-zero ranges, for sections built by this package.
	pieces []piece
}

// piece is a non-zero range of a sparse image.
type piece struct {
	off int64
	b   []byte
}

// size returns the section's length.
func (s Section) size() int64 {
	n := max(s.Size, int64(len(s.Data)))
	for _, p := range s.pieces {
		n = max(n, p.off+int64(len(p.b)))
	}
	return n
}

// image is a sparse file: its length and the non-zero ranges in it.
type image struct {
	size   int64
	pieces []piece
}

func (im *image) put(off int64, b []byte) {
	if len(b) > 0 {
		im.pieces = append(im.pieces, piece{off, b})
	}
	im.size = max(im.size, off+int64(len(b)))
}

// ELF header and section header sizes, ELF64 (System V gABI).
const (
	ehdrSize = 64
	shdrSize = 64
)

// layoutELF lays out an ELF64 little-endian ET_DYN file for x86-64 with the
// given sections after a null section and before .shstrtab, then the
// section header table at the end. There are no program headers: debug/elf,
// readelf and objdump read sections without them.
func layoutELF(sections []Section) image {
	var im image
	shstrtab := []byte{0}
	nameOff := make([]uint32, len(sections))
	for i, s := range sections {
		nameOff[i] = uint32(len(shstrtab))
		shstrtab = append(append(shstrtab, s.Name...), 0)
	}
	shstrName := uint32(len(shstrtab))
	shstrtab = append(append(shstrtab, ".shstrtab"...), 0)

	type placed struct{ off, size int64 }
	where := make([]placed, len(sections))
	off := int64(ehdrSize)
	for i, s := range sections {
		align := int64(s.Align)
		if align == 0 {
			align = 8
		}
		off = alignUp(off, align)
		where[i] = placed{off, s.size()}
		if s.Type == elf.SHT_NOBITS {
			continue // occupies no file space, like .bss
		}
		im.put(off, s.Data)
		for _, p := range s.pieces {
			im.put(off+p.off, p.b)
		}
		off += where[i].size
		im.size = max(im.size, off)
	}
	shstrOff := off
	im.put(shstrOff, shstrtab)
	off = alignUp(shstrOff+int64(len(shstrtab)), 8)
	shoff := off

	shnum := len(sections) + 2 // null, sections..., .shstrtab
	shdrs := make([]byte, shnum*shdrSize)
	le := binary.LittleEndian
	for i, s := range sections {
		h := shdrs[(i+1)*shdrSize:]
		typ := s.Type
		if typ == 0 {
			typ = elf.SHT_PROGBITS
		}
		align := s.Align
		if align == 0 {
			align = 8
		}
		le.PutUint32(h[0:], nameOff[i])
		le.PutUint32(h[4:], uint32(typ))
		le.PutUint64(h[8:], uint64(s.Flags))
		if s.Flags&elf.SHF_ALLOC != 0 {
			le.PutUint64(h[16:], uint64(where[i].off)) // sh_addr: loaded at its file offset
		}
		le.PutUint64(h[24:], uint64(where[i].off))
		le.PutUint64(h[32:], uint64(where[i].size))
		le.PutUint64(h[48:], align)
	}
	h := shdrs[(shnum-1)*shdrSize:]
	le.PutUint32(h[0:], shstrName)
	le.PutUint32(h[4:], uint32(elf.SHT_STRTAB))
	le.PutUint64(h[24:], uint64(shstrOff))
	le.PutUint64(h[32:], uint64(len(shstrtab)))
	le.PutUint64(h[48:], 1)
	im.put(shoff, shdrs)

	eh := make([]byte, ehdrSize)
	copy(eh, []byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT), byte(elf.ELFOSABI_NONE)})
	le.PutUint16(eh[16:], uint16(elf.ET_DYN))
	le.PutUint16(eh[18:], uint16(elf.EM_X86_64))
	le.PutUint32(eh[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(eh[40:], uint64(shoff))
	le.PutUint16(eh[52:], ehdrSize)
	le.PutUint16(eh[58:], shdrSize)
	le.PutUint16(eh[60:], uint16(shnum))
	le.PutUint16(eh[62:], uint16(shnum-1))
	im.put(0, eh)
	return im
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// maxInMemory bounds ELF: larger files are for WriteELF, which leaves holes.
const maxInMemory = 64 << 20

// ELF returns a synthetic ELF64 shared object holding sections. It fails for
// files over 64 MiB; write those with WriteELF.
func ELF(sections ...Section) ([]byte, error) {
	im := layoutELF(sections)
	if im.size > maxInMemory {
		return nil, fmt.Errorf("fatbintest: a %d-byte ELF file is too large to build in memory; use WriteELF", im.size)
	}
	b := make([]byte, im.size)
	for _, p := range im.pieces {
		copy(b[p.off:], p.b)
	}
	return b, nil
}

// WriteELF writes a synthetic ELF64 shared object holding sections to path.
// Zero ranges are left as holes, so a 1 GiB file costs only its headers on
// disk.
func WriteELF(path string, sections ...Section) error {
	im := layoutELF(sections)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("fatbintest: %w", err)
	}
	if err := f.Truncate(im.size); err != nil {
		f.Close()
		return fmt.Errorf("fatbintest: sizing %s: %w", path, err)
	}
	for _, p := range im.pieces {
		if _, err := f.WriteAt(p.b, p.off); err != nil {
			f.Close()
			return fmt.Errorf("fatbintest: writing %s: %w", path, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("fatbintest: writing %s: %w", path, err)
	}
	return nil
}
