package ldsotest

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
)

// Dyn is one dynamic entry: a tag and its value.
type Dyn struct {
	Tag elf.DynTag
	Val uint64
}

// DynamicObject is an ELF64 x86-64 shared object of a dynamic section and
// its string table, nothing else: no toolchain writes the hostile shapes
// tests need (a NUL-less .dynstr, thousands of DT_NEEDED naming one string).
func DynamicObject(entries []Dyn, strtab []byte) []byte {
	le := binary.LittleEndian
	dyn := make([]byte, 16*len(entries))
	for i, e := range entries {
		le.PutUint64(dyn[16*i:], uint64(e.Tag))
		le.PutUint64(dyn[16*i+8:], e.Val)
	}
	shstr := []byte("\x00.dynstr\x00.dynamic\x00.shstrtab\x00")
	var b bytes.Buffer
	b.Write(make([]byte, 64))
	strOff := b.Len()
	b.Write(strtab)
	dynOff := b.Len()
	b.Write(dyn)
	shstrOff := b.Len()
	b.Write(shstr)
	for b.Len()%8 != 0 {
		b.WriteByte(0)
	}
	shoff := b.Len()
	sh := func(name uint32, typ elf.SectionType, off, size int, link uint32, entsize uint64) {
		h := make([]byte, 64)
		le.PutUint32(h[0:], name)
		le.PutUint32(h[4:], uint32(typ))
		le.PutUint64(h[24:], uint64(off))
		le.PutUint64(h[32:], uint64(size))
		le.PutUint32(h[40:], link)
		le.PutUint64(h[56:], entsize)
		b.Write(h)
	}
	sh(0, elf.SHT_NULL, 0, 0, 0, 0)
	sh(1, elf.SHT_STRTAB, strOff, len(strtab), 0, 0)
	sh(9, elf.SHT_DYNAMIC, dynOff, len(dyn), 1, 16)
	sh(18, elf.SHT_STRTAB, shstrOff, len(shstr), 0, 0)
	out := b.Bytes()
	copy(out, []byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)})
	le.PutUint16(out[16:], uint16(elf.ET_DYN))
	le.PutUint16(out[18:], uint16(elf.EM_X86_64))
	le.PutUint32(out[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(out[40:], uint64(shoff))
	le.PutUint16(out[52:], 64) // e_ehsize
	le.PutUint16(out[58:], 64) // e_shentsize
	le.PutUint16(out[60:], 4)  // e_shnum
	le.PutUint16(out[62:], 3)  // e_shstrndx
	return out
}

// Cache formats, as ldconfig -c names them.
const (
	CacheOld = "old"
	CacheNew = "new"
)

// OneStringCache is an ld.so.cache of the given format and size whose n
// libc6/x86-64 entries all name one string of strLen bytes (dl-cache.h
// layouts); one that does not fit in size is larger.
func OneStringCache(format string, n, strLen, size int) []byte {
	le := binary.LittleEndian
	var b []byte
	switch format {
	case CacheOld:
		b = make([]byte, 16+12*n)
		copy(b, "ld.so-1.7.0")
		le.PutUint32(b[12:], uint32(n))
		// Old-format offsets count from the end of the entries.
		for i := range n {
			le.PutUint32(b[16+12*i:], 0x0303) // name and path at offset 0
		}
	default:
		b = make([]byte, 48+24*n)
		copy(b, "glibc-ld.so.cache1.1")
		le.PutUint32(b[20:], uint32(n))
		strOff := len(b) // new-format offsets count from the header
		for i := range n {
			e := b[48+24*i:]
			le.PutUint32(e, 0x0303)
			le.PutUint32(e[4:], uint32(strOff))
			le.PutUint32(e[8:], uint32(strOff))
		}
		le.PutUint32(b[24:], uint32(strLen+1)) // len_strings
	}
	b = append(b, append(bytes.Repeat([]byte("l"), strLen), 0)...)
	if len(b) < size {
		b = append(b, make([]byte, size-len(b))...)
	}
	return b
}
