package fatbin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/gpu-preflight/gpu-preflight/preflight/elfbound"
)

type scanner struct {
	res    Result
	images map[imageKey]int
	// inContainer are the images of the container being read; groups
	// counts containers by groupKey, first seen in groupOrder.
	inContainer []imageKey
	inSet       map[imageKey]bool // inContainer's members
	groups      map[string]int
	groupOrder  [][]imageKey
	warnings    int // including those past maxWarnings
	entriesLeft int // entries not kept past maxEntries

	// Per section.
	name      string
	container int64 // the offset of the container being read
	rs        io.ReadSeeker
	size      int64 // readable size: the header's, or less if the file ends early
	resync    int64 // bytes read so far looking for a magic

	// ahead holds prefetch's bytes at aheadOff: an entry header and the
	// cubin header after it in one read.
	ahead     []byte
	aheadOff  int64
	hdr, peek []byte
	lz4       []byte
}

// prefetchLen is one entry header and a cubin's ELF header.
const prefetchLen = entryHeaderMin + cubinELFHeader

func (s *scanner) warnf(format string, args ...any) {
	s.warnings++
	if s.warnings <= maxWarnings {
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf(format, args...))
	}
}

// errTruncated marks a read that ran into the end of the file.
var errTruncated = errors.New("file ends early")

// prefetch reads up to n bytes at off for readAt; a failure is readAt's
// to meet.
func (s *scanner) prefetch(off int64, n int) {
	n = int(min(int64(n), s.size-off))
	if n <= 0 {
		return
	}
	if cap(s.ahead) < n {
		s.ahead = make([]byte, n)
	}
	s.ahead, s.aheadOff = s.ahead[:n], off
	if err := s.readFull(s.ahead, off); err != nil {
		s.ahead = s.ahead[:0]
	}
}

// readAt reads len(buf) bytes at off, from what prefetch read if it can.
func (s *scanner) readAt(buf []byte, off int64) error {
	if off >= s.aheadOff && off-s.aheadOff <= int64(len(s.ahead)) &&
		int64(len(buf)) <= int64(len(s.ahead))-(off-s.aheadOff) {
		copy(buf, s.ahead[off-s.aheadOff:])
		return nil
	}
	return s.readFull(buf, off)
}

func (s *scanner) readFull(buf []byte, off int64) error {
	if _, err := s.rs.Seek(off, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.ReadFull(s.rs, buf); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return errTruncated
		}
		return err
	}
	return nil
}

// section walks one fatbin section's containers back to back.
func (s *scanner) section(sec *section) error {
	s.name = sec.name
	s.resync = 0
	s.ahead = s.ahead[:0]
	if sec.typ == elfbound.SHT_NOBITS {
		s.warnf("section %s has no data in the file (SHT_NOBITS): not scanned", sec.name)
		return nil
	}
	if sec.flags&elfbound.SHF_COMPRESSED != 0 {
		s.warnf("section %s is ELF-compressed: not scanned", sec.name)
		return nil
	}
	s.rs = sec.open()
	if sec.size > 1<<62 {
		s.size = 1 << 62
	} else {
		s.size = int64(sec.size)
	}
	if err := s.fitToFile(); err != nil {
		return err
	}

	hdr := make([]byte, containerHeaderLen)
	off := int64(0)
	for off < s.size {
		if s.size-off < containerHeaderLen {
			s.trailing(off)
			return nil
		}
		s.prefetch(off, containerHeaderLen+prefetchLen)
		if err := s.readAt(hdr, off); err != nil {
			return s.readFailed(err, off)
		}
		magic := binary.LittleEndian.Uint32(hdr[0:])
		headerSize := int64(binary.LittleEndian.Uint16(hdr[6:]))
		fatSize := binary.LittleEndian.Uint64(hdr[8:])
		if magic != containerMagic || headerSize < containerHeaderLen || headerSize > s.size-off {
			why := fmt.Sprintf("bad magic 0x%08x", magic)
			if magic == containerMagic {
				why = fmt.Sprintf("header size %d", headerSize)
			}
			next, err := s.findMagic(off)
			if err != nil {
				return err
			}
			if next < 0 {
				s.warnf("corrupt container at %s offset %d (%s): no further container found", s.name, off, why)
				return nil
			}
			s.warnf("corrupt container at %s offset %d (%s): skipped to next magic at %d", s.name, off, why, next)
			off = next
			continue
		}
		s.res.Containers++
		body := off + headerSize
		end := s.size
		if fatSize <= uint64(s.size-body) {
			end = body + int64(fatSize)
		} else {
			s.warnf("container at %s offset %d claims %d bytes, past the section end at %d", s.name, off, fatSize, s.size)
		}
		s.container = off
		err := s.entries(body, end)
		s.endContainer()
		if err != nil {
			return err
		}
		off = end
	}
	return nil
}

// fitToFile shrinks s.size to what the file holds when the section header
// claims more, so that bounds are checked against real bytes.
func (s *scanner) fitToFile() error {
	if s.size == 0 {
		return nil
	}
	one := make([]byte, 1)
	err := s.readAt(one, s.size-1)
	if err == nil {
		return nil
	}
	if err != errTruncated {
		return err
	}
	lo, hi := int64(0), s.size-1 // readable length, an unreadable offset
	for lo < hi {
		mid := lo + (hi-lo)/2
		switch err := s.readAt(one, mid); err {
		case nil:
			lo = mid + 1
		case errTruncated:
			hi = mid
		default:
			return err
		}
	}
	s.warnf("section %s is truncated: it claims %d bytes, the file holds %d", s.name, s.size, lo)
	s.size = lo
	return nil
}

// readFailed turns a truncated read into a warning, else returns err.
func (s *scanner) readFailed(err error, off int64) error {
	if err == errTruncated {
		s.warnf("section %s is truncated at offset %d", s.name, off)
		return nil
	}
	return err
}

// trailing warns of bytes after the last container, padding aside.
func (s *scanner) trailing(off int64) {
	buf := make([]byte, s.size-off)
	if err := s.readAt(buf, off); err != nil {
		return
	}
	for _, b := range buf {
		if b != 0 {
			s.warnf("%d trailing bytes at %s offset %d are too few for a container header", len(buf), s.name, off)
			return
		}
	}
}

// findMagic returns the next 8-aligned container magic after off, -1 when
// there is none within maxResync bytes per section.
func (s *scanner) findMagic(off int64) (int64, error) {
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], containerMagic)
	pos := (off/containerAlign + 1) * containerAlign
	buf := make([]byte, 64<<10)
	for pos+containerHeaderLen <= s.size {
		if s.resync >= maxResync {
			s.warnf("gave up looking for a container magic in %s after reading %d bytes", s.name, s.resync)
			return -1, nil
		}
		n := int64(len(buf))
		if rest := s.size - pos; rest < n {
			n = rest
		}
		chunk := buf[:n]
		if err := s.readAt(chunk, pos); err != nil {
			if err == errTruncated {
				return -1, nil
			}
			return -1, err
		}
		s.resync += n
		for i := 0; i+4 <= len(chunk); i += containerAlign {
			if [4]byte(chunk[i:i+4]) == magic {
				return pos + int64(i), nil
			}
		}
		pos += n // n is a multiple of 8 unless it is the section's tail
	}
	return -1, nil
}

// entries walks one container's entries, header and payload back to back
// (note 1.3).
func (s *scanner) entries(body, end int64) error {
	if s.hdr == nil {
		s.hdr, s.peek = make([]byte, entryHeaderMin), make([]byte, noCodeProbeMax)
	}
	hdr, peek := s.hdr, s.peek
	for pos := body; pos < end; {
		if end-pos < entryHeaderMin {
			s.warnf("container in %s ends with %d bytes at offset %d, too few for an entry header", s.name, end-pos, pos)
			return nil
		}
		if pos < s.aheadOff || pos+entryHeaderMin > s.aheadOff+int64(len(s.ahead)) {
			s.prefetch(pos, int(min(prefetchLen, end-pos)))
		}
		if err := s.readAt(hdr, pos); err != nil {
			return s.readFailed(err, pos)
		}
		e := Entry{
			Section:          s.name,
			Offset:           pos,
			Container:        s.res.Containers - 1,
			ContainerOffset:  s.container,
			Kind:             Kind(binary.LittleEndian.Uint16(hdr[offKind:])),
			HeaderSize:       binary.LittleEndian.Uint32(hdr[offHeaderSize:]),
			PayloadSize:      binary.LittleEndian.Uint64(hdr[offPayloadSize:]),
			CodeMinor:        binary.LittleEndian.Uint16(hdr[offCodeMinor:]),
			CodeMajor:        binary.LittleEndian.Uint16(hdr[offCodeMajor:]),
			RawArch:          binary.LittleEndian.Uint32(hdr[offArch:]),
			Flags:            binary.LittleEndian.Uint64(hdr[offFlags:]),
			DecompressedSize: binary.LittleEndian.Uint64(hdr[offDecompressed:]),
		}
		e.Compression = compressionOf(e.Flags)
		if e.HeaderSize < entryHeaderMin || int64(e.HeaderSize) > end-pos {
			s.warnf("corrupt entry at %s offset %d (header size %d): rest of the container skipped", s.name, pos, e.HeaderSize)
			return nil
		}
		payload := pos + int64(e.HeaderSize)
		next := end
		if e.PayloadSize > uint64(end-payload) {
			e.Defect = "payload runs past the end of its container"
			s.warnf("entry at %s offset %d: payload of %d bytes runs past the container end at %d", s.name, pos, e.PayloadSize, end)
		} else {
			next = payload + int64(e.PayloadSize)
			if e.PayloadSize == 0 {
				e.Defect = "empty payload"
			}
		}
		if e.Kind.IsCubin() || e.Kind.IsPTX() {
			var p payloadView
			if e.Defect == "" {
				var err error
				p, err = s.payloadHead(e, payload, peek)
				if err != nil {
					return err
				}
			}
			s.classify(&e, p)
		}
		s.add(e)
		pos = next
	}
	return nil
}

// payloadView is what was read of a payload: its (decompressed) head, or
// all of a small one; told says whether code was known without it all.
type payloadView struct {
	head       []byte
	whole      bool // head is the entire (decompressed) payload
	told, code bool
}

// payloadHead reads what the suffix and no-code rules look at: the head of
// a payload, all of a small one, a large cubin's section headers; a ZSTD
// payload is not read.
func (s *scanner) payloadHead(e Entry, payload int64, buf []byte) (payloadView, error) {
	if e.Compression == CompressionZSTD {
		return payloadView{}, nil
	}
	n := min(int64(ptxPeek), int64(e.PayloadSize))
	if e.Kind.IsCubin() {
		n = min(n, cubinELFHeader)
	}
	whole := false
	if e.PayloadSize <= noCodeProbeMax && (e.Compression == CompressionNone || e.DecompressedSize <= noCodeDecompressedMax) {
		n, whole = int64(e.PayloadSize), true
	}
	if e.Compression == CompressionLZ4 && !whole {
		if e.Kind.IsCubin() {
			// Not worth a decode per entry: the flags tell the suffix.
			return payloadView{}, nil
		}
		n = min(int64(payloadPeek), int64(e.PayloadSize))
	}
	if int64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	head := buf[:n]
	if err := s.readAt(head, payload); err != nil {
		if err == errTruncated {
			return payloadView{}, nil // fitToFile makes this unlikely; tell nothing
		}
		return payloadView{}, err
	}
	if e.Compression == CompressionLZ4 {
		limit := payloadPeek
		if whole {
			limit = int(e.DecompressedSize)
		}
		s.lz4 = lz4Into(s.lz4, head, limit)
		out := s.lz4
		return payloadView{head: out, whole: whole && uint64(len(out)) == e.DecompressedSize}, nil
	}
	if e.Kind.IsCubin() && !whole {
		v := payloadView{head: head}
		v.code, v.told = s.cubinSectionsHaveCode(payload, e.PayloadSize, head)
		return v, nil
	}
	if e.Kind.IsPTX() && !whole && !hasTargetLine(head) && e.PayloadSize > uint64(n) {
		more := buf[n:min(int64(payloadPeek), int64(e.PayloadSize))]
		if err := s.readAt(more, payload+n); err != nil {
			if err == errTruncated {
				return payloadView{head: head}, nil
			}
			return payloadView{}, err
		}
		head = buf[:n+int64(len(more))]
	}
	return payloadView{head: head, whole: whole}, nil
}

// cubinSectionsHaveCode tells whether the uncompressed cubin at payload has
// a .text.* section from its section headers alone; told is false when they
// cannot be read.
func (s *scanner) cubinSectionsHaveCode(payload int64, size uint64, head []byte) (code, told bool) {
	t, ok := cubinSectionTable(head, size)
	if !ok || t.tableLen() > maxCubinSectionTable {
		return true, false
	}
	table := make([]byte, t.tableLen())
	if s.readAt(table, payload+int64(t.shoff)) != nil {
		return true, false
	}
	stroff, strsize := t.section(table, t.shstrndx)
	if stroff > size || strsize > size-stroff || strsize > maxCubinShstrtab {
		return true, false
	}
	strtab := make([]byte, strsize)
	if s.readAt(strtab, payload+int64(stroff)) != nil {
		return true, false
	}
	return t.anyText(table, strtab), true
}

// classify fills e.Arch and counts e as an image when it is loadable.
func (s *scanner) classify(e *Entry, p payloadView) {
	if !validSM(e.RawArch) {
		if e.Defect == "" {
			e.Defect = fmt.Sprintf("arch %d is not an SM number", e.RawArch)
		}
		return
	}
	e.Arch = archFromSM(e.RawArch)
	e.Arch.PTX = e.Kind.IsPTX()
	e.Arch.Suffix = archSuffix(e.Kind, e.RawArch, e.Flags, p.head)
	switch {
	case p.whole:
		e.NoCode = !hasCode(e.Kind, p.head)
	case p.told:
		e.NoCode = !p.code
	}
	if e.Defect != "" || e.NoCode {
		return
	}
	k := imageKey{arch: e.Arch}
	if e.Arch.PTX {
		k.ptxVersion = [2]uint16{e.CodeMajor, e.CodeMinor}
	}
	s.images[k]++
	// A set: a container of 262 000 entries carries a few distinct images,
	// and one of many distinct images is bounded by the file's size.
	if !s.inSet[k] {
		if s.inSet == nil {
			s.inSet = map[imageKey]bool{}
		}
		s.inSet[k] = true
		s.inContainer = append(s.inContainer, k)
	}
}

func (s *scanner) add(e Entry) {
	if len(s.res.Entries) >= maxEntries {
		s.entriesLeft++
		return
	}
	s.res.Entries = append(s.res.Entries, e)
}
