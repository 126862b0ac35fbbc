package fatbin

import (
	"bytes"
	"encoding/binary"
)

// A payload whose stored size is at most noCodeProbeMax bytes (and, when
// LZ4-compressed, at most noCodeDecompressedMax bytes decompressed) is read
// whole to tell whether it holds any function; an uncompressed cubin of any
// size is told by its section headers alone (cubinSectionsHaveCode). The
// entries that hold no code and that this must catch are small: nvcc's
// device-link stubs are about 1 KiB (872 to 1,072 bytes measured with nvcc
// 11.8 and 12.4), the PTX of a unit without kernels 56 bytes, Debian's
// magma 2.9 debug-only cubins 2.7 KB, pycudwt's __constant__-only one
// 27 KB. Larger compressed payloads are taken to hold code without being
// decompressed: Debian trixie's 25 CUDA libraries hold 11.7 GiB of
// decompressed payloads in 2.4 GiB of files, and decompressing them all
// would cost seconds on every run; the entries that fit the bound cost
// a few milliseconds per library (docs/fatbin.md "Entries without code").
const (
	noCodeProbeMax        = 64 << 10
	noCodeDecompressedMax = 64 << 10
)

// Bounds on the section headers of an uncompressed cubin that the no-code
// test reads: cubins have tens to a few hundred sections.
const (
	maxCubinSectionTable = 64 << 10
	maxCubinShstrtab     = 64 << 10
)

// hasCode reports whether a whole payload holds a kernel: for a cubin a
// .text.<function> section, for PTX an .entry directive (a .func alone is a
// device function no launch can name, and the runtime registers none).
func hasCode(kind Kind, payload []byte) bool {
	if kind.IsPTX() {
		return bytes.Contains(payload, []byte(".entry"))
	}
	return cubinHasCode(payload)
}

// cubinHasCode reports whether a whole cubin holds a function: a section
// named .text.<function>, as every kernel and device function gets. The
// section headers are read by hand because debug/elf refuses cubins (nvcc
// writes the CUDA version into e_version: "mismatched ELF version"). A
// cubin that does not parse is taken to hold code, so that a reading
// problem never hides a kernel image.
func cubinHasCode(c []byte) bool {
	t, ok := cubinSectionTable(c, uint64(len(c)))
	if !ok {
		return true
	}
	if t.shoff+t.tableLen() > uint64(len(c)) {
		return true
	}
	table := c[t.shoff : t.shoff+t.tableLen()]
	stroff, strsize := t.section(table, t.shstrndx)
	if stroff > uint64(len(c)) || strsize > uint64(len(c))-stroff {
		return true
	}
	return t.anyText(table, c[stroff:stroff+strsize])
}

// cubinTable is where a cubin's section header table is.
type cubinTable struct {
	shoff, shentsize, shnum, shstrndx uint64
}

func (t cubinTable) tableLen() uint64 { return t.shnum * t.shentsize }

// cubinSectionTable reads the section header table's place from a cubin's
// ELF header (head), for a cubin of size bytes; ok is false when head is no
// cubin header or the table does not fit.
func cubinSectionTable(head []byte, size uint64) (cubinTable, bool) {
	le := binary.LittleEndian
	if _, ok := cubinSuffix(0, head); !ok {
		return cubinTable{}, false
	}
	t := cubinTable{
		shoff: le.Uint64(head[0x28:]), shentsize: uint64(le.Uint16(head[0x3a:])),
		shnum: uint64(le.Uint16(head[0x3c:])), shstrndx: uint64(le.Uint16(head[0x3e:])),
	}
	if t.shentsize < 0x28 || t.shoff > size || t.shnum > (size-t.shoff)/t.shentsize || t.shstrndx >= t.shnum {
		return cubinTable{}, false
	}
	return t, true
}

// section returns the offset and size of section i, from the table's bytes.
func (t cubinTable) section(table []byte, i uint64) (off, size uint64) {
	h := table[i*t.shentsize:]
	return binary.LittleEndian.Uint64(h[0x18:]), binary.LittleEndian.Uint64(h[0x20:])
}

// anyText reports whether a non-empty section is named .text.<something>.
func (t cubinTable) anyText(table, strtab []byte) bool {
	for i := range t.shnum {
		h := table[i*t.shentsize:]
		name, n := binary.LittleEndian.Uint32(h), binary.LittleEndian.Uint64(h[0x20:])
		if uint64(name) < uint64(len(strtab)) && n > 0 &&
			bytes.HasPrefix(strtab[name:], []byte(".text.")) {
			return true
		}
	}
	return false
}
