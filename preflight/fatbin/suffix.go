package fatbin

import (
	"bytes"
	"encoding/binary"

	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
)

// payloadPeek is how many bytes of a payload archSuffix may look at: the
// cubin's 64-byte ELF header, or the head of a PTX text, whose ".target"
// line follows the comment lines nvcc writes (about 200 bytes). The scanner
// reads ptxPeek bytes of an uncompressed PTX first and the rest of
// payloadPeek only when those hold no complete ".target" line; of an LZ4
// payload it reads payloadPeek bytes and decompresses at most payloadPeek.
// Only cubins below noCodeProbeMax are read whole.
const (
	ptxPeek     = 256
	payloadPeek = 1024
)

// hasTargetLine reports whether head holds a complete PTX ".target" line.
func hasTargetLine(head []byte) bool {
	i := bytes.Index(head, []byte(".target"))
	return i >= 0 && bytes.IndexByte(head[i:], '\n') >= 0
}

// cubinELFHeader is the size of the cubin's own ELF64 header.
const cubinELFHeader = 64

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

// archSuffix decides the 'a' (architecture-specific) or 'f' (family)
// suffix of an entry, 0 when there is none or it cannot be told. It is the
// only place that does, so that it can be corrected in one place. The rules
// were checked against cuobjdump 12.4 on the fixtures in testdata/nvcc
// (docs/fatbin.md "Arch-specific targets"):
//
//   - cubin whose ELF header could be read (uncompressed, or a small LZ4
//     one read whole): the cubin's e_flags, as cuobjdump names it. Under
//     EI_ABIVERSION 7 the SM is in bits 0-7 and 'a' is 0x800
//     (EF_CUDA_ACCELERATORS_V1); under ABI 8 (CUDA 13) the SM is in bits
//     8-15 and 'a' is 0x8 (EF_CUDA_ACCELERATORS); LLVM
//     llvm/include/llvm/BinaryFormat/ELF.h. The bits count only when the SM
//     bits agree with the fatbin header's arch. nvcc 12.4 also sets
//     flagArchSpecific on the device-link stub of an 'a' build, whose
//     e_flags (and cuobjdump) say plain sm_90: e_flags win.
//   - any other entry, PTX included (nvcc compresses PTX by default): the
//     ".target sm_90a" / "sm_100f" line of the (decompressed) PTX text
//     when it was read, else flagArchSpecific in the entry header, which
//     means 'a'. Where the fatbin header marks 'f' (CUDA 12.9+) is not
//     known, so only a readable .target line tells an 'f' PTX; a
//     ZSTD-compressed one reads as plain.
//
// kind is the entry kind, sm the fatbin header's arch, flags its flags,
// and head the first bytes of the (decompressed) payload, nil when not read.
func archSuffix(kind Kind, sm uint32, flags uint64, head []byte) byte {
	switch {
	case kind.IsCubin():
		if s, ok := cubinSuffix(sm, head); ok {
			return s
		}
	case kind.IsPTX():
		if s, ok := ptxTargetSuffix(head, sm); ok {
			return s
		}
	default:
		return 0
	}
	if flags&flagArchSpecific != 0 {
		return 'a'
	}
	return 0
}

// cubinSuffix reads the suffix from a cubin's ELF header; ok is false when
// head is not one.
func cubinSuffix(sm uint32, head []byte) (suffix byte, ok bool) {
	if len(head) < cubinELFHeader ||
		!bytes.Equal(head[:4], []byte{0x7f, 'E', 'L', 'F'}) ||
		head[4] != 2 || // ELFCLASS64
		binary.LittleEndian.Uint16(head[18:]) != 190 { // EM_CUDA
		return 0, false
	}
	abi := head[8] // EI_ABIVERSION
	flags := binary.LittleEndian.Uint32(head[0x30:])
	if abi >= 8 {
		if (flags>>8)&0xff == sm && flags&0x8 != 0 {
			return 'a', true
		}
		return 0, true
	}
	if flags&0xff == sm && flags&0x800 != 0 {
		return 'a', true
	}
	return 0, true
}

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

// lz4Prefix decodes an LZ4 block (what the fatbin flag 0x2000 means; see
// docs/fatbin.md) as far as src reaches, stopping once limit bytes are
// out. src may be a prefix of the block: decoding stops at the first
// sequence it does not hold. A malformed block yields what was decoded
// before the fault. It never holds more than limit bytes. Twenty lines, so
// no dependency for it.
func lz4Prefix(src []byte, limit int) []byte { return lz4Into(nil, src, limit) }

// lz4Into is lz4Prefix decoding into dst's storage (reused when it holds
// limit bytes), so that a scan reuses one buffer for every entry.
func lz4Into(dst, src []byte, limit int) []byte {
	out := dst[:0]
	if cap(out) < limit {
		out = make([]byte, 0, min(limit, 8*len(src)+64))
	}
	i := 0
	// length adds the 255-runs that extend a 4-bit length of 15.
	length := func(n int) (int, bool) {
		if n != 15 {
			return n, true
		}
		for i < len(src) {
			b := src[i]
			i++
			n += int(b)
			if b != 255 || n > limit {
				return n, true
			}
		}
		return 0, false
	}
	for i < len(src) && len(out) < limit {
		token := src[i]
		i++
		lit, ok := length(int(token >> 4))
		if !ok || lit > len(src)-i {
			lit = min(lit, len(src)-i)
			out = append(out, src[i:i+min(lit, limit-len(out))]...)
			break
		}
		out = append(out, src[i:i+min(lit, limit-len(out))]...)
		i += lit
		if i+2 > len(src) || len(out) >= limit {
			break
		}
		off := int(src[i]) | int(src[i+1])<<8
		i += 2
		m, ok := length(int(token & 15))
		if !ok || off == 0 || off > len(out) {
			break
		}
		m = min(m+4, limit-len(out))
		for range m { // byte by byte: a match may overlap its own output
			out = append(out, out[len(out)-off])
		}
	}
	return out
}

// ptxTargetSuffix finds the first ".target" directive in the head of a PTX
// text and returns the suffix of its sm_XY target when XY equals sm; ok is
// false when there is no complete .target line for sm.
func ptxTargetSuffix(head []byte, sm uint32) (suffix byte, ok bool) {
	for line := range bytes.Lines(head) {
		if !bytes.HasSuffix(line, []byte("\n")) {
			// The last line may be cut at payloadPeek: "sm_90" of "sm_90a".
			return 0, false
		}
		line = bytes.TrimSpace(line)
		rest, ok := bytes.CutPrefix(line, []byte(".target"))
		if !ok || len(rest) == 0 || (rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		rest = bytes.TrimSpace(rest)
		end := bytes.IndexAny(rest, ", \t/")
		if end >= 0 {
			rest = rest[:end]
		}
		a, err := gpuarch.Parse(string(rest))
		if err != nil || uint32(a.SM()) != sm || !bytes.HasPrefix(rest, []byte("sm_")) {
			return 0, false
		}
		return a.Suffix, true
	}
	return 0, false
}
