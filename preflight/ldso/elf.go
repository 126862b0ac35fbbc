package ldso

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/elfbound"
)

// Dynamic is what ld.so reads from an object's dynamic section to load
// its dependencies.
type Dynamic struct {
	Soname string
	Needed []string // DT_NEEDED, in order
	// RPath and RunPath are unexpanded ($ORIGIN stays); RPath is nil when
	// DT_RUNPATH is present, which glibc then ignores (elf/get-dynamic-info.h).
	RPath, RunPath []string
	HasRunPath     bool  // DT_RUNPATH is present, even if empty
	NoDefLib       bool  // DF_1_NODEFLIB: no cache or system directories for its dependencies
	Arch           int32 // the cache flag of its architecture (FlagX8664Lib64, FlagAArch64), 0 for others
}

// Limits on what ReadDynamic reads of one object: real libraries have tens
// of dynamic entries and names of tens of bytes; the string table can be
// many MiB and is never read whole.
const (
	maxDynEntries = 1 << 16 // before DT_NULL
	maxName       = 4096    // a DT_NEEDED or DT_SONAME: PATH_MAX, since a DT_NEEDED with a slash is a path
	maxSearchPath = 32 << 10
	maxStrings    = 64 << 10 // all the strings kept of one object (Load bounds all objects')
	maxProblems   = 4        // listed in an error; the rest are counted
)

const df1NoDefLib = 0x800

// ReadDynamic reads the dynamic section of the ELF object in r as glibc's
// elf/get-dynamic-info.h does: entries up to DT_NULL, the last of a tag
// that may appear once winning. Memory is bounded whatever the file claims;
// an object read in part comes back with what was read and an error saying
// what was cut.
func ReadDynamic(r io.ReaderAt) (Dynamic, error) {
	f, err := elfbound.Open(r)
	if err != nil {
		return Dynamic{}, err
	}
	var d Dynamic
	switch {
	case f.Class == elfbound.ELFCLASS64 && f.Machine == elfbound.EM_X86_64:
		d.Arch = FlagX8664Lib64
	case f.Class == elfbound.ELFCLASS64 && f.Machine == elfbound.EM_AARCH64:
		d.Arch = FlagAArch64
	}
	dyn, ok, err := f.SectionByType(elfbound.SHT_DYNAMIC)
	if err != nil {
		return Dynamic{}, err
	}
	if !ok {
		return d, nil // a static object: nothing to load
	}
	e, err := readEntries(f, dyn)
	if err != nil {
		return Dynamic{}, err
	}
	strSec, err := f.Section(int(dyn.Link))
	if err != nil {
		return Dynamic{}, fmt.Errorf("the dynamic section's string table: %w", err)
	}
	strs := f.Strings(strSec)
	var p problems
	p.add(e.problem)
	// budget is what is left of maxStrings; spent: a string did not fit.
	budget, spent := maxStrings, false
	str := func(tag string, off uint64, max int) (string, bool) {
		v, err := strs.String(off, min(max, budget))
		if err != nil && budget < max && errors.Is(err, elfbound.ErrBadString) {
			// Past the budget, or bad whatever the budget: ask again.
			if _, err = strs.Bytes(off, max); err == nil {
				spent = true
				p.add(fmt.Sprintf("%s: the object's names pass %d bytes: not followed", tag, maxStrings))
				return "", false
			}
		}
		if err != nil {
			p.add(tag + ": " + err.Error())
			return "", false
		}
		budget -= len(v)
		return v, true
	}
	if e.soname != nil {
		d.Soname, _ = str("DT_SONAME", *e.soname, maxName)
	}
	// glibc ignores DT_RPATH when DT_RUNPATH is present (elf/get-dynamic-info.h).
	if e.runpath != nil {
		d.HasRunPath = true
		if s, ok := str("DT_RUNPATH", *e.runpath, maxSearchPath); ok {
			d.RunPath = p.searchPath("DT_RUNPATH", s)
		}
	} else if e.rpath != nil {
		if s, ok := str("DT_RPATH", *e.rpath, maxSearchPath); ok {
			d.RPath = p.searchPath("DT_RPATH", s)
		}
	}
	if e.needed > maxNeeded {
		p.add(fmt.Sprintf("%d DT_NEEDED entries, more than the %d read: the rest are not followed", e.needed, maxNeeded))
	}
	for i, off := range e.neededOffs {
		tag := fmt.Sprintf("DT_NEEDED %d", i)
		if rest := len(e.neededOffs) - i - 1; budget < maxName && rest > 0 {
			tag = fmt.Sprintf("DT_NEEDED %d and the %d after it", i, rest)
		}
		if s, ok := str(tag, off, maxName); ok {
			d.Needed = append(d.Needed, s)
		} else if spent {
			break // the rest would not fit either: not followed
		}
	}
	d.NoDefLib = e.flags1&df1NoDefLib != 0
	return d, p.err()
}

// entries is what ReadDynamic takes from the dynamic entries.
type entries struct {
	neededOffs             []uint64 // the first maxNeeded
	needed                 int      // all DT_NEEDED entries
	soname, rpath, runpath *uint64
	flags1                 uint64
	problem                string
}

const dynBlock = 256

func readEntries(f *elfbound.File, sec elfbound.Section) (entries, error) {
	var e entries
	entSize := uint64(16)
	if f.Class == elfbound.ELFCLASS32 {
		entSize = 8
	}
	if sec.Type == elfbound.SHT_NOBITS {
		return e, errors.New("the dynamic section has no data in the file (SHT_NOBITS)")
	}
	n := sec.Size / entSize
	if n > maxDynEntries {
		n = maxDynEntries
		e.problem = fmt.Sprintf("a dynamic section of %d entries without DT_NULL in the first %d: the rest are not read", sec.Size/entSize, maxDynEntries)
	}
	r := f.SectionReader(sec)
	bo := f.ByteOrder()
	buf := make([]byte, dynBlock*entSize)
	for first := uint64(0); first < n; first += dynBlock {
		b := buf[:min(dynBlock, n-first)*entSize]
		if got, err := r.ReadAt(b, int64(first*entSize)); got < len(b) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return e, fmt.Errorf("reading dynamic entries %d-%d: %w", first, first+uint64(len(b))/entSize-1, err)
		}
		for ; len(b) > 0; b = b[entSize:] {
			var tag elfbound.DynTag
			var val uint64
			if entSize == 8 {
				tag, val = elfbound.DynTag(int32(bo.Uint32(b))), uint64(bo.Uint32(b[4:]))
			} else {
				tag, val = elfbound.DynTag(int64(bo.Uint64(b))), bo.Uint64(b[8:])
			}
			switch tag {
			case elfbound.DT_NULL:
				e.problem = ""
				return e, nil
			case elfbound.DT_NEEDED:
				if e.needed++; e.needed <= maxNeeded {
					e.neededOffs = append(e.neededOffs, val)
				}
			case elfbound.DT_SONAME:
				e.soname = &val
			case elfbound.DT_RPATH:
				e.rpath = &val
			case elfbound.DT_RUNPATH:
				e.runpath = &val
			case elfbound.DT_FLAGS_1:
				e.flags1 = val
			}
		}
	}
	return e, nil
}

type problems struct {
	list []string
	more int
}

func (p *problems) add(s string) {
	switch {
	case s == "":
	case len(p.list) < maxProblems:
		p.list = append(p.list, s)
	default:
		p.more++
	}
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	s := "read in part: " + strings.Join(p.list, "; ")
	if p.more > 0 {
		s += fmt.Sprintf("; and %d more", p.more)
	}
	return errors.New(s)
}

// splitPath splits a colon list, dropping empty entries (which ld.so takes
// as the current directory; no CUDA library has one).
func splitPath(s string) []string {
	var out []string
	for d := range strings.SplitSeq(s, ":") {
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}

// held is about how many bytes d holds.
func (d Dynamic) held() int {
	n := len(d.Soname)
	for _, l := range [][]string{d.Needed, d.RPath, d.RunPath} {
		for _, s := range l {
			n += len(s) + 16
		}
	}
	return n
}

// searchPath is splitPath keeping the first maxDirs directories.
func (p *problems) searchPath(tag, s string) []string {
	dirs := splitPath(s)
	if len(dirs) > maxDirs {
		p.add(fmt.Sprintf("%s has %d directories, more than the %d searched", tag, len(dirs), maxDirs))
		dirs = dirs[:maxDirs:maxDirs]
	}
	return dirs
}
