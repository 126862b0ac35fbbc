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
