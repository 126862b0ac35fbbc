package elfbound

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// File is an ELF file read in place: only its header is held, so its cost
// does not grow with the sections or the string tables.
type File struct {
	Class   Class
	Data    Data
	Type    Type
	Machine Machine

	r         io.ReaderAt
	bo        binary.ByteOrder
	shoff     uint64
	shentsize uint64
	shnum     uint64
	shstrndx  uint64
}

// Section is one section header, its name an offset into the section-name table.
type Section struct {
	Index   int
	NameOff uint32
	Type    SectionType
	Flags   SectionFlag
	Addr    uint64
	Offset  uint64
	Size    uint64
	Link    uint32
	Info    uint32
	Entsize uint64
}

// ErrNotELF is wrapped by Open's error for a file without the ELF magic.
var ErrNotELF = errors.New("not an ELF file")

// Section header sizes (System V gABI).
const (
	shdrSize32 = 40
	shdrSize64 = 64
)

// Open reads the ELF header of r, not the section header table; a count or
// name-table index beyond this package's limits wraps ErrTooLarge.
func Open(r io.ReaderAt) (*File, error) {
	var h [elfHeaderMaxSize]byte
	n, err := r.ReadAt(h[:], 0)
	if n < 4 || string(h[:4]) != "\x7fELF" {
		if err != nil && err != io.EOF {
			return nil, err
		}
		return nil, ErrNotELF
	}
	f := &File{r: r, Class: Class(h[4]), Data: Data(h[5])}
	switch f.Data {
	case ELFDATA2LSB:
		f.bo = binary.LittleEndian
	case ELFDATA2MSB:
		f.bo = binary.BigEndian
	default:
		return nil, fmt.Errorf("ELF data encoding %d is neither little- nor big-endian", h[5])
	}
	bo := f.bo
	var shsize uint64
	switch f.Class {
	case ELFCLASS32:
		if n < 52 {
			return nil, errors.New("ELF header truncated")
		}
		f.shoff = uint64(bo.Uint32(h[0x20:]))
		f.shentsize, f.shnum, f.shstrndx = uint64(bo.Uint16(h[0x2e:])), uint64(bo.Uint16(h[0x30:])), uint64(bo.Uint16(h[0x32:]))
		shsize = shdrSize32
	case ELFCLASS64:
		if n < 64 {
			return nil, errors.New("ELF header truncated")
		}
		f.shoff = bo.Uint64(h[0x28:])
		f.shentsize, f.shnum, f.shstrndx = uint64(bo.Uint16(h[0x3a:])), uint64(bo.Uint16(h[0x3c:])), uint64(bo.Uint16(h[0x3e:]))
		shsize = shdrSize64
	default:
		return nil, fmt.Errorf("ELF class %d is neither 32- nor 64-bit", h[4])
	}
	f.Type = Type(bo.Uint16(h[0x10:]))
	f.Machine = Machine(bo.Uint16(h[0x12:]))
	if f.shoff == 0 {
		f.shnum, f.shstrndx = 0, 0 // no section header table
		return f, nil
	}
	if f.shentsize < shsize {
		return nil, fmt.Errorf("ELF section headers of %d bytes, less than the %d of the class", f.shentsize, shsize)
	}
	// Extended numbering (elf(5)): section 0 holds the real count in
	// sh_size and the real name-table index in sh_link.
	if f.shnum == 0 || f.shstrndx == uint64(SHN_XINDEX) {
		s0, err := f.readSection(0)
		if err != nil {
			return nil, fmt.Errorf("ELF section 0 (extended numbering): %w", err)
		}
		if f.shnum == 0 {
			f.shnum = s0.Size
		}
		if f.shstrndx == uint64(SHN_XINDEX) {
			f.shstrndx = uint64(s0.Link)
		}
	}
	if f.shnum > MaxSections {
		return nil, fmt.Errorf("%w: %d section headers (at most %d)", ErrTooLarge, f.shnum, MaxSections)
	}
	if f.shstrndx >= f.shnum {
		f.shstrndx = 0 // no usable section-name table: names read as ""
	}
	return f, nil
}

// NumSections is how many section headers the file has.
func (f *File) NumSections() int { return int(f.shnum) }

// sectionBlock is one read of section headers: 64 ELF64 headers.
const sectionBlock = 4 << 10

// Sections calls fn on each section header in order until fn returns false.
func (f *File) Sections(fn func(Section) bool) error {
	if f.shnum == 0 {
		// No table (e_shoff 0): e_shentsize was never checked, and may be 0.
		return nil
	}
	perBlock := max(1, sectionBlock/f.shentsize)
	buf := make([]byte, perBlock*f.shentsize)
	for first := uint64(0); first < f.shnum; first += perBlock {
		n := min(perBlock, f.shnum-first)
		b := buf[:n*f.shentsize]
		if err := f.readFull(b, f.shoff+first*f.shentsize); err != nil {
			return fmt.Errorf("reading ELF section headers %d-%d: %w", first, first+n-1, err)
		}
		for i := uint64(0); i < n; i++ {
			if !fn(f.parseSection(int(first+i), b[i*f.shentsize:])) {
				return nil
			}
		}
	}
	return nil
}

// Section reads section header i.
func (f *File) Section(i int) (Section, error) {
	if i < 0 || uint64(i) >= f.shnum {
		return Section{}, fmt.Errorf("ELF section %d of %d", i, f.shnum)
	}
	return f.readSection(uint64(i))
}

func (f *File) readSection(i uint64) (Section, error) {
	b := make([]byte, f.shentsize)
	if err := f.readFull(b, f.shoff+i*f.shentsize); err != nil {
		return Section{}, fmt.Errorf("reading ELF section header %d: %w", i, err)
	}
	return f.parseSection(int(i), b), nil
}

func (f *File) parseSection(i int, b []byte) Section {
	bo := f.bo
	s := Section{Index: i, NameOff: bo.Uint32(b[0:]), Type: SectionType(bo.Uint32(b[4:]))}
	if f.Class == ELFCLASS32 {
		s.Flags = SectionFlag(bo.Uint32(b[8:]))
		s.Addr, s.Offset, s.Size = uint64(bo.Uint32(b[12:])), uint64(bo.Uint32(b[16:])), uint64(bo.Uint32(b[20:]))
		s.Link, s.Info, s.Entsize = bo.Uint32(b[24:]), bo.Uint32(b[28:]), uint64(bo.Uint32(b[36:]))
		return s
	}
	s.Flags = SectionFlag(bo.Uint64(b[8:]))
	s.Addr, s.Offset, s.Size = bo.Uint64(b[16:]), bo.Uint64(b[24:]), bo.Uint64(b[32:])
	s.Link, s.Info, s.Entsize = bo.Uint32(b[40:]), bo.Uint32(b[44:]), bo.Uint64(b[56:])
	return s
}

// SectionNames returns a reader of the section-name table (.shstrtab).
func (f *File) SectionNames() (*StringTable, error) {
	if f.shstrndx == 0 {
		return &StringTable{}, nil
	}
	s, err := f.readSection(f.shstrndx)
	if err != nil {
		return nil, err
	}
	return f.Strings(s), nil
}

// SectionByName returns the first section named name.
func (f *File) SectionByName(name string) (Section, bool, error) {
	names, err := f.SectionNames()
	if err != nil {
		return Section{}, false, err
	}
	var found Section
	var ok bool
	var nameErr error
	err = f.Sections(func(s Section) bool {
		var eq bool
		eq, nameErr = names.Equal(uint64(s.NameOff), name)
		if nameErr != nil {
			return false
		}
		found, ok = s, eq
		return !eq
	})
	return found, ok, errors.Join(err, nameErr)
}

// SectionByType returns the first section of type t.
func (f *File) SectionByType(t SectionType) (Section, bool, error) {
	var found Section
	var ok bool
	err := f.Sections(func(s Section) bool {
		found, ok = s, s.Type == t
		return !ok
	})
	return found, ok, err
}

// SectionReader reads section s's bytes (none for SHT_NOBITS).
func (f *File) SectionReader(s Section) *io.SectionReader {
	if s.Type == SHT_NOBITS || s.Offset > 1<<62 {
		return io.NewSectionReader(f.r, 0, 0)
	}
	return io.NewSectionReader(f.r, int64(s.Offset), int64(min(s.Size, 1<<62)))
}

// Strings returns a reader of the string table in section s.
func (f *File) Strings(s Section) *StringTable {
	if s.Type == SHT_NOBITS || s.Offset > 1<<62 {
		return &StringTable{}
	}
	return &StringTable{r: f.r, off: s.Offset, size: s.Size}
}

// ByteOrder is the file's byte order.
func (f *File) ByteOrder() binary.ByteOrder { return f.bo }

func (f *File) readFull(b []byte, off uint64) error {
	if off > 1<<62 {
		return fmt.Errorf("offset %d beyond any file", off)
	}
	n, err := f.r.ReadAt(b, int64(off))
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}
