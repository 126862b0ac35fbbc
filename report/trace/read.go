package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report"
)

// MaxLineBytes bounds one line of a source (and one value of a JSON
// document). A record gpu-preflight writes is at most about 2.5 MiB (512
// variables of 4 KiB, findings cut at 4 KiB) and normally a few KiB; a
// Loki line holds it escaped inside a string. A longer line is skipped and
// counted without ever being held whole.
const MaxLineBytes = 8 << 20

// Position is where a record or a problem was found: the source as named
// on the command line, and the line (1-based) in a line-per-record source,
// or the byte offset into a JSON document (ES _search responses, indented
// record files) where Line is 0.
type Position struct {
	Source string `json:"source"`
	Line   int64  `json:"line,omitempty"`
	Offset int64  `json:"offset,omitempty"`
}

func (p Position) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d", p.Source, p.Line)
	}
	return fmt.Sprintf("%s:byte %d", p.Source, p.Offset)
}

// Problem is a line that held a record trace could not use.
type Problem struct {
	Position
	// Kind is ProblemMalformed or ProblemSchema.
	Kind string `json:"kind"`
	What string `json:"what"`
}

const (
	// ProblemMalformed: the line looks like a provenance record (it names
	// schemaVersion) but is not valid JSON or lacks runId or startedAt.
	ProblemMalformed = "malformed"
	// ProblemSchema: a record of another schemaVersion.
	ProblemSchema = "schema"
)

func (p Problem) String() string { return p.Position.String() + ": " + p.What }

// gzipMagic starts every gzip member (RFC 1952, ID1 ID2).
var gzipMagic = []byte{0x1f, 0x8b}

// Read reads one source, a stream of records in any of the forms a log
// pipeline holds them (docs/trace.md), gzip-compressed or not, and adds
// every record to t. Lines that are not records are counted and skipped;
// a line that is a broken record is reported through Options.Problem. The
// error is the stream's own (a truncated gzip, a read error): the records
// read before it still count.
func (t *Tracer) Read(name string, r io.Reader) error {
	return t.ReadPart(name, name, r)
}

// ReadPart reads part (a file of a records directory) of the source
// named source: its records count under source, its problems name part.
func (t *Tracer) ReadPart(source, part string, r io.Reader) error {
	return t.readInto(t.sourceStats(source), part, r)
}

// readInto reads one stream into the counts of st. It touches no other
// state of t but through st.counts.emit, so Merge runs it in a goroutine
// per source.
func (t *Tracer) readInto(st *SourceCounts, part string, r io.Reader) error {
	src := &st.counts
	name := part
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); bytes.Equal(magic, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: gzip: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	lr := lineReader{r: br}
	first, over, err := lr.next()
	if err != nil && err != io.EOF {
		return fmt.Errorf("%s: %w", name, err)
	}
	if !over && looksLikeDocument(first) {
		doc := io.MultiReader(bytes.NewReader(append(first, '\n')), br)
		return t.readDocument(name, doc, src)
	}
	line := int64(0)
	for {
		line++
		if over {
			src.OverLong++
			t.problem(Problem{Position{Source: name, Line: line}, ProblemMalformed,
				fmt.Sprintf("line longer than %d bytes skipped", MaxLineBytes)}, src)
		} else if len(bytes.TrimSpace(first)) > 0 {
			t.line(Position{Source: name, Line: line}, first, src)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		first, over, err = lr.next()
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s:%d: %w", name, line+1, err)
		}
	}
}

// lineReader reads lines of at most MaxLineBytes; a longer line is read to
// its end and dropped, so memory stays at MaxLineBytes whatever the input.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
}

// next returns the next line without its newline. over is true when the
// line was longer than MaxLineBytes (line is then empty). err is io.EOF
// after the last line.
func (l *lineReader) next() (line []byte, over bool, err error) {
	if cap(l.buf) > 1<<20 {
		l.buf = nil // one long line must not keep its buffer for the rest
	}
	l.buf = l.buf[:0]
	for {
		frag, err := l.r.ReadSlice('\n')
		if !over {
			if len(l.buf)+len(frag) > MaxLineBytes+1 {
				over, l.buf = true, l.buf[:0]
			} else {
				l.buf = append(l.buf, frag...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == nil:
			return bytes.TrimRight(l.buf, "\r\n"), over, nil
		case err == io.EOF && len(l.buf) == 0 && !over:
			return nil, false, io.EOF
		case err == io.EOF:
			return bytes.TrimRight(l.buf, "\r\n"), over, io.EOF
		default:
			return bytes.TrimRight(l.buf, "\r\n"), over, err
		}
	}
}

// looksLikeDocument reports whether the first line opens a JSON value and
// ends with an opening brace or bracket: a pretty-printed document (an
// Elasticsearch _search response with ?pretty, an indented record file,
// jq's output) rather than JSON lines, whose first line may be broken.
func looksLikeDocument(first []byte) bool {
	b := bytes.TrimSpace(first)
	if len(b) == 0 || (b[0] != '{' && b[0] != '[') {
		return false
	}
	last := b[len(b)-1]
	return (last == '{' || last == '[') && !json.Valid(b)
}

// line handles one line of a line-per-record source.
func (t *Tracer) line(pos Position, b []byte, src *Counts) {
	b = bytes.TrimSpace(b)
	if b[0] != '{' && b[0] != '[' {
		// Fluent Bit's file output, format out_file: "TAG: [TIME, {RECORD}]".
		i := bytes.Index(b, []byte(": ["))
		if i < 0 {
			src.Skipped++
			return
		}
		b = b[i+2:]
	}
	if n := t.extract(pos, b, src, 0); n == 0 {
		src.Skipped++
	}
}

// maxNesting bounds how many envelopes extract opens around a record (a
// Loki line holding a Fluent Bit record holding the zerolog line's record
// is three).
const maxNesting = 6

// envelope is what extract reads of a JSON object to find the record in
// it: each field is one way a log pipeline wraps it (docs/trace.md).
type envelope struct {
	SchemaVersion json.RawMessage `json:"schemaVersion"` // the record itself (ledger, record file)
	Message       *string         `json:"message"`       // zerolog: "provenance", with the record under "record"
	Record        json.RawMessage `json:"record"`
	Source        json.RawMessage `json:"_source"` // an Elasticsearch hit, an elasticdump line
	Line          *string         `json:"line"`    // logcli --output=jsonl: the log line as a string
	Log           *string         `json:"log"`     // the container runtime's line, unparsed (Fluent Bit tail, Docker json-file)
	Hits          *struct {
		Hits []json.RawMessage `json:"hits"`
	} `json:"hits"` // an Elasticsearch _search response on one line
}

// recordPrefix is how a record encoded by gpu-preflight starts (the
// ledger's lines): decoded without looking for an envelope.
var recordPrefix = []byte(`{"schemaVersion":`)

// extract finds the records in one JSON value b and adds them, returning
// how many lines it counted as records (added, filtered out, or broken).
func (t *Tracer) extract(pos Position, b []byte, src *Counts, depth int) int {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || depth > maxNesting {
		return 0
	}
	if bytes.HasPrefix(b, recordPrefix) {
		t.record(pos, b, src)
		return 1
	}
	switch b[0] {
	case '[':
		// Fluent Bit out_file's [TIME, {RECORD}] (or [[TIME, {META}], {RECORD}]):
		// the record is the last object.
		var arr []json.RawMessage
		if json.Unmarshal(b, &arr) != nil {
			return t.broken(pos, b, src)
		}
		for i := len(arr) - 1; i >= 0; i-- {
			if e := bytes.TrimSpace(arr[i]); len(e) > 0 && e[0] == '{' {
				return t.extract(pos, e, src, depth+1)
			}
		}
		return 0
	case '{':
	case '"':
		var s string
		if json.Unmarshal(b, &s) != nil {
			return 0
		}
		return t.extract(pos, []byte(s), src, depth+1)
	default:
		return 0
	}
	var e envelope
	if err := json.Unmarshal(b, &e); err != nil {
		return t.broken(pos, b, src)
	}
	switch {
	case e.SchemaVersion != nil:
		t.record(pos, b, src)
		return 1
	case len(e.Record) > 0 && (e.Message == nil || *e.Message == provenanceMessage):
		// The provenance line, or what a search kept of it ("_source":
		// ["record"]): any other line's "record" is not ours.
		return t.extract(pos, e.Record, src, depth+1)
	case len(e.Source) > 0:
		return t.extract(pos, e.Source, src, depth+1)
	case e.Line != nil:
		return t.extract(pos, []byte(*e.Line), src, depth+1)
	case e.Log != nil:
		return t.extract(pos, []byte(*e.Log), src, depth+1)
	case e.Hits != nil:
		n := 0
		for _, h := range e.Hits.Hits {
			n += t.extract(pos, h, src, depth+1)
		}
		return n
	}
	return 0
}

// provenanceMessage is the message of gpu-preflight's provenance log line
// (logs.ProvenanceMessage; report/logs imports zerolog, which trace has no
// use for).
const provenanceMessage = "provenance"

// broken counts b as a malformed record when it names schemaVersion (it
// meant to be one), else as a line that is no record.
func (t *Tracer) broken(pos Position, b []byte, src *Counts) int {
	if !bytes.Contains(b, []byte(`"schemaVersion"`)) && !bytes.Contains(b, []byte(`\"schemaVersion\"`)) {
		return 0
	}
	src.Malformed++
	t.problem(Problem{pos, ProblemMalformed, "a provenance record that is not valid JSON"}, src)
	return 1
}

// record decodes one record and adds it.
func (t *Tracer) record(pos Position, b []byte, src *Counts) {
	var r report.Record
	if err := json.Unmarshal(b, &r); err != nil {
		src.Malformed++
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		what := "a provenance record that is not valid JSON"
		if errors.As(err, &te) {
			what = fmt.Sprintf("a provenance record whose %s is not a %s", te.Field, te.Type)
		} else if !errors.As(err, &se) {
			what = "a provenance record that does not decode: " + err.Error()
		}
		t.problem(Problem{pos, ProblemMalformed, what}, src)
		return
	}
	if r.SchemaVersion != report.SchemaVersion {
		src.OtherSchema++
		t.problem(Problem{pos, ProblemSchema, fmt.Sprintf("a record of schemaVersion %.40q; this gpu-preflight reads %q (use the gpu-preflight that wrote it)",
			r.SchemaVersion, report.SchemaVersion)}, src)
		return
	}
	if r.RunID == "" {
		src.Malformed++
		t.problem(Problem{pos, ProblemMalformed, "a provenance record without runId"}, src)
		return
	}
	at, err := time.Parse(time.RFC3339Nano, r.StartedAt)
	if err != nil {
		src.Malformed++
		t.problem(Problem{pos, ProblemMalformed, fmt.Sprintf("a provenance record whose startedAt %.40q is not an RFC 3339 time", r.StartedAt)}, src)
		return
	}
	if src.emit != nil {
		src.emit(&r, at)
		return
	}
	t.add(&r, at, src)
}

// readDocument reads a JSON document: an Elasticsearch or OpenSearch
// _search response, whose hits.hits it decodes one at a time, or any other
// value (an indented record file), decoded whole. Every value decoded at
// once is bounded by MaxLineBytes.
func (t *Tracer) readDocument(name string, r io.Reader, src *Counts) error {
	lr := &budgetReader{r: r}
	dec := json.NewDecoder(lr)
	for {
		pos := Position{Source: name, Offset: dec.InputOffset()}
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return t.docError(pos, err, src)
		}
		if d, ok := tok.(json.Delim); !ok || d != '{' {
			// A top-level array or scalar: decode the rest of it whole.
			if d, ok := tok.(json.Delim); ok && d == '[' {
				for dec.More() {
					pos.Offset = dec.InputOffset()
					var v json.RawMessage
					lr.reset()
					if err := dec.Decode(&v); err != nil {
						return t.docError(pos, err, src)
					}
					if t.extract(pos, v, src, 1) == 0 {
						src.Skipped++
					}
				}
				if _, err := dec.Token(); err != nil {
					return t.docError(pos, err, src)
				}
				continue
			}
			src.Skipped++
			continue
		}
		// An object: stream hits.hits; keep the other members (bounded) in
		// case the object is itself a record or an envelope.
		rest := map[string]json.RawMessage{}
		restBytes := 0
		streamed := 0
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return t.docError(pos, err, src)
			}
			key, _ := kt.(string)
			if key == "hits" {
				n, err := t.streamHits(name, dec, lr, src)
				if err != nil {
					return err
				}
				streamed += n
				continue
			}
			var v json.RawMessage
			lr.reset()
			if err := dec.Decode(&v); err != nil {
				return t.docError(pos, err, src)
			}
			if restBytes += len(v); restBytes > MaxLineBytes {
				return t.docError(pos, errOverBudget, src)
			}
			rest[key] = v
		}
		if _, err := dec.Token(); err != nil {
			return t.docError(pos, err, src)
		}
		if streamed == 0 && len(rest) > 0 {
			b, _ := json.Marshal(rest)
			if t.extract(pos, b, src, 0) == 0 {
				src.Skipped++
			}
		}
	}
}

// streamHits reads the value of a response's "hits" member: an object
// whose "hits" array holds the documents, each decoded on its own.
func (t *Tracer) streamHits(name string, dec *json.Decoder, lr *budgetReader, src *Counts) (int, error) {
	pos := Position{Source: name, Offset: dec.InputOffset()}
	tok, err := dec.Token()
	if err != nil {
		return 0, t.docError(pos, err, src)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return 0, nil // not a search response's hits: a scalar, skipped
	}
	n := 0
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return n, t.docError(pos, err, src)
		}
		if key, _ := kt.(string); key != "hits" {
			var skip json.RawMessage
			lr.reset()
			if err := dec.Decode(&skip); err != nil {
				return n, t.docError(pos, err, src)
			}
			continue
		}
		if tok, err := dec.Token(); err != nil {
			return n, t.docError(pos, err, src)
		} else if d, ok := tok.(json.Delim); !ok || d != '[' {
			continue
		}
		for dec.More() {
			pos.Offset = dec.InputOffset()
			var hit json.RawMessage
			lr.reset()
			if err := dec.Decode(&hit); err != nil {
				return n, t.docError(pos, err, src)
			}
			n++
			if t.extract(pos, hit, src, 1) == 0 {
				src.Skipped++
			}
		}
		if _, err := dec.Token(); err != nil {
			return n, t.docError(pos, err, src)
		}
	}
	_, err = dec.Token()
	if err != nil {
		return n, t.docError(pos, err, src)
	}
	return max(n, 1), nil
}

// errOverBudget is a JSON value over MaxLineBytes. Its text is made when
// it is read: a formatted error at package level would run fmt at every
// start of the shim, which never reads a trace.
var errOverBudget error = overBudget{}

type overBudget struct{}

func (overBudget) Error() string {
	return "a JSON value longer than " + strconv.Itoa(MaxLineBytes) + " bytes"
}

// docError reports a document that cannot be read on: the rest of the
// source is skipped (a JSON document has no next line to carry on from).
func (t *Tracer) docError(pos Position, err error, src *Counts) error {
	if errors.Is(err, errOverBudget) {
		src.OverLong++
	} else if errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, new(*json.SyntaxError)) {
		src.Malformed++
	}
	return fmt.Errorf("%s: reading the JSON document: %w (the rest of it is skipped)", pos, err)
}

// budgetReader fails once more than MaxLineBytes (plus the decoder's read
// ahead) are read since the last reset: json.Decoder holds a whole value
// in memory, and a document's value must not grow without bound.
type budgetReader struct {
	r    io.Reader
	used int
}

func (b *budgetReader) reset() { b.used = 0 }

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.used > MaxLineBytes+64<<10 {
		return 0, errOverBudget
	}
	n, err := b.r.Read(p)
	b.used += n
	return n, err
}
