// Package elfbound reads ELF files with memory bounded by constants, not by
// what the file claims: section headers and strings are read in place, a
// block at a time, where debug/elf holds a value per section and copies
// whole string tables.
package elfbound

import "errors"

// MaxSections bounds the section headers a File walks; real libraries have
// a few dozen.
const (
	MaxSections      = 1 << 16
	elfHeaderMaxSize = 64
)

// ErrTooLarge is wrapped by Open's error for more section headers than MaxSections.
var ErrTooLarge = errors.New("ELF headers claim more than gpu-preflight reads")
