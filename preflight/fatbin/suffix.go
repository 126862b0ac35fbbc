package fatbin

import (
	"bytes"
	"encoding/binary"

	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
)

// payloadPeek bounds what archSuffix looks at of a payload: a PTX's
// ".target" line follows nvcc's comment lines. ptxPeek bytes are read first.
const (
	ptxPeek     = 256
	payloadPeek = 1024
)

// hasTargetLine reports whether head holds a complete PTX ".target" line.
func hasTargetLine(head []byte) bool {
	i := bytes.Index(head, []byte(".target"))
	return i >= 0 && bytes.IndexByte(head[i:], '\n') >= 0
}

const cubinELFHeader = 64

// archSuffix decides an entry's 'a' or 'f' suffix (0: none, or not told),
// the one place that does (docs/fatbin.md, "Arch-specific (a) and family
// (f) targets"): a readable cubin's e_flags, else a PTX's .target line,
// else flagArchSpecific. head is the start of the (decompressed) payload,
// nil when not read.
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

// cubinSuffix reads the suffix from a cubin's e_flags (ABI 7: SM in bits
// 0-7, 'a' 0x800; ABI 8: bits 8-15, 0x8); ok is false when head is no cubin.
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

// ptxTargetSuffix returns the suffix of the first complete ".target sm_XY"
// line of a PTX head when XY is sm.
func ptxTargetSuffix(head []byte, sm uint32) (suffix byte, ok bool) {
	for line := range bytes.Lines(head) {
		if !bytes.HasSuffix(line, []byte("\n")) {
			// Cut at payloadPeek: "sm_90" may be "sm_90a".
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
