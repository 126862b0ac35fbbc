package fatbin

import (
	"bytes"
	"encoding/binary"
)

// payloadPeek is how many bytes of an uncompressed payload archSuffix may
// look at: the cubin's 64-byte ELF header, or the head of a PTX text, whose
// ".target" line follows the comment lines nvcc writes (about 200 bytes).
// The scanner reads ptxPeek bytes first and the rest of payloadPeek only
// when those hold no complete ".target" line. It is a header read: a
// library's payloads are never read whole.
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

// archSuffix decides the 'a' (architecture-specific) or 'f' (family) suffix
// of an entry, 0 when there is none or it cannot be told. It is the only
// place that does, so that it can be corrected in one place.
//
// UNCERTAIN. Where the fatbin encodes the suffix is not documented by any
// open parser (research/fatbin-frameworks.md 1.5 and open question 1):
// cuobjdump prints "sm_90a" for both cubin and PTX entries, so the
// information is somewhere in the fatbin, but nobody has published where.
// Until a toolkit machine settles it, this reads what is known:
//
//   - cubin, uncompressed: the cubin's own ELF header. e_flags (offset 0x30)
//     under EI_ABIVERSION 7 holds the SM in bits 0-7 and 'a' as 0x800
//     (EF_CUDA_ACCELERATORS_V1); under ABI 8 (CUDA 13) the SM is in bits 8-15
//     and 'a' is 0x8 (EF_CUDA_ACCELERATORS). Source: LLVM
//     llvm/include/llvm/BinaryFormat/ELF.h and ELFObjectFile.cpp. The bit is
//     trusted only when the SM bits agree with the fatbin header's arch.
//     Caveat (research note 1.5): one analysis found the ABI-8 bit clear in
//     cubins cuobjdump names sm_100a..sm_121a, so ABI-8 'a' cubins may read
//     as plain. 'f' is not recoverable from a cubin at all: nvcc emits the
//     same cubin for sm_100 and sm_100f (research note 2).
//   - PTX, uncompressed: the ".target sm_90a" directive in the first
//     payloadPeek bytes of the text.
//   - compressed payloads: nothing is decompressed, so no suffix.
//
// kind is the entry kind, sm the fatbin header's arch, and head the first
// bytes of the payload (nil when compressed or not read).
func archSuffix(kind Kind, sm uint32, head []byte) byte {
	switch {
	case kind.IsCubin():
		if len(head) < cubinELFHeader ||
			!bytes.Equal(head[:4], []byte{0x7f, 'E', 'L', 'F'}) ||
			head[4] != 2 || // ELFCLASS64
			binary.LittleEndian.Uint16(head[18:]) != 190 { // EM_CUDA
			return 0
		}
		abi := head[8] // EI_ABIVERSION
		flags := binary.LittleEndian.Uint32(head[0x30:])
		if abi >= 8 {
			if (flags>>8)&0xff == sm && flags&0x8 != 0 {
				return 'a'
			}
			return 0
		}
		if flags&0xff == sm && flags&0x800 != 0 {
			return 'a'
		}
		return 0
	case kind.IsPTX():
		return ptxTargetSuffix(head, sm)
	}
	return 0
}

// ptxTargetSuffix finds the first ".target" directive in the head of a PTX
// text and returns the suffix of its sm_XY target when XY equals sm.
func ptxTargetSuffix(head []byte, sm uint32) byte {
	for line := range bytes.Lines(head) {
		if !bytes.HasSuffix(line, []byte("\n")) {
			// The last line may be cut at payloadPeek: "sm_90" of "sm_90a".
			return 0
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
		a, err := ParseArch(string(rest))
		if err != nil || uint32(a.SM()) != sm || !bytes.HasPrefix(rest, []byte("sm_")) {
			return 0
		}
		return a.Suffix
	}
	return 0
}
