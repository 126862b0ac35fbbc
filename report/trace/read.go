package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/trace/jsonstream"
	"github.com/gpu-preflight/gpu-preflight/report/trace/provline"
	"github.com/klauspost/compress/gzip"
)

// MaxMessageBytes bounds a line joined from its parts; past it, truncated.
const MaxMessageBytes = 512 << 10

// maxPart bounds one part of a line a framer reads (journald's LineMax is 48 KiB).
const maxPart = 64 << 10

// maxPartials bounds the bytes all readers hold of partial lines.
const maxPartials = 2 << 20

// Position is where a record or a problem was found: the stream as named
// on the command line (or the file of a directory), and its line.
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

// Problem is something trace did not count as a run, and why.
type Problem struct {
	Position
	Kind string `json:"kind"`
	What string `json:"what"`
}

// Kinds of Problem, each a count of Counts.
const (
	ProblemMalformed  = "malformed"
	ProblemSchema     = "schema"
	ProblemTruncated  = "truncated"
	ProblemStdout     = "stdout"
	ProblemFuture     = "future"
	ProblemConflict   = "conflict"
	ProblemLate       = "late outcome"
	ProblemMisplaced  = "misplaced"
	ProblemNotJobRun  = "not a job run"
	ProblemDuplicate  = "duplicate"
	ProblemUnjoinable = "outcome without its run"
)

func (p Problem) String() string { return p.Position.String() + ": " + p.What }

// item is what a reader hands the Tracer: a record or a finished line,
// with the time it sorts by.
type item struct {
	run      *provline.Run
	finished *provline.Finished
	at       time.Time
	pos      Position
}

// reader reads the streams of one source: it recognises each stream's
// form, joins the lines its writer split, finds the records and checks
// that each is one of this gpu-preflight's, written by it on stderr.
type reader struct {
	counts  *Counts
	problem func(Problem)
	emit    func(item)
	now     time.Time

	part       string // the stream's name in positions
	stream     string // the stream the framing says, "" when it says none
	form       string // the stream's form, named in the answer
	pos        Position
	named      bool   // the form names where the first record was found
	linePrefix string // the writer of the current line's prefix
	restarted  int64  // where the last value read again started
	search     searcher
	partials   map[string][]byte
	held       *atomic.Int64 // the bytes all readers hold of partial lines
	bufSize    int
	nulls      map[string]bool // a null part of a line came last under this key
	chunked    bool            // lines are parsed in chunks on workers
	inChunk    bool
	cut        bool // a value ran into the chunk's end
}

func newReader(c *Counts, now time.Time, held *atomic.Int64, bufSize int, problem func(Problem), emit func(item)) *reader {
	rd := &reader{counts: c, problem: problem, emit: emit, now: now, held: held, bufSize: bufSize,
		partials: map[string][]byte{}, nulls: map[string]bool{}}
	rd.search.rd = rd
	return rd
}

func (rd *reader) report(kind, what string) { rd.problem(Problem{rd.pos, kind, what}) }

// gzipMagic starts every gzip member (RFC 1952, ID1 ID2).
var gzipMagic = []byte{0x1f, 0x8b}

// read reads one stream (a file, standard input, a part of a directory),
// gzip'd or not, in the form its content shows.
func (rd *reader) read(part string, r io.Reader) error {
	rd.part, rd.pos = part, Position{Source: part}
	br := bufio.NewReaderSize(r, rd.bufSize)
	form := ""
	if magic, _ := br.Peek(2); bytes.Equal(magic, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: gzip: %w", part, err)
		}
		in := inflate(zr, rd.bufSize)
		defer in.close()
		br = bufio.NewReaderSize(in, rd.bufSize)
		form = "gzip, "
	}
	head, _ := br.Peek(rd.bufSize)
	head = bytes.TrimPrefix(head, []byte("\ufeff"))
	var err error
	switch {
	case isJournalExport(head):
		rd.setForm(form + "journald export")
		err = rd.journalExport(br)
	case isDockerLocal(head):
		rd.setForm(form + "Docker local")
		err = rd.dockerLocal(br)
	default:
		d := jsonstream.NewDecoderSize(br, rd.bufSize)
		d.SplitSizes = splitSizes
		switch {
		case bytes.HasPrefix(head, []byte(`{"log":"`)):
			rd.setForm(form + "Docker json-file")
			err = rd.jsonFile(d)
		case isJournalJSON(head):
			rd.setForm(form + "journalctl JSON")
			err = rd.journalJSON(d)
		default:
			rd.setForm(form + "lines")
			if rd.chunked && chunkWorkers > 1 {
				err = rd.linesInChunks(br)
			} else {
				err = rd.lines(d, true)
			}
		}
	}
	rd.flushPartials()
	if err != nil {
		return fmt.Errorf("%s: %w", rd.pos, err)
	}
	return nil
}

const inflateAhead = 4

// inflater inflates on a goroutine of its own, inflateAhead chunks ahead.
type inflater struct {
	full, free chan []byte
	done       chan struct{}
	chunk      []byte
	off        int
	err        error // set before full closes
}

func inflate(zr io.Reader, size int) *inflater {
	in := &inflater{full: make(chan []byte, inflateAhead), free: make(chan []byte, inflateAhead+1), done: make(chan struct{})}
	for range inflateAhead + 1 {
		in.free <- make([]byte, size)
	}
	go func() {
		defer close(in.full)
		for {
			var buf []byte
			select {
			case buf = <-in.free:
			case <-in.done:
				return
			}
			n, err := 0, error(nil)
			for n < len(buf) && err == nil {
				var k int
				k, err = zr.Read(buf[n:])
				n += k
			}
			if n > 0 {
				select {
				case in.full <- buf[:n]:
				case <-in.done:
					return
				}
			}
			if err != nil {
				in.err = err
				return
			}
		}
	}()
	return in
}

func (in *inflater) Read(p []byte) (int, error) {
	for in.off == len(in.chunk) {
		if in.chunk != nil {
			in.free <- in.chunk[:cap(in.chunk)]
			in.chunk, in.off = nil, 0
		}
		buf, ok := <-in.full
		if !ok {
			return 0, in.err
		}
		in.chunk, in.off = buf, 0
	}
	n := copy(p, in.chunk[in.off:])
	in.off += n
	return n, nil
}

func (in *inflater) close() { close(in.done) }

func (rd *reader) setForm(f string) {
	if rd.form == "" {
		rd.form = f
	}
}

// splitSizes are the lengths at which runtimes split a long line when they
// write each part as a line of its own (journalctl -o cat, kubectl logs of
// a runtime that does not join): containerd's and Docker's 16 KiB, conmon's
// 8 KiB (docs/trace.md).
var splitSizes = []int{16 << 10, 8 << 10}

// lines reads JSON values and text lines, each line after any prefix its
// writer put before it (prefixOf). top is false inside a string: the
// lines of a log entry that holds log lines.
func (rd *reader) lines(d *jsonstream.Decoder, top bool) error {
	outer := rd.stream
	defer func() { rd.stream = outer }()
	for {
		if d.TopLevel() {
			d.SkipSpace()
		}
		if d.AtEOF() {
			return d.ReadErr()
		}
		rd.stream = outer
		if top {
			rd.pos = Position{Source: rd.part, Line: d.Line()}
		}
		if d.TopLevel() && d.AtLineStart() {
			pre := prefixOf(d.PeekLine(maxPrefix))
			d.Discard(pre.n)
			if top {
				rd.linePrefix = pre.kind
			}
			if pre.cri {
				rd.stream = pre.stream
				if rd.criPart(d, pre) {
					continue
				}
			}
		}
		if d.TopLevel() {
			line, ok := d.BufferedLine()
			if ok && noRecord(line) {
				if top && len(bytes.TrimSpace(line)) > 0 {
					rd.counts.Skipped++
				}
				d.SkipLine()
				continue
			}
			// A prefix no writer above puts (syslog's, journalctl's): JSON starts at the first brace.
			if t := bytes.TrimLeft(line, " \t"); ok && len(t) > 0 && t[0] != '{' && t[0] != '[' && t[0] != '"' {
				if i := bytes.IndexByte(line, '{'); i > 0 {
					d.Discard(i)
				}
			}
		}
		k, err := d.Next()
		if err == nil && k == jsonstream.EOF {
			return d.ReadErr()
		}
		marks := rd.search.marks
		if err == nil {
			before := rd.counts.found
			err = rd.search.value(d, k, rd.pos)
			if err == nil && top && rd.counts.found == before && !rd.search.recordy() {
				rd.counts.Skipped++
			}
		}
		if err != nil {
			if rerr := d.CutByRead(); rerr != nil {
				return rerr
			}
			rd.broken(d, err, top, rd.search.marks > marks)
		}
	}
}

// noRecord reports whether a whole line names no record nor end of a run
// and opens no document that goes on past it.
func noRecord(line []byte) bool {
	if bytes.Contains(line, []byte("schemaVersion")) || bytes.Contains(line, []byte("finished")) {
		return false
	}
	t := bytes.TrimSpace(line)
	return len(t) == 0 || t[0] != '{' && t[0] != '[' || t[len(t)-1] == '}' || t[len(t)-1] == ']'
}

// broken counts a value that ended in an error: a record cut short or
// broken, or a line that was no record, and goes on after it.
func (rd *reader) broken(d *jsonstream.Decoder, err error, top, marked bool) {
	var se *jsonstream.SyntaxError
	errors.As(err, &se)
	switch {
	case !marked:
		if top {
			rd.counts.Skipped++
		}
	case errors.Is(err, errTruncatedValue) || se != nil && se.Cut():
		rd.counts.Truncated++
		rd.report(ProblemTruncated, "a provenance record cut short "+cutBy(int(d.Offset()-d.LineOffset())))
	default:
		rd.counts.Malformed++
		rd.report(ProblemMalformed, "a provenance record that is not valid JSON: "+err.Error())
	}
	rd.search.setRecordy(false)
	rd.cut = rd.cut || rd.inChunk && d.AtEOF()
	// A torn line before a whole one: the value that starts this line
	// is read again.
	if p := d.PeekLine(1); len(p) == 1 && (p[0] == '{' || p[0] == '[') && d.AtLineStart() && d.Offset() != rd.restarted {
		rd.restarted = d.Offset()
		d.Restart()
		return
	}
	d.SkipLine()
}

// cutBy names the limit a value of n bytes was most likely cut at.
func cutBy(n int) string {
	switch n {
	case 16 << 10:
		return "at 16 KiB, where Docker and containerd split a line (its last part is missing)"
	case 8 << 10:
		return "at 8 KiB, where conmon splits a line (its last part is missing)"
	case 10000:
		return "at 10000 bytes, Splunk's default TRUNCATE"
	case 256 << 10:
		return "at 256 KiB, Cloud Logging's and CloudWatch's entry limit"
	}
	return "after " + strconv.Itoa(n) + " bytes"
}

// inner reads the content of a string member that holds log lines.
func (rd *reader) inner(r io.Reader, s *searcher) error {
	var d *jsonstream.Decoder
	if n := len(s.decs); n > 0 {
		d = s.decs[n-1]
		s.decs = s.decs[:n-1]
		d.Reset(r)
	} else {
		d = jsonstream.NewDecoder(r)
		d.SplitSizes = splitSizes
	}
	err := rd.lines(d, false)
	s.decs = append(s.decs, d)
	return err
}

// message reads one log line a framer joined from its parts.
func (rd *reader) message(b []byte) {
	d := jsonstream.NewBytesDecoder(b)
	d.SplitSizes = splitSizes
	c := rd.counts
	before := c.found + c.Truncated + c.Malformed
	rd.lines(d, false)
	if c.found+c.Truncated+c.Malformed == before && !rd.search.recordy() {
		c.Skipped++
	}
}

// deliver checks a record or finished line found on stream and hands it
// on: only a record gpu-preflight wrote, on stderr when the stream is
// known, of this schema, complete, not dated in the future, and of a job.
func (rd *reader) deliver(f found, stream string) {
	rd.counts.found++
	if !rd.named {
		rd.named = true
		if rd.linePrefix != "" {
			rd.form = strings.Replace(rd.form, "lines", rd.linePrefix+" lines", 1)
		}
		if f.path != "" {
			rd.form += ", record at " + f.path
		}
	}
	if stream == Stdout {
		rd.counts.Stdout++
		rd.report(ProblemStdout, "a record the job printed on stdout, not gpu-preflight's (its log is stderr)")
		return
	}
	if f.finished != nil {
		at, _ := time.Parse(time.RFC3339Nano, f.finished.Time)
		rd.emit(item{finished: f.finished, at: at, pos: rd.pos})
		return
	}
	r := f.run
	if r.SchemaVersion != report.SchemaVersion {
		rd.counts.OtherSchema++
		rd.report(ProblemSchema, fmt.Sprintf("a record of schemaVersion %.40q; this gpu-preflight reads %q (use the gpu-preflight that wrote it)",
			r.SchemaVersion, report.SchemaVersion))
		return
	}
	at, err := time.Parse(time.RFC3339Nano, r.StartedAt)
	switch {
	case r.RunID == "":
		rd.counts.Malformed++
		rd.report(ProblemMalformed, "a provenance record without runId")
		return
	case err != nil:
		rd.counts.Malformed++
		rd.report(ProblemMalformed, fmt.Sprintf("a provenance record whose startedAt %.40q is not an RFC 3339 time", r.StartedAt))
		return
	case !rd.now.IsZero() && at.After(rd.now.Add(FutureSlack)):
		rd.counts.Future++
		rd.report(ProblemFuture, fmt.Sprintf("run %.40s is dated %s, more than a day after this trace ran: left out of the answers", r.RunID, r.StartedAt))
		return
	case r.NotJob():
		rd.counts.NotJobRuns++
		return
	}
	rd.emit(item{run: r, at: at, pos: rd.pos})
}

// FutureSlack is how far past the time trace runs a record may be dated
// (clocks disagree by minutes; a day is no skew).
const FutureSlack = 24 * time.Hour
