// Package ldso models how glibc's dynamic loader (ld.so) finds a shared
// library by its soname, so that gpu-preflight can say which copy of a
// CUDA library a framework will load without loading it: the library
// search order of ld.so(8) (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH,
// /etc/ld.so.cache, the system directories), the cache file's format, and
// the dynamic section of an ELF object.
//
// The order is glibc's elf/dl-load.c (_dl_map_object) and was checked
// against the real ld.so with LD_DEBUG=libs (ldso_test.go builds libraries
// with gcc and compares). docs/cuda-stack.md states what is modelled and
// what is not.
package ldso

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// The two cache formats, glibc sysdeps/generic/dl-cache.h. A file is the
// new format alone (glibc 2.32 and later write only it), the old format
// alone (before 2.7), or the old format followed by the new one.
const (
	oldMagic = "ld.so-1.7.0"
	newMagic = "glibc-ld.so.cache1.1"

	oldHeaderLen = 16 // magic padded to 12 bytes, uint32 nlibs
	oldEntryLen  = 12 // int32 flags, uint32 key, uint32 value
	// magic[17] version[3], uint32 nlibs, uint32 len_strings, uint8 flags,
	// uint8 padding[3], uint32 extension_offset, uint32 unused[3].
	newHeaderLen = 48
	newEntryLen  = 24 // int32 flags, uint32 key, value, osversion, uint64 hwcap
)

// Entry flags, dl-cache.h: the low byte is the library type, the next
// the architecture it was built for.
const (
	FlagTypeMask   = 0x00ff
	FlagELFLibc6   = 0x0003
	FlagArchMask   = 0xff00
	FlagX8664Lib64 = 0x0300
	FlagAArch64    = 0x0a00
)

// MaxCacheSize bounds the cache file a caller reads: real caches are tens
// of kilobytes (34 KiB here, with 534 entries) and a few MiB on machines
// with every package installed.
const MaxCacheSize = 16 << 20

// CacheEntry is one library in the cache: its soname and where it is.
type CacheEntry struct {
	Name  string
	Path  string
	Flags int32
}

// ParseCache reads an /etc/ld.so.cache in either format. The entries keep
// the file's order, which is the order ld.so prefers among entries with the
// same name.
func ParseCache(b []byte) ([]CacheEntry, error) {
	if len(b) > MaxCacheSize {
		return nil, fmt.Errorf("ld.so.cache: %d bytes, more than the %d a cache can sensibly have", len(b), MaxCacheSize)
	}
	switch {
	case bytes.HasPrefix(b, []byte(newMagic)):
		return parseNew(b, 0)
	case bytes.HasPrefix(b, []byte(oldMagic)):
		return parseOld(b)
	}
	return nil, errors.New("ld.so.cache: neither the old nor the new format's magic")
}

// parseOld reads the old format and, when one follows it, prefers the new
// format after it, as ld.so does.
func parseOld(b []byte) ([]CacheEntry, error) {
	if len(b) < oldHeaderLen {
		return nil, errors.New("ld.so.cache: old-format header truncated")
	}
	n := binary.LittleEndian.Uint32(b[12:16])
	end := uint64(oldHeaderLen) + uint64(n)*oldEntryLen
	if end > uint64(len(b)) {
		return nil, fmt.Errorf("ld.so.cache: %d old-format entries do not fit in %d bytes", n, len(b))
	}
	// The new format starts at the next 8-byte boundary (ALIGN_CACHE).
	if next := (end + 7) &^ 7; next < uint64(len(b)) && bytes.HasPrefix(b[next:], []byte(newMagic)) {
		return parseNew(b, int(next))
	}
	// Old-format string offsets count from the end of the entries.
	strs := b[end:]
	out := make([]CacheEntry, 0, n)
	for i := uint64(0); i < uint64(n); i++ {
		e := b[oldHeaderLen+i*oldEntryLen:]
		flags := int32(binary.LittleEndian.Uint32(e[0:]))
		name, err1 := cString(strs, binary.LittleEndian.Uint32(e[4:]))
		path, err2 := cString(strs, binary.LittleEndian.Uint32(e[8:]))
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("ld.so.cache: entry %d: %w", i, err)
		}
		out = append(out, CacheEntry{Name: name, Path: path, Flags: flags})
	}
	return out, nil
}

// parseNew reads the new format whose header starts at off; its string
// offsets count from that header.
func parseNew(b []byte, off int) ([]CacheEntry, error) {
	h := b[off:]
	if len(h) < newHeaderLen {
		return nil, errors.New("ld.so.cache: new-format header truncated")
	}
	n := binary.LittleEndian.Uint32(h[20:24])
	end := uint64(newHeaderLen) + uint64(n)*newEntryLen
	if end > uint64(len(h)) {
		return nil, fmt.Errorf("ld.so.cache: %d entries do not fit in %d bytes", n, len(h))
	}
	out := make([]CacheEntry, 0, n)
	for i := uint64(0); i < uint64(n); i++ {
		e := h[newHeaderLen+i*newEntryLen:]
		flags := int32(binary.LittleEndian.Uint32(e[0:]))
		name, err1 := cString(h, binary.LittleEndian.Uint32(e[4:]))
		path, err2 := cString(h, binary.LittleEndian.Uint32(e[8:]))
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("ld.so.cache: entry %d: %w", i, err)
		}
		out = append(out, CacheEntry{Name: name, Path: path, Flags: flags})
	}
	return out, nil
}

// maxString bounds one name or path: PATH_MAX.
const maxString = 4096

// cString returns the NUL-terminated string at off in b.
func cString(b []byte, off uint32) (string, error) {
	if uint64(off) >= uint64(len(b)) {
		return "", fmt.Errorf("string offset %d outside the %d-byte file", off, len(b))
	}
	s := b[off:]
	i := bytes.IndexByte(s[:min(len(s), maxString+1)], 0)
	if i < 0 {
		return "", fmt.Errorf("string at %d is not terminated within %d bytes", off, maxString)
	}
	return string(s[:i]), nil
}

// Lookup returns the path ld.so takes from the cache for soname, for an
// object of the given architecture flag (FlagX8664Lib64, FlagAArch64): the
// first entry of that name built for libc6 and that architecture.
func Lookup(entries []CacheEntry, soname string, arch int32) (string, bool) {
	for _, e := range entries {
		if e.Name == soname && e.Flags&FlagTypeMask == FlagELFLibc6 && e.Flags&FlagArchMask == arch {
			return e.Path, true
		}
	}
	return "", false
}
