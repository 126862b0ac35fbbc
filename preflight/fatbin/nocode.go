package fatbin

import (
	"bytes"
	"encoding/binary"
)

// A payload up to these sizes, stored and decompressed, is read whole to
// tell whether it holds a function; the entries without code are small
// (device-link stubs, kernel-less units), and decompressing every payload
// would cost seconds (docs/fatbin.md). An uncompressed cubin is told by its
// section headers.
const (
	noCodeProbeMax        = 64 << 10
	noCodeDecompressedMax = 64 << 10
)

// Bounds on the section headers read of an uncompressed cubin.
const (
	maxCubinSectionTable = 64 << 10
	maxCubinShstrtab     = 64 << 10
)

// hasCode reports whether a whole payload holds a kernel: a cubin's
// .text.<function> section, a PTX's .entry (a .func alone cannot launch).
func hasCode(kind Kind, payload []byte) bool {
	if kind.IsPTX() {
		return bytes.Contains(payload, []byte(".entry"))
	}
	return cubinHasCode(payload)
}

// cubinHasCode reports whether a whole cubin has a .text.* section, read by
// hand (debug/elf refuses cubins' e_version); one that does not parse is
// taken to hold code, so a reading problem never hides a kernel.
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

type cubinTable struct {
	shoff, shentsize, shnum, shstrndx uint64
}

func (t cubinTable) tableLen() uint64 { return t.shnum * t.shentsize }

// cubinSectionTable reads where a cubin of size bytes has its section
// header table; ok is false when head is no cubin or the table does not fit.
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
