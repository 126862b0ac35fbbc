package image

import (
	"strings"
)

// This file reads the generated Python modules frameworks ship their build
// facts in (torch/version.py, paddle/version/__init__.py, TensorFlow's
// build_info.py) without a Python interpreter. Those files are flat: module
// level assignments of literals, sometimes with a type annotation
// ("cuda: Optional[str] = '11.8'") or wrapped in a call
// ("collections.OrderedDict([('cuda_version', '11.8'), ...])"). The reader
// understands exactly that subset and skips every other statement, so a
// function definition or an import never derails it.

// pyKind is the kind of a literal.
type pyKind int

const (
	pyOther pyKind = iota // anything not understood
	pyStr                 // 'text'
	pyNum                 // 86, -1, 1.5
	pyNone                // None
	pyBool                // True, False
	pyName                // a bare or dotted name: collections.OrderedDict
	pyList                // [..] or (..)
	pyDict                // {k: v}: items hold 2-element pyList pairs
	pyCall                // f(args) or x[args]: items hold the arguments
)

// pyValue is one parsed literal.
type pyValue struct {
	kind  pyKind
	text  string // pyStr, pyNum, pyName: the value; pyBool: "True"/"False"
	items []pyValue
}

// pyMaxDepth bounds nesting, so that a hostile file of brackets cannot
// exhaust the stack.
const pyMaxDepth = 32

// pyAssignments returns the module-level assignments "name = literal" of
// src, the last one winning. Assignments inside indented blocks are not
// module level and are ignored.
func pyAssignments(src []byte) map[string]pyValue {
	toks := pyTokenize(src)
	out := map[string]pyValue{}
	p := &pyParser{toks: toks}
	for p.i < len(p.toks) {
		if p.toks[p.i].kind == tokNewline {
			p.i++
			continue
		}
		if name, v, ok := p.assignment(); ok {
			out[name] = v
		}
		// Skip to the end of the logical line, whatever was parsed.
		for p.i < len(p.toks) && p.toks[p.i].kind != tokNewline {
			p.i++
		}
		p.i++
	}
	return out
}

// pyFields merges the key/value pairs a build-info module records, from
// either spelling: module-level assignments (key = value), and a mapping
// assigned to a name (build_info = collections.OrderedDict([(key, value),
// ...]) or build_info = {key: value}), whose keys are added as well.
func pyFields(src []byte) map[string]pyValue {
	out := map[string]pyValue{}
	for name, v := range pyAssignments(src) {
		out[name] = v
		for k, kv := range pyPairs(v, 0) {
			if _, set := out[k]; !set {
				out[k] = kv
			}
		}
	}
	return out
}

// pyPairs collects (string, value) pairs from a dict literal, a list of
// 2-tuples, or a call wrapping either (OrderedDict([...]), dict(...)).
func pyPairs(v pyValue, depth int) map[string]pyValue {
	out := map[string]pyValue{}
	if depth > 2 {
		return out
	}
	switch v.kind {
	case pyDict, pyList:
		for _, it := range v.items {
			if it.kind == pyList && len(it.items) == 2 && it.items[0].kind == pyStr {
				out[it.items[0].text] = it.items[1]
			}
		}
	case pyCall:
		for _, arg := range v.items {
			for k, kv := range pyPairs(arg, depth+1) {
				out[k] = kv
			}
		}
	}
	return out
}

// str returns the value of a string literal, and ok false for anything
// else (None, a number, a list).
func (v pyValue) str() (string, bool) {
	if v.kind == pyStr {
		return v.text, true
	}
	return "", false
}

// scalar returns a string or number literal as text.
func (v pyValue) scalar() (string, bool) {
	if v.kind == pyStr || v.kind == pyNum {
		return v.text, true
	}
	return "", false
}

type pyParser struct {
	toks []pyToken
	i    int
	// trailingComma is set by sequence when its last item was followed by
	// a comma, which makes "(x,)" a tuple and "(x)" just x.
	trailingComma bool
}

func (p *pyParser) peek(k int) pyToken {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return pyToken{kind: tokNewline}
}

// assignment parses "NAME [: annotation] = expr NEWLINE" at column 0.
func (p *pyParser) assignment() (string, pyValue, bool) {
	t := p.peek(0)
	if t.kind != tokName || t.col != 0 {
		return "", pyValue{}, false
	}
	name := t.text
	p.i++
	if p.isOp(":") {
		p.i++
		if _, ok := p.expr(0); !ok {
			return "", pyValue{}, false
		}
	}
	if !p.isOp("=") || p.isOpAt(1, "=") {
		return "", pyValue{}, false
	}
	p.i++
	v, ok := p.expr(0)
	if !ok || p.peek(0).kind != tokNewline {
		return "", pyValue{}, false
	}
	return name, v, true
}

func (p *pyParser) isOp(s string) bool { return p.isOpAt(0, s) }

func (p *pyParser) isOpAt(k int, s string) bool {
	t := p.peek(k)
	return t.kind == tokOp && t.text == s
}

// expr parses a literal, a name, or a call or subscript of either.
func (p *pyParser) expr(depth int) (pyValue, bool) {
	if depth > pyMaxDepth {
		return pyValue{}, false
	}
	v, ok := p.primary(depth)
	if !ok {
		return v, false
	}
	for {
		switch {
		case p.isOp("."):
			n := p.peek(1)
			if n.kind != tokName {
				return pyValue{}, false
			}
			p.i += 2
			v = pyValue{kind: pyName, text: v.text + "." + n.text}
		case p.isOp("(") || p.isOp("["):
			closer := ")"
			if p.isOp("[") {
				closer = "]"
			}
			p.i++
			args, ok := p.sequence(closer, depth+1)
			if !ok {
				return pyValue{}, false
			}
			v = pyValue{kind: pyCall, text: v.text, items: args}
		default:
			return v, true
		}
	}
}

func (p *pyParser) primary(depth int) (pyValue, bool) {
	t := p.peek(0)
	switch t.kind {
	case tokString:
		// Adjacent literals concatenate: 'a' 'b' == 'ab'.
		var b strings.Builder
		for p.peek(0).kind == tokString {
			b.WriteString(p.peek(0).text)
			p.i++
		}
		return pyValue{kind: pyStr, text: b.String()}, true
	case tokNumber:
		p.i++
		return pyValue{kind: pyNum, text: t.text}, true
	case tokName:
		p.i++
		switch t.text {
		case "None":
			return pyValue{kind: pyNone}, true
		case "True", "False":
			return pyValue{kind: pyBool, text: t.text}, true
		}
		return pyValue{kind: pyName, text: t.text}, true
	case tokOp:
		switch t.text {
		case "-", "+":
			n := p.peek(1)
			if n.kind != tokNumber {
				return pyValue{}, false
			}
			p.i += 2
			text := n.text
			if t.text == "-" {
				text = "-" + text
			}
			return pyValue{kind: pyNum, text: text}, true
		case "[":
			p.i++
			items, ok := p.sequence("]", depth+1)
			return pyValue{kind: pyList, items: items}, ok
		case "(":
			p.i++
			items, ok := p.sequence(")", depth+1)
			if ok && len(items) == 1 && !p.trailingComma {
				return items[0], true // parenthesised expression
			}
			return pyValue{kind: pyList, items: items}, ok
		case "{":
			p.i++
			return p.dict(depth + 1)
		}
	}
	return pyValue{}, false
}

// sequence parses comma-separated expressions up to closer. Keyword
// arguments (name=value) are read as their value.
func (p *pyParser) sequence(closer string, depth int) ([]pyValue, bool) {
	var items []pyValue
	p.trailingComma = false
	for {
		if p.isOp(closer) {
			p.i++
			return items, true
		}
		if p.peek(0).kind == tokName && p.isOpAt(1, "=") && !p.isOpAt(2, "=") {
			p.i += 2
		}
		v, ok := p.expr(depth)
		if !ok {
			return nil, false
		}
		items = append(items, v)
		switch {
		case p.isOp(","):
			p.i++
			p.trailingComma = true
		case p.isOp(closer):
			p.i++
			p.trailingComma = false
			return items, true
		default:
			return nil, false
		}
	}
}

// dict parses "{k: v, ...}" after the opening brace.
func (p *pyParser) dict(depth int) (pyValue, bool) {
	d := pyValue{kind: pyDict}
	for {
		if p.isOp("}") {
			p.i++
			return d, true
		}
		k, ok := p.expr(depth)
		if !ok || !p.isOp(":") {
			return pyValue{}, false
		}
		p.i++
		v, ok := p.expr(depth)
		if !ok {
			return pyValue{}, false
		}
		d.items = append(d.items, pyValue{kind: pyList, items: []pyValue{k, v}})
		switch {
		case p.isOp(","):
			p.i++
		case p.isOp("}"):
			p.i++
			return d, true
		default:
			return pyValue{}, false
		}
	}
}

// tokKind is the kind of a Python token.
type tokKind int

const (
	tokNewline tokKind = iota // end of a logical line (outside brackets)
	tokName
	tokNumber
	tokString
	tokOp
)

type pyToken struct {
	kind tokKind
	text string
	col  int // column of the token's first byte in its physical line
}

// pyTokenize splits src into tokens. Newlines inside brackets and after a
// backslash continue the logical line, as in Python; comments are dropped.
// Text it cannot read becomes an operator token "\x00", on which any
// statement fails to parse.
func pyTokenize(src []byte) []pyToken {
	var toks []pyToken
	lineStart, depth := 0, 0
	emit := func(k tokKind, text string, at int) {
		toks = append(toks, pyToken{kind: k, text: text, col: at - lineStart})
	}
	newline := func() {
		if depth == 0 && (len(toks) == 0 || toks[len(toks)-1].kind != tokNewline) {
			toks = append(toks, pyToken{kind: tokNewline})
		}
	}
	// str emits the string literal that starts at start (its prefix, if
	// any) with its opening quote at quote, or "\x00" when it cannot be
	// read, and returns where it ends.
	str := func(start, quote int, raw bool) int {
		text, next, ok := pyString(src, quote, raw)
		if ok {
			emit(tokString, text, start)
		} else {
			emit(tokOp, "\x00", start)
		}
		lineStart = lineStartAfter(src, quote, next, lineStart)
		return next
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			newline()
			i++
			lineStart = i
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i += 2
			lineStart = i
		case c == '\\' && i+2 < len(src) && src[i+1] == '\r' && src[i+2] == '\n':
			i += 3
			lineStart = i
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '\'' || c == '"':
			i = str(i, i, false)
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			j := i
			for j < len(src) && (isNameByte(src[j]) || src[j] == '.') {
				j++
			}
			emit(tokNumber, string(src[i:j]), i)
			i = j
		case isNameByte(c):
			j := i
			for j < len(src) && isNameByte(src[j]) {
				j++
			}
			word := string(src[i:j])
			if j < len(src) && (src[j] == '\'' || src[j] == '"') && isStringPrefix(word) {
				i = str(i, j, strings.ContainsAny(word, "rR"))
				continue
			}
			emit(tokName, word, i)
			i = j
		default:
			switch c {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				if depth > 0 {
					depth--
				}
			}
			emit(tokOp, string(c), i)
			i++
		}
	}
	depth = 0
	newline()
	return toks
}

// lineStartAfter returns where the current physical line starts once a
// token spanning src[from:to] (a triple-quoted string may hold newlines)
// has been read.
func lineStartAfter(src []byte, from, to, cur int) int {
	for k := to - 1; k >= from; k-- {
		if src[k] == '\n' {
			return k + 1
		}
	}
	return cur
}

// pyString reads the string literal whose opening quote is at src[i] and
// returns its value and the index after it. ok is false for a literal that
// never ends (a single-quoted one may not span lines).
func pyString(src []byte, i int, raw bool) (string, int, bool) {
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
			case 't':
				b.WriteByte('\t')
			case '\\', '\'', '"':
				b.WriteByte(n)
			case '\n':
				// line continuation inside a string
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

// isStringPrefix reports whether word may prefix a string literal: r, b, u,
// f and their two-letter combinations, in any case.
func isStringPrefix(word string) bool {
	switch strings.ToLower(word) {
	case "r", "b", "u", "f", "rb", "br", "fr", "rf":
		return true
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isNameByte accepts ASCII identifier bytes and any non-ASCII byte, so that
// a UTF-8 identifier stays one token.
func isNameByte(c byte) bool {
	return c == '_' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80
}
