// Package ldso models how glibc's dynamic loader finds a shared library by
// its soname, so gpu-preflight can say which copy of a CUDA library a
// framework will load without loading it: ld.so(8)'s search order (glibc
// elf/dl-load.c _dl_map_object, checked against LD_DEBUG=libs in
// ldso_test.go), the cache file and the dynamic section. docs/cuda-stack.md
// states what is modelled and what is not.
package ldso

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/gpu-preflight/gpu-preflight/preflight/elfbound"
)

// The two cache formats, glibc sysdeps/generic/dl-cache.h: the new alone
// (glibc 2.32 on), the old alone (before 2.7), or the old then the new.
const (
	oldMagic = "ld.so-1.7.0"
	newMagic = "glibc-ld.so.cache1.1"

	oldHeaderLen = 16 // magic padded to 12 bytes, uint32 nlibs
	oldEntryLen  = 12 // int32 flags, uint32 key, uint32 value
	// magic[17] version[3], uint32 nlibs, len_strings, uint8 flags,
	// padding[3], uint32 extension_offset, unused[3].
	newHeaderLen = 48
	newEntryLen  = 24 // int32 flags, uint32 key, value, osversion, uint64 hwcap
)

// Entry flags, dl-cache.h: the low byte is the library type, the next the architecture.
const (
	FlagTypeMask   = 0x00ff
	FlagELFLibc6   = 0x0003
	FlagArchMask   = 0xff00
	FlagX8664Lib64 = 0x0300
	FlagAArch64    = 0x0a00
)

// MaxCacheSize bounds the cache file a caller reads: real ones are tens of KiB.
const MaxCacheSize = 16 << 20

// What ReadCache keeps, whatever the file claims (a hostile cache's entries
// can all name one long string).
const (
	maxCacheEntries = 1 << 15 // a machine with every Debian library has some tens of thousands
	maxCacheStrings = 4 << 20 // bytes of the distinct strings kept
	cacheBlock      = 256     // entries per read
)

// CacheEntry is one library in the cache: its soname and where it is.
type CacheEntry struct {
	Name  string
	Path  string
	Flags int32
}

// ParseCache is ReadCache over bytes in memory.
func ParseCache(b []byte) ([]CacheEntry, error) {
	return ReadCache(bytes.NewReader(b), int64(len(b)))
}

// ReadCache reads an /etc/ld.so.cache of size bytes in either format, in
// file order (ld.so prefers the first of a name). Memory is bounded by
// maxCacheEntries and maxCacheStrings, not the file; past them it returns
// the entries before the bound and an error saying what was left out.
func ReadCache(r io.ReaderAt, size int64) ([]CacheEntry, error) {
	if size > MaxCacheSize {
		return nil, fmt.Errorf("ld.so.cache: %d bytes, more than the %d a cache can sensibly have", size, MaxCacheSize)
	}
	c := cacheFile{r: r, size: uint64(size)}
	magic := make([]byte, len(newMagic))
	n, _ := r.ReadAt(magic, 0)
	switch {
	case bytes.HasPrefix(magic[:n], []byte(newMagic)):
		return c.readNew(0)
	case bytes.HasPrefix(magic[:n], []byte(oldMagic)):
		return c.readOld()
	}
	return nil, errors.New("ld.so.cache: neither the old nor the new format's magic")
}

type cacheFile struct {
	r    io.ReaderAt
	size uint64
}

// readOld reads the old format, preferring a new one after it as ld.so does.
func (c cacheFile) readOld() ([]CacheEntry, error) {
	h := make([]byte, oldHeaderLen)
	if c.size < oldHeaderLen || c.readFull(h, 0) != nil {
		return nil, errors.New("ld.so.cache: old-format header truncated")
	}
	n := binary.LittleEndian.Uint32(h[12:16])
	end := uint64(oldHeaderLen) + uint64(n)*oldEntryLen
	if end > c.size {
		return nil, fmt.Errorf("ld.so.cache: %d old-format entries do not fit in %d bytes", n, c.size)
	}
	// The new format starts at the next 8-byte boundary (ALIGN_CACHE).
	if next := (end + 7) &^ 7; next+uint64(len(newMagic)) <= c.size {
		magic := make([]byte, len(newMagic))
		if c.readFull(magic, next) == nil && string(magic) == newMagic {
			return c.readNew(next)
		}
	}
	// Old-format string offsets count from the end of the entries.
	strs := elfbound.NewStringTable(c.r, end, c.size-end)
	return c.entries(n, oldHeaderLen, oldEntryLen, strs)
}

func (c cacheFile) readNew(off uint64) ([]CacheEntry, error) {
	h := make([]byte, newHeaderLen)
	if c.size-off < newHeaderLen || c.readFull(h, off) != nil {
		return nil, errors.New("ld.so.cache: new-format header truncated")
	}
	n := binary.LittleEndian.Uint32(h[20:24])
	if end := uint64(newHeaderLen) + uint64(n)*newEntryLen; end > c.size-off {
		return nil, fmt.Errorf("ld.so.cache: %d entries do not fit in %d bytes", n, c.size-off)
	}
	strs := elfbound.NewStringTable(c.r, off, c.size-off)
	return c.entries(n, off+newHeaderLen, newEntryLen, strs)
}

func (c cacheFile) entries(n uint32, first, entLen uint64, strs *elfbound.StringTable) ([]CacheEntry, error) {
	kept := min(n, maxCacheEntries)
	out := make([]CacheEntry, 0, kept)
	// interned: a hostile cache's entries can all name one long string.
	interned := map[uint32]string{}
	strBytes := 0
	str := func(off uint32) (string, error) {
		if s, ok := interned[off]; ok {
			return s, nil
		}
		s, err := strs.String(uint64(off), maxString)
		if err != nil {
			return "", err
		}
		interned[off] = s
		strBytes += len(s)
		return s, nil
	}
	buf := make([]byte, cacheBlock*entLen)
	for i := uint32(0); i < kept; i += cacheBlock {
		b := buf[:uint64(min(cacheBlock, kept-i))*entLen]
		if err := c.readFull(b, first+uint64(i)*entLen); err != nil {
			return nil, fmt.Errorf("ld.so.cache: reading entries from %d: %w", i, err)
		}
		for j := uint32(0); len(b) > 0; j, b = j+1, b[entLen:] {
			if strBytes > maxCacheStrings {
				return out, fmt.Errorf("ld.so.cache: the strings of its first %d entries pass %d bytes: the other %d entries are left out", i+j, maxCacheStrings, n-(i+j))
			}
			name, err1 := str(binary.LittleEndian.Uint32(b[4:]))
			path, err2 := str(binary.LittleEndian.Uint32(b[8:]))
			if err := errors.Join(err1, err2); err != nil {
				return nil, fmt.Errorf("ld.so.cache: entry %d: %w", i+j, err)
			}
			out = append(out, CacheEntry{Name: name, Path: path, Flags: int32(binary.LittleEndian.Uint32(b))})
		}
	}
	if n > kept {
		return out, fmt.Errorf("ld.so.cache: %d entries, more than the %d read: the rest are left out", n, kept)
	}
	return out, nil
}

// maxString bounds one name or path: PATH_MAX.
const maxString = 4096

func (c cacheFile) readFull(b []byte, off uint64) error {
	n, err := c.r.ReadAt(b, int64(off))
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// Lookup returns the path ld.so takes from the cache for soname: the first
// entry of that name built for libc6 and arch (FlagX8664Lib64, FlagAArch64).
func Lookup(entries []CacheEntry, soname string, arch int32) (string, bool) {
	for _, e := range entries {
		if e.Name == soname && e.Flags&FlagTypeMask == FlagELFLibc6 && e.Flags&FlagArchMask == arch {
			return e.Path, true
		}
	}
	return "", false
}
