package trace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/gpu-preflight/gpu-preflight/report/trace/jsonstream"
)

// A framer reads a form whose writer wraps each log line (or each part of
// one) in a record of its own, and hands every whole line to message.

// jsonFile reads Docker's json-file driver: one {"log":...,"stream":...,
// "attrs":...,"time":...} per line, where a part of a longer line is a log
// without a trailing newline (moby daemon/logger/jsonfilelog,
// marshalMessage).
func (rd *reader) jsonFile(d *jsonstream.Decoder) error {
	var log []byte
	return rd.entries(d, "json-file", func() error {
		var stream string
		var err error
		if log, stream, err = rd.jsonFileEntry(d, log[:0]); err != nil {
			return err
		}
		rd.stream = stream
		rd.hold(stream, log, bytes.HasSuffix(log, []byte("\n")))
		rd.stream = ""
		return nil
	})
}

// entries reads d to its end, calling entry at each object's start; a
// value that is no object, or one entry fails on, is skipped to its line's
// end and counted.
func (rd *reader) entries(d *jsonstream.Decoder, what string, entry func() error) error {
	for {
		rd.pos = Position{Source: rd.part, Line: d.Line()}
		k, err := d.Next()
		if err == nil && k == jsonstream.EOF {
			return d.ReadErr()
		}
		if err == nil && k == jsonstream.ObjectStart {
			err = entry()
		} else if err == nil {
			err = errors.New("not a " + what + " entry")
		}
		if err != nil {
			if rerr := d.CutByRead(); rerr != nil {
				return rerr
			}
			rd.counts.Skipped++
			d.SkipLine()
		}
	}
}

func (rd *reader) jsonFileEntry(d *jsonstream.Decoder, log []byte) ([]byte, string, error) {
	stream := ""
	for {
		k, err := d.Next()
		if err != nil || k == jsonstream.ObjectEnd {
			return log, stream, err
		}
		key, _, err := d.Text(16)
		if err != nil {
			return log, stream, err
		}
		name := string(key)
		if k, err = d.Next(); err != nil {
			return log, stream, err
		}
		switch {
		case name == "log" && k == jsonstream.String:
			t, over, err := d.Text(maxPart)
			if err != nil {
				return log, stream, err
			}
			log = append(log, t...)
			if over {
				log = append(log, '\n') // cut: read as a whole line, and found broken
			}
		case name == "stream" && k == jsonstream.String:
			t, _, err := d.Text(8)
			if err != nil {
				return log, stream, err
			}
			stream = string(t)
		case k == jsonstream.ObjectStart || k == jsonstream.ArrayStart:
			if err := skipValue(d); err != nil {
				return log, stream, err
			}
		}
	}
}

// skipValue skips the object or array just opened.
func skipValue(d *jsonstream.Decoder) error {
	for depth := 1; depth > 0; {
		k, err := d.Next()
		if err != nil {
			return err
		}
		switch k {
		case jsonstream.ObjectStart, jsonstream.ArrayStart:
			depth++
		case jsonstream.ObjectEnd, jsonstream.ArrayEnd:
			depth--
		case jsonstream.EOF:
			return io.ErrUnexpectedEOF
		}
	}
	return nil
}

// journalEntry is what a journald entry says of a container's log line.
type journalEntry struct {
	message   []byte
	null      bool   // journalctl printed MESSAGE as null: over its threshold
	partial   bool   // CONTAINER_PARTIAL_MESSAGE=true: a part, the rest follows
	container string // CONTAINER_ID_FULL, else CONTAINER_ID, else CONTAINER_NAME
	priority  string
}

// stream is the stream a container runtime's journald driver marks with
// the priority: 6 (info) for stdout, 3 (err) for stderr (moby
// daemon/logger/journald; conmon's journald writer does the same).
func (e *journalEntry) stream() string {
	if e.container == "" {
		return ""
	}
	switch e.priority {
	case "6":
		return Stdout
	case "3":
		return Stderr
	}
	return ""
}

// entry hands on the line an entry holds, joined with the parts before it.
func (rd *reader) entry(e *journalEntry) {
	rd.stream = e.stream()
	defer func() { rd.stream = "" }()
	key := e.container + "/" + rd.stream
	if e.null {
		// One line, in parts or not, is one record lost.
		if !rd.nulls[key] {
			rd.counts.Truncated++
			rd.report(ProblemTruncated, "a MESSAGE journalctl printed as null: fields of 4096 bytes or more need journalctl --all")
		}
		rd.nulls[key] = e.partial
		delete(rd.partials, key)
		return
	}
	delete(rd.nulls, key)
	rd.hold(key, e.message, !e.partial)
}

// isJournalJSON reports whether head starts journalctl's JSON (-o json,
// json-pretty, json-seq): an object holding __CURSOR or
// __REALTIME_TIMESTAMP among its first fields (in the journal's order).
func isJournalJSON(head []byte) bool {
	t := bytes.TrimLeft(head, "\x1e \t\r\n")
	return bytes.HasPrefix(t, []byte("{")) &&
		(bytes.Contains(head, []byte(`"__CURSOR"`)) || bytes.Contains(head, []byte(`"__REALTIME_TIMESTAMP"`)))
}

// journalJSON reads journalctl -o json (one entry per line; json-pretty
// and json-seq read alike): MESSAGE is a string, an array of byte values
// when it is not text, or null when longer than journalctl's threshold
// and --all was not given (systemd src/shared/logs-show.c, output_json).
func (rd *reader) journalJSON(d *jsonstream.Decoder) error {
	var e journalEntry
	return rd.entries(d, "journal", func() error {
		e = journalEntry{message: e.message[:0]}
		if err := rd.journalFields(d, &e); err != nil {
			return err
		}
		rd.entry(&e)
		return nil
	})
}

func (rd *reader) journalFields(d *jsonstream.Decoder, e *journalEntry) error {
	for {
		k, err := d.Next()
		if err != nil || k == jsonstream.ObjectEnd {
			return err
		}
		key, _, err := d.Text(64)
		if err != nil {
			return err
		}
		name := string(key)
		if k, err = d.Next(); err != nil {
			return err
		}
		switch k {
		case jsonstream.String:
			limit := 64
			if name == "MESSAGE" {
				limit = maxPart
			}
			t, _, err := d.Text(limit)
			if err != nil {
				return err
			}
			e.field(name, t)
		case jsonstream.Null:
			e.null = e.null || name == "MESSAGE"
		case jsonstream.ArrayStart:
			if name != "MESSAGE" {
				if err := skipValue(d); err != nil {
					return err
				}
				continue
			}
			for {
				k, err := d.Next()
				if err != nil {
					return err
				}
				if k == jsonstream.ArrayEnd {
					break
				}
				if n, err := strconv.Atoi(string(d.Raw())); err == nil && k == jsonstream.Number && len(e.message) < maxPart {
					e.message = append(e.message, byte(n))
				}
			}
		case jsonstream.ObjectStart:
			if err := skipValue(d); err != nil {
				return err
			}
		}
	}
}

func (e *journalEntry) field(name string, v []byte) {
	switch name {
	case "MESSAGE":
		e.message = append(e.message, v...)
	case "CONTAINER_PARTIAL_MESSAGE":
		e.partial = string(v) == "true"
	case "PRIORITY":
		e.priority = string(v)
	case "CONTAINER_ID_FULL":
		e.container = string(v)
	case "CONTAINER_ID", "CONTAINER_NAME":
		if e.container == "" {
			e.container = string(v)
		}
	}
}

// isJournalExport reports whether head starts the journal export format
// (journalctl -o export, systemd-journal-remote's input), whose entries
// start with __CURSOR or __REALTIME_TIMESTAMP.
func isJournalExport(head []byte) bool {
	return bytes.HasPrefix(head, []byte("__CURSOR=")) || bytes.HasPrefix(head, []byte("__REALTIME_TIMESTAMP="))
}

// journalExport reads the journal export format: each field a line
// "NAME=value", or "NAME\n", a little-endian 64-bit length and the value
// (binary or multi-line), and "\n"; an empty line ends an entry
// (systemd's JOURNAL_EXPORT_FORMATS).
func (rd *reader) journalExport(br *bufio.Reader) error {
	var e journalEntry
	var off int64
	for n := int64(1); ; n++ {
		rd.pos = Position{Source: rd.part, Offset: off}
		e = journalEntry{message: e.message[:0]}
		fields := 0
		for {
			line, err := readBounded(br, maxPart)
			off += int64(len(line))
			if err == io.EOF && len(line) == 0 {
				if fields > 0 {
					rd.entry(&e)
				}
				return nil
			}
			if err != nil {
				return err
			}
			line = bytes.TrimSuffix(line, []byte("\n"))
			if len(line) == 0 {
				break
			}
			fields++
			if name, value, ok := bytes.Cut(line, []byte("=")); ok {
				e.field(string(name), value)
				continue
			}
			var size [8]byte
			if _, err := io.ReadFull(br, size[:]); err != nil {
				return fmt.Errorf("a binary field's length: %w", err)
			}
			length := binary.LittleEndian.Uint64(size[:])
			off += 8 + int64(length) + 1
			if string(line) == "MESSAGE" && length <= maxPart {
				e.message = append(e.message, make([]byte, length)...)
				if _, err := io.ReadFull(br, e.message[len(e.message)-int(length):]); err != nil {
					return fmt.Errorf("a binary field: %w", err)
				}
			} else if _, err := br.Discard(int(min(length, 1<<62))); err != nil {
				return fmt.Errorf("a binary field: %w", err)
			}
			if b, err := br.ReadByte(); err != nil || b != '\n' {
				return errors.New("a binary field not ended by a newline")
			}
		}
		if fields > 0 {
			rd.entry(&e)
		}
	}
}

// readBounded reads a line of at most limit bytes; a longer one is read
// to its end and cut.
func readBounded(br *bufio.Reader, limit int) ([]byte, error) {
	var out []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(out) < limit {
			out = append(out, frag[:min(len(frag), limit-len(out))]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == nil && len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		return out, err
	}
}

// isDockerLocal reports whether head starts Docker's local driver file: a
// big-endian uint32 size, a protobuf LogEntry whose first field is its
// source, "stdout" or "stderr" (moby daemon/logger/local, marshal).
func isDockerLocal(head []byte) bool {
	return len(head) >= 12 && head[4] == 0x0a && head[5] == 6 &&
		(string(head[6:12]) == Stdout || string(head[6:12]) == Stderr)
}

// maxLocalEntry bounds one local-driver entry: the driver writes lines
// of at most 16 KiB (moby's copier splits longer ones).
const maxLocalEntry = 1 << 20

// dockerLocal reads Docker's local driver: each entry a big-endian uint32
// size, a protobuf LogEntry {1 source, 2 time_nano, 3 line, 4 partial,
// 5 partial_log_metadata {1 last, 2 id, 3 ordinal}} and the size again
// (moby daemon/logger/internal/logdriver/entry.proto).
func (rd *reader) dockerLocal(br *bufio.Reader) error {
	var buf []byte
	var off int64
	for {
		rd.pos = Position{Source: rd.part, Offset: off}
		var size [4]byte
		if _, err := io.ReadFull(br, size[:]); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("an entry's size: %w", err)
		}
		n := binary.BigEndian.Uint32(size[:])
		if n > maxLocalEntry {
			return fmt.Errorf("an entry of %d bytes, over %d: not the local driver's", n, maxLocalEntry)
		}
		buf = append(buf[:0], make([]byte, n+4)...)
		if _, err := io.ReadFull(br, buf); err != nil {
			return fmt.Errorf("an entry: %w", err)
		}
		off += int64(n) + 8
		e, err := decodeLogEntry(buf[:n])
		if err != nil {
			return err
		}
		rd.stream = e.source
		key := e.source
		if e.partial {
			key += "/" + e.id
		}
		rd.hold(key, e.line, !e.partial || e.last)
		rd.stream = ""
	}
}

type logEntry struct {
	source, id    string
	line          []byte
	partial, last bool
}

// decodeLogEntry reads the fields of a LogEntry it needs (protobuf wire
// format: a varint key, field number << 3 | wire type).
func decodeLogEntry(b []byte) (logEntry, error) {
	var e logEntry
	err := eachField(b, func(num int, v uint64, data []byte) error {
		switch num {
		case 1:
			e.source = string(data)
		case 3:
			e.line = data
		case 4:
			e.partial = v != 0
		case 5:
			return eachField(data, func(num int, v uint64, data []byte) error {
				switch num {
				case 1:
					e.last = v != 0
				case 2:
					e.id = string(data)
				}
				return nil
			})
		}
		return nil
	})
	return e, err
}

var errProto = errors.New("a local driver entry that is not a protobuf LogEntry")

func eachField(b []byte, f func(num int, v uint64, data []byte) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return errProto
		}
		b = b[n:]
		var v uint64
		var data []byte
		switch key & 7 {
		case 0:
			v, n = binary.Uvarint(b)
			if n <= 0 {
				return errProto
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return errProto
			}
			b = b[8:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return errProto
			}
			data, b = b[n:n+int(l)], b[n+int(l):]
		case 5:
			if len(b) < 4 {
				return errProto
			}
			b = b[4:]
		default:
			return errProto
		}
		if err := f(int(key>>3), v, data); err != nil {
			return err
		}
	}
	return nil
}
