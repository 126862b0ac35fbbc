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

// envelopeKeys name the string members a log pipeline keeps a log line
// in: a container runtime's and Fluent Bit's log, zerolog's and Vector's
// message, journald's MESSAGE, Splunk's _raw, Cloud Logging's textPayload,
// the OpenTelemetry body's stringValue, Loki's line (docs/trace.md).
var envelopeKeys = map[string]bool{"log": true, "message": true, "MESSAGE": true, "_raw": true,
	"textPayload": true, "stringValue": true, "line": true, "msg": true}

// maxPending bounds the records a unit holds back until it knows their
// stream; past it they are passed on with what it knows.
const maxPending = 64

// level is an open object or array.
type level struct {
	object bool
	b      *provline.Builder // its record, if it is one; nil for arrays
	key    string            // the member whose value comes next
	unit   bool              // a unit starts here
	otel   bool              // an OpenTelemetry attribute naming the stream
}

// unit is a log entry: a top-level value, or an element of an array (a
// search hit, a Loki entry, a CloudWatch event). Its records wait for its
// end, where a "stream" member after them is known.
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
	rd     *reader
	levels []level
	units  []unit
	pool   []*provline.Builder
	decs   []*jsonstream.Decoder
	path   []string
	// lastRecordy is whether the last top-level value held a record or
	// the marks of one.
	lastRecordy bool
}

func (s *searcher) builder() *provline.Builder {
	if n := len(s.pool); n > 0 {
		b := s.pool[n-1]
		s.pool = s.pool[:n-1]
		b.Reset()
		return b
	}
	b := &provline.Builder{}
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
		if l.b != nil {
			s.pool = append(s.pool, l.b)
		}
		if l.unit {
			s.closeUnit()
		}
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
func (s *searcher) insideRecord() bool {
	for i := range s.levels {
		if b := s.levels[i].b; b != nil && b.Record() {
			return true
		}
	}
	return false
}

func (s *searcher) token(d *jsonstream.Decoder, k jsonstream.Kind, pos Position) error {
	switch k {
	case jsonstream.ObjectStart, jsonstream.ArrayStart:
		obj := k == jsonstream.ObjectStart
		for i := range s.levels {
			if b := s.levels[i].b; b != nil {
				b.Start(!obj)
			}
		}
		l := level{object: obj, unit: len(s.levels) == 0 || s.inArray()}
		if p := s.parent(); p != nil && p.object {
			s.path = append(s.path, p.key)
		} else if p != nil {
			s.path = append(s.path, "[]")
		}
		if obj {
			l.b = s.builder()
			l.b.Start(false)
		}
		if l.unit {
			s.units = append(s.units, unit{start: pos})
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
			s.finish(l.b, pos)
			s.pool = append(s.pool, l.b)
		}
		if len(s.path) > 0 && len(s.levels) > 0 {
			s.path = s.path[:len(s.path)-1]
		}
		if l.unit {
			s.closeUnit()
		}
	case jsonstream.Key:
		t, _, err := d.Text(64)
		if err != nil {
			return err
		}
		p := s.parent()
		p.key = string(t)
		for i := range s.levels {
			if b := s.levels[i].b; b != nil {
				b.Key(t)
			}
		}
		if p.key == "schemaVersion" {
			s.unit().recordy = true
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

func (s *searcher) each(f func(*provline.Builder)) {
	for i := range s.levels {
		if b := s.levels[i].b; b != nil {
			f(b)
		}
	}
}

func (s *searcher) unit() *unit {
	if len(s.units) == 0 {
		s.units = append(s.units, unit{})
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
	key := ""
	if p != nil && p.object {
		key = p.key
	}
	streamy := key == "stream" || key == "logName" || key == "key" || (key == "stringValue" && s.otelStream())
	if wanted || streamy || (key == "message" && !s.insideRecord()) {
		t, more, sum, err := d.TextSum(provline.MaxTextBytes)
		if err != nil {
			return err
		}
		s.each(func(b *provline.Builder) { b.String(t, more, sum) })
		s.noteStream(key, t)
		return nil
	}
	if (p == nil || !p.object || envelopeKeys[key]) && !s.insideRecord() {
		s.each((*provline.Builder).Skip)
		if p != nil && p.object {
			s.path = append(s.path, key+">")
		} else if p != nil {
			s.path = append(s.path, "[]>")
		}
		err := s.rd.inner(d.Stream(), s)
		if p != nil {
			s.path = s.path[:len(s.path)-1]
		}
		return err
	}
	s.each((*provline.Builder).Skip)
	return nil
}

// noteStream reads the stream a log entry was written to from the members
// that carry it: a runtime's and Vector's "stream", Cloud Logging's
// logName (projects/P/logs/stderr), an OpenTelemetry log.iostream
// attribute; and a provenance line makes the entry one that held a record.
func (s *searcher) noteStream(key string, t []byte) {
	v := string(t)
	switch key {
	case "stream", "stringValue":
		if v == Stdout || v == Stderr {
			s.unit().stream = v
		}
	case "logName":
		if i := strings.LastIndexByte(v, '/'); i >= 0 && (v[i+1:] == Stdout || v[i+1:] == Stderr) {
			s.unit().stream = v[i+1:]
		}
	case "key":
		s.parent().otel = v == "log.iostream"
	case "message":
		if v == "provenance" {
			s.unit().recordy = true
		}
	}
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
	f := found{pos: pos, path: strings.Join(s.path, ".")}
	if r, ok := b.Run(); ok {
		f.run = &r
	} else if fin, ok := b.Finished(); ok {
		f.finished = &fin
	} else {
		return
	}
	u := s.unit()
	u.recordy = true
	if len(u.pending) >= maxPending {
		s.rd.deliver(f, s.streamOf(len(s.units)-1))
		return
	}
	u.pending = append(u.pending, f)
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
		s.rd.deliver(f, stream)
	}
	if i > 0 && s.units[i].recordy {
		s.units[i-1].recordy = true
	}
	if i == 0 {
		s.lastRecordy = s.units[0].recordy
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

// recordish reports whether the bytes hold a provenance record's marks.
func recordish(b []byte) bool {
	return bytes.Contains(b, []byte("schemaVersion")) || bytes.Contains(b, []byte(`"provenance"`))
}
