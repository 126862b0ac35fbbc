// Package elfbound reads ELF files with memory bounded by constants, not
// by what the file claims. File reads the header and then section headers
// and strings in place, a block at a time: a library of 65 535 sections or
// with an 11 MiB string table costs a few KiB. debug/elf.NewFile, by
// contrast, reads the section header table and the section-name table
// whole, keeps a Go value per section, and DynString copies a string table
// whole on every call.
package elfbound

import "errors"

// MaxSections bounds the section headers a File walks: real libraries have
// tens (a few dozen). 65 535 headers are 4 MiB to read, never
// held at once.
const (
	MaxSections      = 1 << 16
	elfHeaderMaxSize = 64
)

// ErrTooLarge is wrapped by Open's error for a file whose header claims
// more section headers than MaxSections.
var ErrTooLarge = errors.New("ELF headers claim more than gpu-preflight reads")
