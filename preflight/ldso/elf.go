package ldso

import (
	"debug/elf"
	"fmt"
	"io"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/elfbound"
)

// Dynamic is what ld.so reads from an object's dynamic section to load
// its dependencies.
type Dynamic struct {
	Soname string
	// Needed are the DT_NEEDED names, in order.
	Needed []string
	// RPath and RunPath are the DT_RPATH and DT_RUNPATH entries, unexpanded
	// ($ORIGIN stays). glibc ignores DT_RPATH when DT_RUNPATH is present
	// (elf/get-dynamic-info.h), so RPath is nil then.
	RPath, RunPath []string
	// HasRunPath is true when DT_RUNPATH is present, even if empty.
	HasRunPath bool
	// NoDefLib is DF_1_NODEFLIB: the cache and system directories are not
	// searched for this object's dependencies.
	NoDefLib bool
	// Arch is the cache flag of the object's architecture (FlagX8664Lib64,
	// FlagAArch64), 0 for any other.
	Arch int32
}

// maxDynamic bounds the dynamic section and its string table: a few KiB
// in real libraries (libtorch_cuda.so's are under 64 KiB).
const maxDynamic = 16 << 20

// df1NoDefLib is DF_1_NODEFLIB, elf.h.
const df1NoDefLib = 0x800

// ReadDynamic reads the dynamic section of the ELF object in r.
func ReadDynamic(r io.ReaderAt) (Dynamic, error) {
	if err := elfbound.Check(r); err != nil {
		return Dynamic{}, err
	}
	f, err := elf.NewFile(r)
	if err != nil {
		return Dynamic{}, err
	}
	defer f.Close()
	var d Dynamic
	switch {
	case f.Class == elf.ELFCLASS64 && f.Machine == elf.EM_X86_64:
		d.Arch = FlagX8664Lib64
	case f.Class == elf.ELFCLASS64 && f.Machine == elf.EM_AARCH64:
		d.Arch = FlagAArch64
	}
	dyn := f.SectionByType(elf.SHT_DYNAMIC)
	if dyn == nil {
		return d, nil // a static object: nothing to load
	}
	if dyn.Size > maxDynamic {
		return Dynamic{}, fmt.Errorf("dynamic section of %d bytes", dyn.Size)
	}
	if int(dyn.Link) < len(f.Sections) && f.Sections[dyn.Link].Size > maxDynamic {
		return Dynamic{}, fmt.Errorf("dynamic string table of %d bytes", f.Sections[dyn.Link].Size)
	}
	str := func(tag elf.DynTag) ([]string, error) { return f.DynString(tag) }
	needed, err := str(elf.DT_NEEDED)
	if err != nil {
		return Dynamic{}, err
	}
	d.Needed = needed
	if s, err := str(elf.DT_SONAME); err == nil && len(s) > 0 {
		d.Soname = s[0]
	}
	runpath, err := str(elf.DT_RUNPATH)
	if err != nil {
		return Dynamic{}, err
	}
	if len(runpath) > 0 {
		d.HasRunPath = true
		d.RunPath = splitPath(strings.Join(runpath, ":"))
	} else if rpath, err := str(elf.DT_RPATH); err == nil {
		d.RPath = splitPath(strings.Join(rpath, ":"))
	}
	if v, err := f.DynValue(elf.DT_FLAGS_1); err == nil && len(v) > 0 && v[0]&df1NoDefLib != 0 {
		d.NoDefLib = true
	}
	return d, nil
}

// splitPath splits a colon list, dropping empty entries (ld.so treats an
// empty DT_RUNPATH entry as the current directory; no CUDA library has one).
func splitPath(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ":") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
