package fatbin

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
)

// Container is one fatbin container of a library, as the CUDA smoke test
// loads it with cuModuleLoadData: the driver takes a container (header and
// entries) and picks the entry for the GPU, or fails with
// CUDA_ERROR_NO_BINARY_FOR_GPU.
type Container struct {
	Section string
	// Offset is where the container header starts in Section.
	Offset int64
	// Targets are the loadable targets of its entries, sorted as nvcc
	// spells them ("compute_90", "sm_80", "sm_90").
	Targets []string
	// Bytes is the size of its entries, headers included (the container
	// header is 16 bytes more).
	Bytes int64
}

// PickContainer returns the container whose loading proves what the whole
// library does on a GPU: the smallest one that carries every loadable target
// the library has (so loading it succeeds exactly when the library has code
// for the GPU), else the one with the most targets, the smaller on a tie.
// Libraries built by one nvcc command line carry the same targets in every
// container. ok is false when no container has a loadable entry.
func PickContainer(r Result) (c Container, ok bool) {
	var order []Container
	byKey := map[[2]any]int{}
	all := map[string]bool{}
	for _, e := range r.Entries {
		key := [2]any{e.Section, e.Container}
		i, seen := byKey[key]
		if !seen {
			i = len(order)
			byKey[key] = i
			order = append(order, Container{Section: e.Section, Offset: e.Container})
		}
		order[i].Bytes += int64(e.HeaderSize) + int64(min(e.PayloadSize, 1<<62))
		if e.Defect != "" || !(e.Kind.IsCubin() || e.Kind.IsPTX()) {
			continue
		}
		t := e.Arch.String()
		all[t] = true
		if !slices.Contains(order[i].Targets, t) {
			order[i].Targets = append(order[i].Targets, t)
		}
	}
	best := -1
	for i, cand := range order {
		if len(cand.Targets) == 0 {
			continue
		}
		if best < 0 || better(cand, order[best], len(all)) {
			best = i
		}
	}
	if best < 0 {
		return Container{}, false
	}
	c = order[best]
	slices.Sort(c.Targets)
	return c, true
}

// better reports whether a is a better pick than b when the library has
// n distinct targets.
func better(a, b Container, n int) bool {
	aAll, bAll := len(a.Targets) == n, len(b.Targets) == n
	switch {
	case aAll != bAll:
		return aAll
	case len(a.Targets) != len(b.Targets):
		return len(a.Targets) > len(b.Targets)
	}
	return a.Bytes < b.Bytes
}

// ReadContainer reads the container at offset in section of the ELF file
// at path, header and entries, refusing one larger than max bytes.
func ReadContainer(path, section string, offset, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("fatbin: %w", err)
	}
	defer f.Close()
	ef, err := elf.NewFile(f)
	if err != nil {
		return nil, fmt.Errorf("fatbin: %s is not a readable ELF file: %w", path, err)
	}
	sec := ef.Section(section)
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return nil, fmt.Errorf("fatbin: %s has no section %s with data", path, section)
	}
	r := sec.Open()
	hdr := make([]byte, containerHeaderLen)
	if _, err := readAtFull(r, hdr, offset); err != nil {
		return nil, fmt.Errorf("fatbin: reading the container header at %s offset %d of %s: %w", section, offset, path, err)
	}
	if magic := binary.LittleEndian.Uint32(hdr); magic != containerMagic {
		return nil, fmt.Errorf("fatbin: no container at %s offset %d of %s (magic 0x%08x)", section, offset, path, magic)
	}
	headerSize := uint64(binary.LittleEndian.Uint16(hdr[6:]))
	fatSize := binary.LittleEndian.Uint64(hdr[8:])
	if fatSize > uint64(max) || headerSize+fatSize > uint64(max) {
		return nil, fmt.Errorf("fatbin: the container at %s offset %d of %s has %d bytes, more than %d", section, offset, path, headerSize+fatSize, max)
	}
	buf := make([]byte, headerSize+fatSize)
	if _, err := readAtFull(r, buf, offset); err != nil {
		return nil, fmt.Errorf("fatbin: reading the container at %s offset %d of %s: %w", section, offset, path, err)
	}
	return buf, nil
}

// readAtFull reads len(buf) bytes at off of a section reader.
func readAtFull(r io.ReadSeeker, buf []byte, off int64) (int, error) {
	if _, err := r.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	return io.ReadFull(r, buf)
}
