package fatbin_test

import (
	"encoding/binary"
	"strings"
	"testing"
)

// cubinWith is a CUDA ELF for sm_80 whose sections are named names (each
// 16 bytes long), after pad bytes of padding: its section header table
// sits at the end, as nvcc writes it.
func cubinWith(pad int, names ...string) []byte {
	le := binary.LittleEndian
	strtab := []byte{0}
	nameOff := []uint32{0}
	for _, n := range append([]string{".shstrtab"}, names...) {
		nameOff = append(nameOff, uint32(len(strtab)))
		strtab = append(append(strtab, n...), 0)
	}
	body := make([]byte, pad)
	strOff := 64 + len(body)
	shoff := strOff + len(strtab)
	shoff += (8 - shoff%8) % 8
	shnum := len(nameOff)
	c := make([]byte, shoff+shnum*64)
	copy(c, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0x33, 7})
	le.PutUint16(c[16:], 2)   // ET_EXEC
	le.PutUint16(c[18:], 190) // EM_CUDA
	le.PutUint64(c[0x28:], uint64(shoff))
	le.PutUint32(c[0x30:], 80)
	le.PutUint16(c[0x3a:], 64)
	le.PutUint16(c[0x3c:], uint16(shnum))
	le.PutUint16(c[0x3e:], 1)
	copy(c[strOff:], strtab)
	for i := 1; i < shnum; i++ {
		h := c[shoff+i*64:]
		le.PutUint32(h, nameOff[i])
		if i == 1 {
			le.PutUint64(h[0x18:], uint64(strOff))
			le.PutUint64(h[0x20:], uint64(len(strtab)))
		} else {
			le.PutUint64(h[0x18:], 64)
			le.PutUint64(h[0x20:], 16)
		}
	}
	return c
}

// lz4Literals is an LZ4 block of b as literals only, which every decoder
// must accept (the last sequence of a block has no match).
func lz4Literals(b []byte) []byte {
	n := len(b)
	var out []byte
	if n < 15 {
		out = append(out, byte(n<<4))
	} else {
		out = append(out, 0xf0)
		for m := n - 15; ; m -= 255 {
			if m < 255 {
				out = append(out, byte(m))
				break
			}
			out = append(out, 255)
		}
	}
	return append(out, b...)
}

// entryOf is a container with one entry of kind (1 PTX, 2 cubin) holding
// payload, LZ4-compressed when lz4 is set.
func entryOf(kind uint16, payload []byte, lz4 bool) []byte {
	stored := payload
	if lz4 {
		stored = lz4Literals(payload)
	}
	stored = append(stored, make([]byte, (8-len(stored)%8)%8)...)
	h := entryHeader(kind, 64, uint64(len(stored)), 80)
	if lz4 {
		binary.LittleEndian.PutUint64(h[0x28:], 0x2011)
		binary.LittleEndian.PutUint32(h[0x10:], uint32(len(stored)))
		binary.LittleEndian.PutUint64(h[0x38:], uint64(len(payload)))
	}
	if kind == 1 {
		binary.LittleEndian.PutUint32(h[0x18:], 8<<16|4)
	}
	return cat(containerHeader(uint64(64+len(stored))), h, stored)
}

// docs/fatbin.md "What counts as a kernel image", rule 2: an entry without
// a function is no kernel image whatever its size, up to the bounds the
// scanner reads within; beyond them it is taken to hold code.
func TestEntriesWithoutCodeAreNoImage(t *testing.T) {
	ptxText := func(body string) []byte {
		return []byte("//\n.version 8.4\n.target sm_80\n.address_size 64\n" + body)
	}
	tests := []struct {
		name  string
		entry []byte
		code  bool
	}{
		{"small cubin with a kernel", entryOf(2, cubinWith(0, ".text.k", ".nv.info.k"), false), true},
		{"small cubin with debug sections only (magma 2.9)", entryOf(2, cubinWith(2000, ".debug_info", ".debug_line"), false), false},
		{"uncompressed cubin of 1 MiB with __constant__ data only", entryOf(2, cubinWith(1<<20, ".nv.constant3", ".nv.info"), false), false},
		{"uncompressed cubin of 1 MiB with a kernel", entryOf(2, cubinWith(1<<20, ".nv.constant3", ".text.k"), false), true},
		{"LZ4 cubin of 27 KiB with __constant__ data only (pycudwt)", entryOf(2, cubinWith(27<<10, ".nv.constant3"), true), false},
		{"LZ4 cubin of 27 KiB with a kernel", entryOf(2, cubinWith(27<<10, ".text.k"), true), true},
		{"LZ4 cubin past the probe bound is taken to hold code", entryOf(2, cubinWith(100<<10, ".nv.constant3"), true), true},
		{"PTX with an .entry", entryOf(1, ptxText(".visible .entry k()\n{\nret;\n}\n"), true), true},
		{"PTX with a device function only", entryOf(1, ptxText(".func f()\n{\nret;\n}\n"), true), false},
		{"PTX of 40 KiB of declarations only", entryOf(1, ptxText(strings.Repeat(".global .align 4 .u32 x;\n", 40<<10/26)), true), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := scanBytes(t, rawSection(t, tt.entry))
			if len(r.Entries) != 1 || r.Entries[0].Defect != "" {
				t.Fatalf("entries %+v", r.Entries)
			}
			if got := !r.Entries[0].NoCode; got != tt.code {
				t.Errorf("holds code: %v, want %v", got, tt.code)
			}
			if (len(r.Images) > 0) != tt.code || (len(r.Fatbins) > 0) != tt.code {
				t.Errorf("images %v, fatbins %v: a fatbin without code is no fatbin a GPU could lack an image for", r.Images, r.Fatbins)
			}
		})
	}
}
