package elfbound

// The ELF values the readers compare with, from the System V gABI and
// glibc's elf.h. Stated rather than imported: debug/elf's package
// initialisation (zlib, zstd, dwarf) would cost every start.
// TestValuesAreDebugElfs holds each to debug/elf's.

// Class is e_ident[EI_CLASS].
type Class byte

// Classes (EI_CLASS).
const (
	ELFCLASS32 Class = 1
	ELFCLASS64 Class = 2
)

// Data is e_ident[EI_DATA], the byte order.
type Data byte

// Byte orders (EI_DATA).
const (
	ELFDATA2LSB Data = 1
	ELFDATA2MSB Data = 2
)

// Type is e_type.
type Type uint16

// Machine is e_machine.
type Machine uint16

// Machines the CUDA stack is built for.
const (
	EM_X86_64  Machine = 62
	EM_AARCH64 Machine = 183
)

// SectionType is sh_type.
type SectionType uint32

// Section types.
const (
	SHT_DYNAMIC SectionType = 6
	SHT_NOBITS  SectionType = 8
)

// SectionFlag is sh_flags.
type SectionFlag uint64

// SHF_COMPRESSED marks a section whose data is compressed (gABI 2012).
const SHF_COMPRESSED SectionFlag = 0x800

// SHN_XINDEX in e_shstrndx says the real index is in section 0's sh_link.
const SHN_XINDEX = 0xffff

// DynTag is a dynamic entry's d_tag.
type DynTag int64

// Dynamic tags the loader's search reads.
const (
	DT_NULL    DynTag = 0
	DT_NEEDED  DynTag = 1
	DT_SONAME  DynTag = 14
	DT_RPATH   DynTag = 15
	DT_RUNPATH DynTag = 29
	DT_FLAGS_1 DynTag = 0x6ffffffb
)
