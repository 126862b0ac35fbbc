package fatbin

import (
	"debug/elf"
	"errors"

	"github.com/gpu-preflight/gpu-preflight/preflight/elfbound"
)

// Scan scans the fatbin section of f as debug/elf reads it: the tests'
// second reader of the same files, next to ScanFile's elfbound. It returns
// an error only when reading fails for a reason other than the file
// ending early; corruption and truncation are warnings in the Result.
func Scan(f *elf.File) (Result, error) {
	if f == nil {
		return Result{}, errors.New("fatbin: no ELF file to scan")
	}
	var sec *section
	if es := f.Section(SectionName); es != nil {
		sec = &section{name: es.Name, typ: elfbound.SectionType(es.Type), flags: elfbound.SectionFlag(es.Flags), size: es.Size, open: es.Open}
	}
	return scanSection(sec)
}
