package fatbin

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/gpu-preflight/gpu-preflight/preflight/elfbound"
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
	// Like counts the library's containers that carry the same targets.
	Like int
}

// PickContainers returns the containers whose loading proves what the
// library does on a GPU. The runtime picks one image per container, so a
// GPU runs all of a library's kernels only where every container has an
// image for it; containers that carry the same targets stand or fall
// together. So: for each distinct set of targets, the smallest container
// that carries it, the sets most containers carry first, at most max of
// them. Entries without code (nvcc's device-link stubs) and defective ones
// are no targets; a container with none is left out.
func PickContainers(r Result, max int) []Container {
	var order []*Container
	byIndex := map[int]*Container{}
	for _, e := range r.Entries {
		c := byIndex[e.Container]
		if c == nil {
			c = &Container{Section: e.Section, Offset: e.ContainerOffset}
			byIndex[e.Container] = c
			order = append(order, c)
		}
		c.Bytes += int64(e.HeaderSize) + int64(min(e.PayloadSize, 1<<62))
		if e.Defect != "" || e.NoCode || !(e.Kind.IsCubin() || e.Kind.IsPTX()) {
			continue
		}
		if t := e.Arch.String(); !slices.Contains(c.Targets, t) {
			c.Targets = append(c.Targets, t)
		}
	}
	var sets []*Container
	bySet := map[string]*Container{}
	for _, c := range order {
		if len(c.Targets) == 0 {
			continue
		}
		slices.Sort(c.Targets)
		key := strings.Join(c.Targets, " ")
		best := bySet[key]
		if best == nil {
			bySet[key] = c
			sets = append(sets, c)
			best = c
		} else if c.Bytes < best.Bytes {
			like := best.Like
			*best = *c
			best.Like = like
		}
		best.Like++
	}
	slices.SortStableFunc(sets, func(a, b *Container) int { return b.Like - a.Like })
	out := make([]Container, 0, min(len(sets), max))
	for _, c := range sets[:min(len(sets), max)] {
		out = append(out, *c)
	}
	return out
}

// ReadContainer reads the container at offset in section of the ELF file
// at path, header and entries, refusing one larger than max bytes.
func ReadContainer(path, section string, offset, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("fatbin: %w", err)
	}
	defer f.Close()
	ef, err := elfbound.Open(f)
	if err != nil {
		return nil, fmt.Errorf("fatbin: %s is not a readable ELF file: %w", path, err)
	}
	sec, ok, err := ef.SectionByName(section)
	if err != nil {
		return nil, fmt.Errorf("fatbin: %s is not a readable ELF file: %w", path, err)
	}
	if !ok || sec.Type == elfbound.SHT_NOBITS {
		return nil, fmt.Errorf("fatbin: %s has no section %s with data", path, section)
	}
	r := ef.SectionReader(sec)
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
