package pyenv

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Literal is a value a Python module assigns at its top level, read without
// an interpreter: a string, number, None, True or False, a name, a list or
// tuple, a dict, or a call or subscript of them (OrderedDict([...])).
type Literal struct {
	kind  literalKind
	text  string // a string's value, a number's or a name's text, "True"/"False"
	items []Literal
}

type literalKind int

const (
	litOther literalKind = iota
	litStr
	litNum
	litNone
	litBool
	litName
	litList // [..] or (..)
	litDict // items are 2-item litList pairs
	litCall // f(args) or x[args]: items are the arguments
)

// Bounds that keep a hostile module's cost small: real generated modules
// (version.py, build_info.py, an editable finder) assign a few dozen values.
const (
	maxLiteralDepth  = 32
	maxModuleLiteral = 1 << 16 // values built over the whole module
)

// Str returns a string literal's value.
func (l Literal) Str() (string, bool) {
	if l.kind != litStr {
		return "", false
	}
	return l.text, true
}

// Scalar returns a string or number literal as text.
func (l Literal) Scalar() (string, bool) {
	if l.kind != litStr && l.kind != litNum {
		return "", false
	}
	return l.text, true
}

// True reports whether l is the literal True.
func (l Literal) True() bool { return l.kind == litBool && l.text == "True" }

// Items returns a list's or tuple's items.
func (l Literal) Items() []Literal {
	if l.kind != litList {
		return nil
	}
	return l.items
}

// Pairs returns the string-keyed pairs of a dict, of a list of 2-tuples, or
// of a call wrapping either (OrderedDict([...]), dict(...)).
func (l Literal) Pairs() map[string]Literal {
	out := map[string]Literal{}
	l.pairs(out, 0)
	return out
}

func (l Literal) pairs(out map[string]Literal, depth int) {
	switch {
	case depth > 2:
	case l.kind == litDict || l.kind == litList:
		for _, it := range l.items {
			if it.kind == litList && len(it.items) == 2 && it.items[0].kind == litStr {
				out[it.items[0].text] = it.items[1]
			}
		}
	case l.kind == litCall:
		for _, arg := range l.items {
			arg.pairs(out, depth+1)
		}
	}
}

// ModuleAssignments returns the top-level assignments "name = literal" of a
// Python module, an annotation allowed ("cuda: Optional[str] = '11.8'"), the
// last one of a name winning. Every other statement is skipped, so a
// function or an import never derails it.
func ModuleAssignments(src []byte) map[string]Literal {
	p := &literalParser{lex: lexer{src: src}}
	out := map[string]Literal{}
	for p.peek(0).kind != tokEOF && p.values < maxModuleLiteral {
		if p.peek(0).kind == tokNewline {
			p.advance(1)
			continue
		}
		if name, v, ok := p.assignment(); ok {
			out[name] = v
		}
		for k := p.peek(0).kind; k != tokNewline && k != tokEOF; k = p.peek(0).kind {
			p.advance(1)
		}
	}
	return out
}

// literalParser reads statements from tokens it pulls from the lexer, a
// few ahead, so that memory holds values, never the whole token stream.
type literalParser struct {
	lex    lexer
	ahead  []pyToken
	values int
	// trailingComma is set by sequence when its last item was followed by
	// a comma: "(x,)" is a tuple, "(x)" is x.
	trailingComma bool
}

func (p *literalParser) peek(k int) pyToken {
	for len(p.ahead) <= k {
		p.ahead = append(p.ahead, p.lex.next())
	}
	return p.ahead[k]
}

func (p *literalParser) advance(n int) {
	p.peek(n - 1)
	p.ahead = p.ahead[:copy(p.ahead, p.ahead[n:])]
}

func (p *literalParser) isOp(k int, s string) bool {
	t := p.peek(k)
	return t.kind == tokOp && t.text == s
}

// value counts one more value built, false once the module's budget is spent.
func (p *literalParser) value() bool {
	p.values++
	return p.values <= maxModuleLiteral
}

// assignment parses "NAME [: annotation] = expr" ending its logical line,
// the name at column 0.
func (p *literalParser) assignment() (string, Literal, bool) {
	t := p.peek(0)
	if t.kind != tokName || t.col != 0 {
		return "", Literal{}, false
	}
	p.advance(1)
	if p.isOp(0, ":") {
		p.advance(1)
		if _, ok := p.expr(0); !ok {
			return "", Literal{}, false
		}
	}
	if !p.isOp(0, "=") || p.isOp(1, "=") {
		return "", Literal{}, false
	}
	p.advance(1)
	v, ok := p.expr(0)
	if k := p.peek(0).kind; !ok || k != tokNewline && k != tokEOF {
		return "", Literal{}, false
	}
	return t.text, v, true
}

// expr parses a literal, a name, or a call, subscript or attribute of one.
func (p *literalParser) expr(depth int) (Literal, bool) {
	if depth > maxLiteralDepth || !p.value() {
		return Literal{}, false
	}
	v, ok := p.primary(depth)
	for ok {
		switch {
		case p.isOp(0, "."):
			n := p.peek(1)
			if n.kind != tokName {
				return Literal{}, false
			}
			p.advance(2)
			v = Literal{kind: litName, text: v.text + "." + n.text}
		case p.isOp(0, "(") || p.isOp(0, "["):
			closer := ")"
			if p.isOp(0, "[") {
				closer = "]"
			}
			p.advance(1)
			args, ok := p.sequence(closer, depth+1)
			if !ok {
				return Literal{}, false
			}
			v = Literal{kind: litCall, text: v.text, items: args}
		default:
			return v, true
		}
	}
	return v, false
}

func (p *literalParser) primary(depth int) (Literal, bool) {
	t := p.peek(0)
	switch t.kind {
	case tokString:
		var b strings.Builder // adjacent literals concatenate
		for p.peek(0).kind == tokString {
			b.WriteString(p.peek(0).text)
			p.advance(1)
		}
		return Literal{kind: litStr, text: b.String()}, true
	case tokNumber:
		p.advance(1)
		return Literal{kind: litNum, text: t.text}, true
	case tokName:
		p.advance(1)
		switch t.text {
		case "None":
			return Literal{kind: litNone}, true
		case "True", "False":
			return Literal{kind: litBool, text: t.text}, true
		}
		return Literal{kind: litName, text: t.text}, true
	case tokOp:
		switch t.text {
		case "-", "+":
			n := p.peek(1)
			if n.kind != tokNumber {
				return Literal{}, false
			}
			p.advance(2)
			if t.text == "-" {
				return Literal{kind: litNum, text: "-" + n.text}, true
			}
			return Literal{kind: litNum, text: n.text}, true
		case "[":
			p.advance(1)
			items, ok := p.sequence("]", depth+1)
			return Literal{kind: litList, items: items}, ok
		case "(":
			p.advance(1)
			items, ok := p.sequence(")", depth+1)
			if ok && len(items) == 1 && !p.trailingComma {
				return items[0], true
			}
			return Literal{kind: litList, items: items}, ok
		case "{":
			p.advance(1)
			return p.dict(depth + 1)
		}
	}
	return Literal{}, false
}

// sequence parses comma-separated expressions up to closer; a keyword
// argument (name=value) is read as its value.
func (p *literalParser) sequence(closer string, depth int) ([]Literal, bool) {
	var items []Literal
	p.trailingComma = false
	for {
		if p.isOp(0, closer) {
			p.advance(1)
			return items, true
		}
		if p.peek(0).kind == tokName && p.isOp(1, "=") && !p.isOp(2, "=") {
			p.advance(2)
		}
		v, ok := p.expr(depth)
		if !ok {
			return nil, false
		}
		items = append(items, v)
		switch {
		case p.isOp(0, ","):
			p.advance(1)
			p.trailingComma = true
		case p.isOp(0, closer):
			p.advance(1)
			p.trailingComma = false
			return items, true
		default:
			return nil, false
		}
	}
}

// dict parses "{k: v, ...}" after the opening brace.
func (p *literalParser) dict(depth int) (Literal, bool) {
	d := Literal{kind: litDict}
	for {
		if p.isOp(0, "}") {
			p.advance(1)
			return d, true
		}
		k, ok := p.expr(depth)
		if !ok || !p.isOp(0, ":") {
			return Literal{}, false
		}
		p.advance(1)
		v, ok := p.expr(depth)
		if !ok {
			return Literal{}, false
		}
		d.items = append(d.items, Literal{kind: litList, items: []Literal{k, v}})
		switch {
		case p.isOp(0, ","):
			p.advance(1)
		case p.isOp(0, "}"):
			p.advance(1)
			return d, true
		default:
			return Literal{}, false
		}
	}
}

type tokKind int

const (
	tokNewline tokKind = iota // the end of a logical line (outside brackets)
	tokName
	tokNumber
	tokString
	tokOp
	tokEOF
)

type pyToken struct {
	kind tokKind
	text string
	col  int // of the token's first byte in its physical line
}

// lexer splits Python source into tokens as Python does: newlines inside
// brackets and after a backslash continue the logical line, comments are
// dropped. Text it cannot read is the operator "\x00", on which the
// statement fails to parse.
type lexer struct {
	src          []byte
	i, lineStart int
	depth        int  // of brackets open
	started      bool // a token other than a newline was emitted
	newline      bool // the last token emitted was a newline
}

func (l *lexer) next() pyToken {
	src := l.src
	for l.i < len(src) {
		i, c := l.i, src[l.i]
		switch {
		case c == '\n':
			l.i++
			l.lineStart = l.i
			if l.depth == 0 && l.started && !l.newline {
				l.newline = true
				return pyToken{kind: tokNewline}
			}
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			l.i += 2
			l.lineStart = l.i
		case c == '\\' && i+2 < len(src) && src[i+1] == '\r' && src[i+2] == '\n':
			l.i += 3
			l.lineStart = l.i
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			l.i++
		case c == '#':
			for l.i < len(src) && src[l.i] != '\n' {
				l.i++
			}
		case c == '\'' || c == '"':
			return l.str(i, i, false)
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			j := i
			for j < len(src) && (isNameByte(src[j]) || src[j] == '.') {
				j++
			}
			return l.emit(tokNumber, string(src[i:j]), i, j)
		case isNameByte(c):
			j := i
			for j < len(src) && isNameByte(src[j]) {
				j++
			}
			word := string(src[i:j])
			if j < len(src) && (src[j] == '\'' || src[j] == '"') && isStringPrefix(word) {
				return l.str(i, j, strings.ContainsAny(word, "rR"))
			}
			return l.emit(tokName, word, i, j)
		default:
			switch c {
			case '(', '[', '{':
				l.depth++
			case ')', ']', '}':
				l.depth = max(l.depth-1, 0)
			}
			return l.emit(tokOp, string(c), i, i+1)
		}
	}
	if l.started && !l.newline {
		l.newline = true
		return pyToken{kind: tokNewline}
	}
	return pyToken{kind: tokEOF}
}

func (l *lexer) emit(k tokKind, text string, at, end int) pyToken {
	l.i, l.started, l.newline = end, true, false
	return pyToken{kind: k, text: text, col: at - l.lineStart}
}

// str reads the string literal whose prefix starts at start and whose
// opening quote is at quote.
func (l *lexer) str(start, quote int, raw bool) pyToken {
	text, end, ok := readString(l.src, quote, raw)
	t := l.emit(tokString, text, start, end)
	if !ok {
		t.kind, t.text = tokOp, "\x00"
	}
	for k := end - 1; k >= quote; k-- { // a triple-quoted string may span lines
		if l.src[k] == '\n' {
			l.lineStart = k + 1
			break
		}
	}
	return t
}

// readString reads the string literal whose opening quote is at src[i],
// decoding the escapes repr writes (\\ \' \" \n \r \t \xNN \uNNNN
// \UNNNNNNNN) and keeping others as written, as Python does. ok is false
// for a literal that never ends or a malformed \x, \u or \U.
func readString(src []byte, i int, raw bool) (string, int, bool) {
	q := src[i]
	triple := i+2 < len(src) && src[i+1] == q && src[i+2] == q
	j := i + 1
	if triple {
		j = i + 3
	}
	var b strings.Builder
	for j < len(src) {
		c := src[j]
		switch {
		case c == '\\' && j+1 < len(src):
			n := src[j+1]
			j += 2
			if raw {
				b.WriteByte(c)
				b.WriteByte(n)
				continue
			}
			switch n {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case '\\', '\'', '"':
				b.WriteByte(n)
			case '\n': // a line continued inside the string
			case 'x', 'u', 'U':
				w := map[byte]int{'x': 2, 'u': 4, 'U': 8}[n]
				if j+w > len(src) {
					return "", len(src), false
				}
				r, err := strconv.ParseUint(string(src[j:j+w]), 16, 32)
				if err != nil || r > utf8.MaxRune {
					return "", j, false
				}
				b.WriteRune(rune(r))
				j += w
			default:
				b.WriteByte(c)
				b.WriteByte(n)
			}
		case c == q && !triple:
			return b.String(), j + 1, true
		case c == q && triple && j+2 < len(src) && src[j+1] == q && src[j+2] == q:
			return b.String(), j + 3, true
		case c == '\n' && !triple:
			return "", j, false
		default:
			b.WriteByte(c)
			j++
		}
	}
	return "", len(src), false
}

// isStringPrefix reports whether word may prefix a string literal.
func isStringPrefix(word string) bool {
	switch strings.ToLower(word) {
	case "r", "b", "u", "f", "rb", "br", "fr", "rf":
		return true
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isNameByte accepts identifier bytes, any non-ASCII byte included, so that
// a UTF-8 identifier stays one token.
func isNameByte(c byte) bool {
	return c == '_' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80
}
