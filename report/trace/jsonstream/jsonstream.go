// Package jsonstream reads a stream of JSON values token by token in
// memory bounded by its buffer, whatever the input: strings are read in
// pieces (Text keeps a capped prefix, Stream reads the whole content as a
// stream of its own), values nested deeper than MaxDepth are skipped
// whole, and a syntax error costs the value it is in, not the stream.
// Values may follow each other on one line or span lines (JSON lines, a
// pretty-printed document, a torn line before a whole one).
package jsonstream

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is a token's kind.
type Kind uint8

// Token kinds. Key and String leave their content unread: Text or Stream
// reads it, else Next skips it.
const (
	EOF Kind = iota
	ObjectStart
	ObjectEnd
	ArrayStart
	ArrayEnd
	Key
	String
	Number
	True
	False
	Null
	// Deep is a value nested deeper than MaxDepth, skipped whole.
	Deep
)

// MaxDepth bounds the nesting the Decoder keeps track of.
const MaxDepth = 64

// maxNumber bounds a number's or literal's length.
const maxNumber = 256

// bufSize is the read buffer: any token but a string must fit in it.
const bufSize = 64 << 10

// SyntaxError is a value that is not JSON.
type SyntaxError struct {
	Offset int64
	Line   int64
	What   string
	cut    bool
}

// Cut reports whether the value was cut short rather than broken: the
// input ended, or a line ended, inside it.
func (e *SyntaxError) Cut() bool { return e.cut }

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, byte %d: %s", e.Line, e.Offset, e.What)
}

var errNewline = errors.New("a newline inside a string: a line was cut short")

// Decoder reads JSON values from a stream.
type Decoder struct {
	src  io.Reader
	buf  []byte
	r, w int
	base int64 // stream offset of buf[0]
	err  error // the source's error once it returned one

	stack   []byte // '{' or '[' per open container
	expect  byte   // what may come next: 'v' value, 'k' key or '}', ',' separator or end, ':' colon
	open    bool   // a Key or String token whose content is unread
	isKey   bool
	line    int64 // newlines read
	lineOff int64 // offset of the current line's first byte
	scratch []byte
	sum     hash.Hash
	sumBuf  [sha256.Size]byte
	rune    [utf8.UTFMax]byte
	odd     bool // a control character or a byte that is not UTF-8 was read

	// SplitSizes are line lengths at which a newline inside a string is a
	// writer's split of a long line, not the end of a line.
	SplitSizes []int
}

// NewDecoder returns a Decoder reading r.
func NewDecoder(r io.Reader) *Decoder { return NewDecoderSize(r, bufSize) }

// NewDecoderSize returns a Decoder reading r through a buffer of size
// bytes (at least 4 KiB): numbers and literals must fit in it.
func NewDecoderSize(r io.Reader, size int) *Decoder {
	return &Decoder{src: r, buf: make([]byte, max(size, 4<<10)), expect: 'v', line: 1}
}

// NewBytesDecoder returns a Decoder reading b, without a copy.
func NewBytesDecoder(b []byte) *Decoder {
	d := &Decoder{}
	d.ResetBytes(b)
	return d
}

// ResetBytes makes d read b, without a copy, keeping its room.
func (d *Decoder) ResetBytes(b []byte) {
	*d = Decoder{buf: b, w: len(b), err: io.EOF, expect: 'v', line: 1, scratch: d.scratch[:0], stack: d.stack[:0], SplitSizes: d.SplitSizes}
}

// Reset makes d read r from its start, keeping its buffers.
func (d *Decoder) Reset(r io.Reader) {
	*d = Decoder{src: r, buf: d.buf, scratch: d.scratch[:0], stack: d.stack[:0], expect: 'v', line: 1, SplitSizes: d.SplitSizes}
}

// At numbers d's input as a longer stream's from offset, on line.
func (d *Decoder) At(offset, line int64) {
	d.base, d.lineOff, d.line = offset-int64(d.r), offset, line
}

// Offset is the stream offset of the next unread byte.
func (d *Decoder) Offset() int64 { return d.base + int64(d.r) }

// Odd reports whether a string read since the last call held a control
// character or a byte that is not UTF-8, and forgets it: text that may
// take more bytes written again than read.
func (d *Decoder) Odd() bool {
	o := d.odd
	d.odd = false
	return o
}

// LineOffset is the stream offset of the current line's first byte.
func (d *Decoder) LineOffset() int64 { return d.lineOff }

// Line is the line (1-based) of the next unread byte.
func (d *Decoder) Line() int64 { return d.line }

// Depth is the number of open objects and arrays.
func (d *Decoder) Depth() int { return len(d.stack) }

// TopLevel reports whether the next token starts a top-level value.
func (d *Decoder) TopLevel() bool { return len(d.stack) == 0 && !d.open }

// fill reads more input, keeping buf[d.r:]. It reports whether any byte was
// added.
func (d *Decoder) fill() bool {
	if d.err != nil {
		return false
	}
	if d.r > 0 {
		n := copy(d.buf, d.buf[d.r:d.w])
		d.base += int64(d.r)
		d.r, d.w = 0, n
	}
	for tries := 0; d.w < len(d.buf) && tries < 100; tries++ {
		n, err := d.src.Read(d.buf[d.w:])
		d.w += n
		if err != nil {
			d.err = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	return false
}

// ensure reads until n bytes are buffered past d.r, or the input ends.
func (d *Decoder) ensure(n int) {
	for d.w-d.r < n && d.fill() {
	}
}

// ReadErr is the error the source ended with: nil at its end, else why
// it ended early.
func (d *Decoder) ReadErr() error {
	if d.err == io.EOF {
		return nil
	}
	return d.err
}

// CutByRead is the error a read failed with, where the input ends there
// at the next unread byte: a value broken at that point was cut by the
// read; one broken before it, by its own bytes.
func (d *Decoder) CutByRead() error {
	if err := d.ReadErr(); err != nil && d.AtEOF() {
		return err
	}
	return nil
}

func (d *Decoder) syntax(what string) error {
	return &SyntaxError{Offset: d.Offset(), Line: d.line, What: what, cut: strings.HasPrefix(what, "unexpected end")}
}

// skipSpace skips white space, counting lines. A byte order mark at the
// start of a line is space too.
func (d *Decoder) skipSpace() (byte, bool) {
	for {
		for d.r < d.w {
			switch c := d.buf[d.r]; c {
			case ' ', '\t', '\r', 0x1e: // 0x1e starts each value of a JSON text sequence (RFC 7464)
				d.r++
			case '\n':
				d.r++
				d.line++
				d.lineOff = d.Offset()
			case 0xef:
				d.ensure(3)
				if d.w-d.r >= 3 && d.buf[d.r+1] == 0xbb && d.buf[d.r+2] == 0xbf && d.Offset() == d.lineOff {
					d.r += 3
					d.lineOff = d.Offset()
					continue
				}
				return c, true
			default:
				return c, true
			}
		}
		if !d.fill() {
			return 0, false
		}
	}
}

// SkipSpace skips white space (and byte order marks at line starts).
func (d *Decoder) SkipSpace() { d.skipSpace() }

// Next reads the next token. At the end of input it returns EOF, with an
// error when the input ended inside a value. After a SyntaxError the
// caller skips to a line (SkipLine) or starts over (Restart).
func (d *Decoder) Next() (Kind, error) {
	if d.open {
		if err := d.skipString(); err != nil {
			return EOF, err
		}
	}
	for {
		c, ok := d.skipSpace()
		if !ok {
			if len(d.stack) > 0 || d.expect == ':' || (d.expect == 'v' && d.isKey) {
				return EOF, d.syntax("unexpected end of input")
			}
			return EOF, nil
		}
		switch d.expect {
		case ',':
			switch {
			case c == ',' && len(d.stack) > 0:
				d.r++
				if d.stack[len(d.stack)-1] == '{' {
					d.expect = 'K'
				} else {
					d.expect = 'V'
				}
				continue
			case len(d.stack) == 0:
				d.expect = 'v' // the next top-level value
				continue
			case c == '}' || c == ']':
				return d.end(c)
			}
			return EOF, d.syntax(fmt.Sprintf("%q after a value", c))
		case ':':
			if c != ':' {
				return EOF, d.syntax(fmt.Sprintf("%q after a key", c))
			}
			d.r++
			d.expect = 'V'
			continue
		case 'k', 'K':
			if c == '}' && d.expect == 'k' {
				return d.end(c)
			}
			if c != '"' {
				return EOF, d.syntax(fmt.Sprintf("%q where a key belongs", c))
			}
			d.r++
			d.open, d.isKey = true, true
			d.expect = ':'
			return Key, nil
		}
		// A value ('v': first in an array or at top level; 'V' after a
		// separator or colon).
		if c == ']' && d.expect == 'v' && len(d.stack) > 0 && d.stack[len(d.stack)-1] == '[' {
			return d.end(c)
		}
		d.isKey = false
		d.expect = ','
		switch c {
		case '{', '[':
			d.r++
			if len(d.stack) == MaxDepth {
				if err := d.skipDeep(c); err != nil {
					return EOF, err
				}
				return Deep, nil
			}
			d.stack = append(d.stack, c)
			if c == '{' {
				d.expect = 'k'
				return ObjectStart, nil
			}
			d.expect = 'v'
			return ArrayStart, nil
		case '"':
			d.r++
			d.open = true
			return String, nil
		case 't', 'f', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			return d.scalar(c)
		}
		return EOF, d.syntax(fmt.Sprintf("%q where a value belongs", c))
	}
}

func (d *Decoder) end(c byte) (Kind, error) {
	top := d.stack[len(d.stack)-1]
	if (c == '}') != (top == '{') {
		return EOF, d.syntax(fmt.Sprintf("%q closes a %q", c, top))
	}
	d.r++
	d.stack = d.stack[:len(d.stack)-1]
	d.expect = ','
	if c == '}' {
		return ObjectEnd, nil
	}
	return ArrayEnd, nil
}

// scalar reads a number or a literal.
func (d *Decoder) scalar(c byte) (Kind, error) {
	for i := 0; ; i++ {
		if i > maxNumber {
			return EOF, d.syntax("a number longer than 256 bytes")
		}
		if d.r+i == d.w && !d.fill() {
			break
		}
		if !scalarByte(d.buf[d.r+i]) {
			return d.literal(d.buf[d.r : d.r+i])
		}
	}
	return d.literal(d.buf[d.r:d.w])
}

func scalarByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b == '-' || b == '+' || b == '.' || b == 'E'
}

func (d *Decoder) literal(tok []byte) (Kind, error) {
	d.scratch = append(d.scratch[:0], tok...)
	d.r += len(tok)
	switch string(tok) {
	case "true":
		return True, nil
	case "false":
		return False, nil
	case "null":
		return Null, nil
	}
	if !validNumber(tok) {
		return EOF, d.syntax(fmt.Sprintf("%.20q is no JSON value", tok))
	}
	return Number, nil
}

// validNumber checks the JSON number grammar (RFC 8259, section 6).
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i == len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i == len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	return i == len(b)
}

// Raw is the last Number's text.
func (d *Decoder) Raw() []byte { return d.scratch }

// skipDeep skips a value opened by c beyond MaxDepth, strings included.
func (d *Decoder) skipDeep(c byte) error {
	depth := 1
	for depth > 0 {
		for d.r < d.w && stops[d.buf[d.r]]&endsDeep == 0 {
			d.r++
		}
		b, ok := d.skipSpace()
		if !ok {
			return d.syntax("unexpected end of input in a deeply nested value")
		}
		switch b {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			d.r++
			d.open = true
			if err := d.skipString(); err != nil {
				return err
			}
			continue
		}
		d.r++
	}
	d.expect = ','
	return nil
}

// SkipContainer skips the rest of the object or array Next just opened.
func (d *Decoder) SkipContainer() error {
	c := d.stack[len(d.stack)-1]
	d.stack = d.stack[:len(d.stack)-1]
	return d.skipDeep(c)
}

// Peek returns up to n unread bytes, reading more as needed, without
// consuming them.
func (d *Decoder) Peek(n int) []byte {
	d.ensure(n)
	return d.buf[d.r:min(d.w, d.r+n)]
}

// SkipValue skips the value after the Key just read, whole: its strings
// and nesting are scanned, not read as tokens.
func (d *Decoder) SkipValue() error {
	if d.open {
		if err := d.skipString(); err != nil {
			return err
		}
	}
	if d.expect != ':' {
		return errors.New("jsonstream: SkipValue not after a key")
	}
	c, ok := d.skipSpace()
	if !ok || c != ':' {
		return d.syntax("a key without its colon")
	}
	d.r++
	c, ok = d.skipSpace()
	if !ok {
		return d.syntax("unexpected end of input")
	}
	switch c {
	case '{', '[':
		d.r++
		return d.skipDeep(c)
	case '"':
		d.r++
		d.open = true
		err := d.skipString()
		d.expect = ','
		return err
	}
	d.expect = 'V'
	_, err := d.Next()
	return err
}

// SkipLine discards the rest of the current line and forgets the value
// it was in: reading starts over at the next line.
func (d *Decoder) SkipLine() {
	d.open, d.isKey = false, false
	d.stack = d.stack[:0]
	d.expect = 'v'
	for {
		if i := bytes.IndexByte(d.buf[d.r:d.w], '\n'); i >= 0 {
			d.r += i + 1
			d.line++
			d.lineOff = d.Offset()
			return
		}
		d.r = d.w
		if !d.fill() {
			return
		}
	}
}

// Restart forgets the value being read and reads the next byte as the
// start of a new top-level value.
func (d *Decoder) Restart() {
	d.open, d.isKey = false, false
	d.stack = d.stack[:0]
	d.expect = 'v'
}

// AtLineStart reports whether only white space precedes the next unread
// byte on its line.
func (d *Decoder) AtLineStart() bool {
	if d.lineOff < d.base {
		return false
	}
	for i := int(d.lineOff - d.base); i < d.r; i++ {
		if c := d.buf[i]; c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// PeekLine returns up to n bytes from the next unread one, within the
// current line's buffered part, without reading them.
func (d *Decoder) PeekLine(n int) []byte {
	d.ensure(n)
	b := d.buf[d.r:min(d.w, d.r+n)]
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

// BufferedLine returns the rest of the current line, without reading it,
// when the buffer holds it to its newline (or to the end of input): ok is
// false for a line longer than the buffer.
func (d *Decoder) BufferedLine() (line []byte, ok bool) {
	from := 0
	for {
		if i := bytes.IndexByte(d.buf[d.r+from:d.w], '\n'); i >= 0 {
			return d.buf[d.r : d.r+from+i], true
		}
		from = d.w - d.r
		if !d.fill() {
			return d.buf[d.r:d.w], d.err != nil
		}
	}
}

// Discard drops n bytes that PeekLine returned.
func (d *Decoder) Discard(n int) { d.r += n }

// Text reads the open Key's or String's content: up to limit bytes of it,
// UTF-8 with every invalid byte made U+FFFD, and whether there was more.
// The slice is valid until the next call.
func (d *Decoder) Text(limit int) ([]byte, bool, error) {
	return d.text(limit, false)
}

// TextSum is Text, and when there was more, the SHA-256 of the whole
// content: the prefix tells a long value, the sum tells two apart.
func (d *Decoder) TextSum(limit int) ([]byte, bool, [sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	b, more, err := d.text(limit, true)
	if more {
		copy(sum[:], d.sum.Sum(d.sumBuf[:0]))
	}
	return b, more, sum, err
}

func (d *Decoder) text(limit int, wantSum bool) ([]byte, bool, error) {
	if !d.open {
		return nil, false, errors.New("jsonstream: Text without an open string")
	}
	if j := d.plain(); j < d.w && d.buf[j] == '"' && j-d.r <= limit {
		d.scratch = append(d.scratch[:0], d.buf[d.r:j]...)
		d.r, d.open = j+1, false
		return d.scratch, false, nil
	}
	d.scratch = d.scratch[:0]
	more := false
	// over takes what comes past limit: the sum of the whole starts with
	// the prefix kept.
	over := func(b []byte) {
		if !more {
			more = true
			if wantSum {
				if d.sum == nil {
					d.sum = sha256.New()
				}
				d.sum.Reset()
				d.sum.Write(d.scratch)
			}
		}
		if wantSum {
			d.sum.Write(b)
		}
	}
	for {
		if more && !wantSum {
			return d.scratch, more, d.skipString()
		}
		if j := d.plain(); j > d.r {
			run := d.buf[d.r:j]
			d.r = j
			if more {
				over(run)
				continue
			}
			room := limit - len(d.scratch)
			if len(run) > room {
				d.scratch = append(d.scratch, run[:room]...)
				over(run[room:])
				continue
			}
			d.scratch = append(d.scratch, run...)
			if d.r < d.w && d.buf[d.r] == '"' {
				d.r++
				d.open = false
				return d.scratch, more, nil
			}
			continue
		}
		_, n, err := d.decodeRune(d.rune[:])
		if err != nil || n == 0 {
			return d.scratch, more, err
		}
		if !more && len(d.scratch)+n <= limit {
			d.scratch = append(d.scratch, d.rune[:n]...)
			continue
		}
		over(d.rune[:n])
	}
}

// plain returns the end of the buffered run of ASCII to copy as it is.
func (d *Decoder) plain() int {
	for i, c := range d.buf[d.r:d.w] {
		if stops[c] != 0 {
			return d.r + i
		}
	}
	return d.w
}

// stops marks the bytes that end a skipped string's run, a plain one, and a deep value's.
var stops = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c == '"' || c == '\\' || c < 0x20:
			t[c] = endsString | endsPlain
		case c >= utf8.RuneSelf:
			t[c] = endsPlain
		}
		if strings.IndexByte("{}[]\"\n\xef", byte(c)) >= 0 {
			t[c] |= endsDeep
		}
	}
	return t
}()

const (
	endsString = 1 << iota
	endsPlain
	endsDeep
)

// decodeRune reads the next rune of the open string into p, returning its
// length; 0 at the closing quote, which closes the string. Invalid UTF-8
// and lone surrogates come out as U+FFFD.
func (d *Decoder) decodeRune(p []byte) (rune, int, error) {
	d.ensure(12)
	if d.r == d.w {
		return 0, 0, d.syntax("unexpected end of input in a string")
	}
	c := d.buf[d.r]
	switch {
	case c == '"':
		d.r++
		d.open = false
		return 0, 0, nil
	case c == '\\':
		r, err := d.escape()
		if err != nil {
			return 0, 0, err
		}
		if r < 0x20 || r == utf8.RuneError {
			d.odd = true
		}
		return r, utf8.EncodeRune(p, r), nil
	case c == '\n':
		if err := d.newlineInString(); err != nil {
			return 0, 0, err
		}
		return d.decodeRune(p)
	case c < 0x20:
		return 0, 0, d.syntax("a control character in a string")
	case c < utf8.RuneSelf:
		d.r++
		p[0] = c
		return rune(c), 1, nil
	}
	r, n := utf8.DecodeRune(d.buf[d.r:d.w])
	d.r += n
	if r == utf8.RuneError && n == 1 {
		d.odd = true
		return r, utf8.EncodeRune(p, r), nil
	}
	copy(p, d.buf[d.r-n:d.r])
	return r, n, nil
}

// newlineInString accepts a raw newline in a string only where a writer
// split a long line (SplitSizes), and drops it.
func (d *Decoder) newlineInString() error {
	length := d.Offset() - d.lineOff
	for _, s := range d.SplitSizes {
		if length == int64(s) {
			d.r++
			d.line++
			d.lineOff = d.Offset()
			return nil
		}
	}
	return &SyntaxError{Offset: d.Offset(), Line: d.line, What: errNewline.Error(), cut: true}
}

// escape reads a backslash escape (at least 12 bytes are buffered unless
// the input ends).
func (d *Decoder) escape() (rune, error) {
	if d.w-d.r < 2 {
		return 0, d.syntax("unexpected end of input in an escape")
	}
	e := d.buf[d.r+1]
	d.r += 2
	switch e {
	case '"', '\\', '/':
		return rune(e), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r, ok := hex4(d.buf[d.r:d.w])
		if !ok {
			return 0, d.syntax("a bad \\u escape")
		}
		d.r += 4
		if utf16.IsSurrogate(r) {
			if d.w-d.r >= 6 && d.buf[d.r] == '\\' && d.buf[d.r+1] == 'u' {
				if r2, ok := hex4(d.buf[d.r+2 : d.w]); ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						d.r += 6
						return dec, nil
					}
				}
			}
			return utf8.RuneError, nil
		}
		return r, nil
	}
	return 0, d.syntax(fmt.Sprintf("a bad escape \\%c", e))
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func (d *Decoder) skipString() error {
	for {
		i := d.w
		for j, c := range d.buf[d.r:d.w] {
			if stops[c]&endsString != 0 {
				i = d.r + j
				break
			}
		}
		d.r = i
		if i == d.w {
			if !d.fill() {
				return d.syntax("unexpected end of input in a string")
			}
			continue
		}
		switch c := d.buf[i]; {
		case c == '"':
			d.r++
			d.open = false
			return nil
		case c == '\\':
			d.ensure(12)
			if _, err := d.escape(); err != nil {
				return err
			}
		case c == '\n':
			if err := d.newlineInString(); err != nil {
				return err
			}
		default:
			return d.syntax("a control character in a string")
		}
	}
}

// Stream returns the open string's content as a stream of its own (a log
// line inside a log pipeline's envelope), valid until the next call on
// d. Invalid UTF-8 comes out as U+FFFD.
func (d *Decoder) Stream() io.Reader { return stringReader{d} }

type stringReader struct{ d *Decoder }

func (s stringReader) Read(p []byte) (int, error) {
	d := s.d
	if !d.open {
		return 0, io.EOF
	}
	n := 0
	for {
		n += d.unescape(p[n:])
		if n+utf8.UTFMax > len(p) {
			break
		}
		_, k, err := d.decodeRune(p[n:])
		if err != nil {
			return n, err
		}
		if k == 0 {
			break
		}
		n += k
	}
	if n == 0 && !d.open {
		return 0, io.EOF
	}
	return n, nil
}

// unescape copies the buffered content of the open string into p, up to
// the first byte that takes decodeRune: plain runs, and the escapes of
// JSON inside a string (\", \\, \/) one byte each.
func (d *Decoder) unescape(p []byte) int {
	src := d.buf[d.r:d.w]
	i, n := 0, 0
	for i < len(src) && n < len(p) {
		c := src[i]
		if stops[c] == 0 {
			p[n] = c
			i++
			n++
			continue
		}
		if c != '\\' || i+1 == len(src) {
			break
		}
		c = src[i+1]
		if c != '"' && c != '\\' && c != '/' {
			break
		}
		p[n] = c
		n++
		i += 2
	}
	d.r += i
	return n
}

// ReadLine appends the rest of the current line to dst, at most limit
// bytes of it, consumes the line and its newline, and reports whether
// bytes past limit were dropped.
func (d *Decoder) ReadLine(dst []byte, limit int) ([]byte, bool) {
	d.Restart()
	over := false
	for {
		i := d.r
		for i < d.w && d.buf[i] != '\n' {
			i++
		}
		room := limit - len(dst)
		chunk := d.buf[d.r:i]
		if len(chunk) > room {
			chunk, over = chunk[:max(room, 0)], true
		}
		dst = append(dst, chunk...)
		d.r = i
		if i < d.w {
			d.r++
			d.line++
			d.lineOff = d.Offset()
			return dst, over
		}
		if !d.fill() {
			return dst, over
		}
	}
}

// AtEOF reports whether no byte is left to read.
func (d *Decoder) AtEOF() bool {
	return d.r == d.w && !d.fill()
}
