package trace

import (
	"bytes"
	"errors"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/report/trace/jsonstream"
	"github.com/gpu-preflight/gpu-preflight/report/trace/provline"
)

// Streams a record may have been written to.
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

// The string members a log pipeline keeps a log line in (classify): a
// container runtime's and Fluent Bit's log, zerolog's and Vector's
// message, journald's MESSAGE, Splunk's _raw, Cloud Logging's textPayload,
// the OpenTelemetry body's stringValue, Loki's line (docs/trace.md).

// maxPending bounds the records a unit holds back until it knows their
// stream; past it they are passed on with what it knows.
const maxPending = 64

// level is an open object or array.
type level struct {
	object bool
	b      *provline.Builder // its record, if it is one; nil for arrays and inside records
	key    keyKind           // the member whose value comes next
	name   string            // its name, kept while the form is not named
	record bool              // b read a schemaVersion: a record
	unit   bool              // a unit starts here
	otel   bool              // an OpenTelemetry attribute naming the stream
	inner  bool              // the value's string holds log lines read as levels of their own
}

// keyKind is what a member's name says to the search.
type keyKind uint8

const (
	keyOther keyKind = iota
	keyEnvelope
	keyMessage
	keyStream
	keyLogName
	keyAttr
	keyStringValue
	keySchemaVersion
)

func classify(k []byte) keyKind {
	switch string(k) {
	case "log", "MESSAGE", "_raw", "textPayload", "line", "msg":
		return keyEnvelope
	case "message":
		return keyMessage
	case "stream":
		return keyStream
	case "logName":
		return keyLogName
	case "key":
		return keyAttr
	case "stringValue":
		return keyStringValue
	case "schemaVersion":
		return keySchemaVersion
	}
	return keyOther
}

// unit is a log entry: a top-level value or an array's element (a search
// hit, a Loki entry). Its records wait for its end, where its stream is known.
type unit struct {
	stream  string
	pending []found
	recordy bool // it named schemaVersion or was a provenance line
	start   Position
}

// found is a record or a finished line, and where it was.
type found struct {
	run      *provline.Run
	finished *provline.Finished
	pos      Position
	path     string
}

// searcher finds records at any depth of JSON values, inside string
// members that hold log lines too.
type searcher struct {
	rd          *reader
	levels      []level
	units       []unit
	pool        []*provline.Builder
	decs        []*jsonstream.Decoder
	runs        []*provline.Run // delivered, to be filled again
	ends        []*provline.Finished
	scratch     provline.Scratch // recycled when no unit holds a record
	records     int              // open levels that are records
	lastRecordy bool             // the last top-level value held a record or its marks
	lastSet     bool
	lastUsed    bool // lastRecordy was read before it was set
	marks       int  // the marks of a record seen: schemaVersion, a provenance message
}

// recordy is lastRecordy, noting a read of what came before the reader.
func (s *searcher) recordy() bool {
	s.lastUsed = s.lastUsed || !s.lastSet
	return s.lastRecordy
}

func (s *searcher) setRecordy(v bool) { s.lastRecordy, s.lastSet = v, true }

func (s *searcher) builder() *provline.Builder {
	if n := len(s.pool); n > 0 {
		b := s.pool[n-1]
		s.pool = s.pool[:n-1]
		b.Reset()
		return b
	}
	b := &provline.Builder{Scratch: &s.scratch}
	b.Reset()
	return b
}

// value reads the value k starts, to its end. Its errors are the
// decoder's: the value is broken.
func (s *searcher) value(d *jsonstream.Decoder, k jsonstream.Kind, pos Position) error {
	base := len(s.levels)
	for {
		if err := s.token(d, k, pos); err != nil {
			s.unwind(base)
			return err
		}
		if len(s.levels) == base {
			return nil
		}
		var err error
		if k, err = d.Next(); err != nil {
			s.unwind(base)
			return err
		}
		if k == jsonstream.EOF {
			s.unwind(base)
			return errTruncatedValue
		}
	}
}

var errTruncatedValue = errors.New("the input ended inside a value")

// unwind drops the levels a broken value left open, keeping the records
// that were whole.
func (s *searcher) unwind(base int) {
	for len(s.levels) > base {
		l := s.levels[len(s.levels)-1]
		s.levels = s.levels[:len(s.levels)-1]
		s.drop(l)
		if l.unit {
			s.closeUnit()
		}
	}
}

// drop lets go of a closed level's builder.
func (s *searcher) drop(l level) {
	if l.b != nil {
		s.pool = append(s.pool, l.b)
	}
	if l.record {
		s.records--
	}
}

func (s *searcher) inArray() bool {
	return len(s.levels) > 0 && !s.levels[len(s.levels)-1].object
}

func (s *searcher) parent() *level {
	if len(s.levels) == 0 {
		return nil
	}
	return &s.levels[len(s.levels)-1]
}

// insideRecord reports whether an open object is a record already: what
// is inside it is its data.
func (s *searcher) insideRecord() bool { return s.records > 0 }

func (s *searcher) token(d *jsonstream.Decoder, k jsonstream.Kind, pos Position) error {
	switch k {
	case jsonstream.ObjectStart, jsonstream.ArrayStart:
		obj := k == jsonstream.ObjectStart
		if obj && !s.insideRecord() && startsRecord(d.Peek(64)) {
			return s.record(d, pos)
		}
		for i := range s.levels {
			if b := s.levels[i].b; b != nil {
				b.Start(!obj)
			}
		}
		l := level{object: obj, unit: len(s.levels) == 0 || s.inArray()}
		if obj && !s.insideRecord() {
			l.b = s.builder()
			l.b.Start(false)
		}
		if l.unit {
			s.openUnit(unit{start: pos})
		}
		s.levels = append(s.levels, l)
	case jsonstream.ObjectEnd, jsonstream.ArrayEnd:
		l := s.levels[len(s.levels)-1]
		s.levels = s.levels[:len(s.levels)-1]
		for i := range s.levels {
			if b := s.levels[i].b; b != nil {
				b.End()
			}
		}
		if l.b != nil {
			if l.record {
				s.records-- // the record itself is no data of a record
			}
			s.finish(l.b, pos)
			l.record = false
		}
		s.drop(l)
		if l.unit {
			s.closeUnit()
		}
	case jsonstream.Key:
		t, _, err := d.Text(64)
		if err != nil {
			return err
		}
		p := s.parent()
		p.key = classify(t)
		if !s.rd.named {
			p.name = string(t)
		}
		for i := range s.levels {
			if b := s.levels[i].b; b != nil {
				b.Key(t)
			}
		}
		if p.key == keySchemaVersion {
			s.unit().recordy = true
			s.marks++
		}
		if s.insideRecord() && !s.keeps() {
			s.each((*provline.Builder).Skip)
			return d.SkipValue()
		}
	case jsonstream.String:
		return s.str(d, pos)
	case jsonstream.Number:
		s.each(func(b *provline.Builder) { b.Number(d.Raw()) })
	case jsonstream.True, jsonstream.False:
		s.each(func(b *provline.Builder) { b.Bool(k == jsonstream.True) })
	default:
		s.each((*provline.Builder).Skip)
	}
	return nil
}

// startsRecord reports whether an object's first member is schemaVersion,
// as in every record gpu-preflight writes: its members are read at once.
func startsRecord(p []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(p, " \t\r\n"), []byte(`"schemaVersion"`))
}

// record reads a record whose ObjectStart d just returned, to its end.
func (s *searcher) record(d *jsonstream.Decoder, pos Position) error {
	s.each(func(b *provline.Builder) { b.Start(false) })
	root := len(s.levels) == 0 || s.inArray()
	if root {
		s.openUnit(unit{start: pos})
	}
	s.unit().recordy = true
	s.marks++
	b := s.builder()
	err := b.ReadObject(d)
	if err == nil {
		s.finish(b, pos)
		s.each((*provline.Builder).End)
	}
	s.pool = append(s.pool, b)
	if root {
		s.closeUnit()
	}
	return err
}

// keeps reports whether a builder keeps the value of the member whose
// name came last.
func (s *searcher) keeps() bool {
	for i := range s.levels {
		if b := s.levels[i].b; b != nil && b.Keeps() {
			return true
		}
	}
	return false
}

func (s *searcher) each(f func(*provline.Builder)) {
	for i := range s.levels {
		if b := s.levels[i].b; b != nil {
			f(b)
		}
	}
}

func (s *searcher) unit() *unit {
	if len(s.units) == 0 {
		s.openUnit(unit{})
	}
	return &s.units[len(s.units)-1]
}

// str handles a string value: a record's value, a member that names the
// stream, or a log line to look into.
func (s *searcher) str(d *jsonstream.Decoder, pos Position) error {
	wanted := false
	for i := range s.levels {
		if b := s.levels[i].b; b != nil && b.Wants() {
			wanted = true
		}
	}
	p := s.parent()
	key := keyOther
	if p != nil && p.object {
		key = p.key
	}
	streamy := key == keyStream || key == keyLogName || key == keyAttr || (key == keyStringValue && s.otelStream())
	carrier := (p == nil || !p.object || key == keyEnvelope || key == keyMessage || key == keyStringValue) &&
		!s.insideRecord() && holdsLines(d.Peek(16))
	if !carrier && (wanted || streamy || key == keyMessage && !s.insideRecord()) {
		t, more, sum, err := d.TextSum(provline.MaxTextBytes)
		if err != nil {
			return err
		}
		for i := range s.levels {
			l := &s.levels[i]
			if l.b != nil {
				l.b.String(t, more, sum)
				if !l.record && l.b.Record() {
					l.record = true
					s.records++
				}
			}
		}
		s.noteStream(key, t)
		return nil
	}
	s.each((*provline.Builder).Skip)
	if !carrier {
		return nil
	}
	if p != nil {
		p.inner = true
	}
	err := s.rd.inner(d.Stream(), s)
	if p != nil {
		p.inner = false
	}
	return err
}

// holdsLines reports whether a string whose content starts with p may
// hold log lines worth reading: a JSON value, or a line after a prefix
// that starts with a time or a bracket.
func holdsLines(p []byte) bool {
	p = bytes.TrimLeft(p, " \t")
	return len(p) > 0 && (p[0] == '{' || p[0] == '[' || p[0] >= '0' && p[0] <= '9')
}

// noteStream reads the stream a log entry was written to from the members
// that carry it: a runtime's and Vector's "stream", Cloud Logging's
// logName (projects/P/logs/stderr), an OpenTelemetry log.iostream
// attribute; and a provenance line makes the entry one that held a record.
func (s *searcher) noteStream(key keyKind, t []byte) {
	switch key {
	case keyStream:
		if st := streamName(t); st != "" {
			s.unit().stream = st
		}
	case keyStringValue:
		// The attribute is an element of its log record's attributes: the
		// record is the unit around the attribute's.
		if st := streamName(t); st != "" && len(s.units) >= 2 {
			s.units[len(s.units)-2].stream = st
		}
	case keyLogName:
		if i := bytes.LastIndexByte(t, '/'); i >= 0 {
			if st := streamName(t[i+1:]); st != "" {
				s.unit().stream = st
			}
		}
	case keyAttr:
		s.parent().otel = string(t) == "log.iostream"
	case keyMessage:
		if string(t) == "provenance" {
			s.unit().recordy = true
			s.marks++
		}
	}
}

func streamName(t []byte) string {
	switch string(t) {
	case Stdout:
		return Stdout
	case Stderr:
		return Stderr
	}
	return ""
}

// otelStream reports whether the string is the value of a log.iostream
// attribute: {"key":"log.iostream","value":{"stringValue":"stderr"}}.
func (s *searcher) otelStream() bool {
	n := len(s.levels)
	return n >= 2 && s.levels[n-2].object && s.levels[n-2].otel
}

// finish hands on what the object b read was: a record, or the line that
// ends a supervised run.
func (s *searcher) finish(b *provline.Builder, pos Position) {
	if s.insideRecord() {
		return // a record's data, not a record
	}
	f := found{pos: pos}
	if !s.rd.named {
		f.path = s.pathOf()
	}
	switch {
	case b.Record():
		r, _ := b.Run()
		f.run = take(&s.runs)
		f.run.Set(&r)
	case b.IsFinished():
		f.finished = take(&s.ends)
		*f.finished, _ = b.Finished()
	default:
		return
	}
	u := s.unit()
	u.recordy = true
	if len(u.pending) >= maxPending {
		s.deliver(f, s.streamOf(len(s.units)-1))
		return
	}
	u.pending = append(u.pending, f)
}

// openUnit opens u with the room of the unit last closed at its depth.
func (s *searcher) openUnit(u unit) {
	if n := len(s.units); n < cap(s.units) {
		u.pending = s.units[:n+1][n].pending[:0]
	}
	s.units = append(s.units, u)
}

// take is the last of pool, taken from it, else a new one.
func take[T any](pool *[]*T) *T {
	if n := len(*pool); n > 0 {
		x := (*pool)[n-1]
		*pool = (*pool)[:n-1]
		return x
	}
	return new(T)
}

// deliver hands f on; the Tracer keeps nothing of its run.
func (s *searcher) deliver(f found, stream string) {
	s.rd.deliver(f, stream)
	if f.run != nil {
		s.runs = append(s.runs, f.run)
	}
	if f.finished != nil {
		s.ends = append(s.ends, f.finished)
	}
}

// closeUnit delivers the unit's records with the stream it named, else
// the stream of the units around it.
func (s *searcher) closeUnit() {
	i := len(s.units) - 1
	if i < 0 {
		return
	}
	stream := s.streamOf(i)
	for _, f := range s.units[i].pending {
		s.deliver(f, stream)
	}
	if i > 0 && s.units[i].recordy {
		s.units[i-1].recordy = true
	}
	if i == 0 {
		s.setRecordy(s.units[0].recordy)
		s.scratch.Recycle()
	}
	s.units = s.units[:i]
}

// streamOf is the stream of unit i or the nearest unit around it that
// names one, else the stream the reader knows from the framing.
func (s *searcher) streamOf(i int) string {
	for ; i >= 0; i-- {
		if st := s.units[i].stream; st != "" {
			return st
		}
	}
	return s.rd.stream
}

// pathOf names where the value that just closed was: the members that
// lead to it, [] for an array's elements, > for a string's log lines.
func (s *searcher) pathOf() string {
	var parts []string
	for _, l := range s.levels {
		switch {
		case l.object:
			parts = append(parts, l.name)
		default:
			parts = append(parts, "[]")
		}
		if l.inner {
			parts[len(parts)-1] += ">"
		}
	}
	return strings.Join(parts, ".")
}

// recordish reports whether the bytes hold a provenance record's marks.
func recordish(b []byte) bool {
	return bytes.Contains(b, []byte("schemaVersion")) || bytes.Contains(b, []byte(`"provenance"`))
}
