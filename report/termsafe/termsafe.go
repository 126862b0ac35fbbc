// Package termsafe makes text safe to show on a terminal (docs/terminal-output.md).
package termsafe

import (
	"io"
	"reflect"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// String returns s as one line, each rune Run.Shown rejects and each byte not UTF-8 escaped.
func String(s string) string { return escape(s, false) }

// Lines is String keeping line feeds: for a message such as the termination log's.
func Lines(s string) string { return escape(s, true) }

// NewWriter returns a writer passing each Write through Lines to w, for a renderer.
func NewWriter(w io.Writer) io.Writer { return writer{w} }

type writer struct{ w io.Writer }

func (t writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, Lines(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Shown reports whether a terminal may be given r as it is.
func Shown(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 0x20 && r != 0x7f
	}
	return !unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Other_Default_Ignorable_Code_Point)
}

// MaxMarks is UAX #15's limit on combining marks in a row.
const MaxMarks = 30

// Run is Shown for each rune of a text in turn, counting combining marks.
type Run struct{ marks int }

// Shown is the package's Shown for r after the runes given before.
func (m *Run) Shown(r rune) bool {
	switch {
	case r < utf8.RuneSelf || !Shown(r):
		m.marks = 0
		return Shown(r)
	case unicode.In(r, unicode.Mn, unicode.Me):
		m.marks++
		return m.marks <= MaxMarks
	}
	m.marks = 0
	return true
}

const hexDigits = "0123456789abcdef"

func escape(s string, keepNewlines bool) string {
	var run Run
	i := 0
	for i < len(s) {
		if c := s[i]; c >= 0x20 && c < 0x7f || c == '\n' && keepNewlines {
			run.marks = 0
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || !run.Shown(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, i, len(s)+16)
	copy(b, s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			run.marks = 0
			b = appendHex(b, `\x`, rune(s[i]), 2)
		case run.Shown(r) || r == '\n' && keepNewlines:
			b = append(b, s[i:i+n]...)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r == '\t':
			b = append(b, `\t`...)
		case r < utf8.RuneSelf:
			b = appendHex(b, `\x`, r, 2)
		case r <= 0xffff:
			b = appendHex(b, `\u`, r, 4)
		default:
			b = appendHex(b, `\U`, r, 8)
		}
		i += n
	}
	return string(b)
}

func appendHex(b []byte, prefix string, r rune, digits int) []byte {
	b = append(b, prefix...)
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b = append(b, hexDigits[r>>shift&0xf])
	}
	return b
}

// JSON returns JSON text b with each rune String escapes, but whitespace, as a \u escape.
func JSON(b []byte) []byte {
	var out []byte
	var run Run
	done := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\r' || c == '\t' {
			run.marks = 0
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			run.marks = 0
		} else if run.Shown(r) {
			i += n
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(b)+16)
		}
		out = append(out, b[done:i]...)
		switch {
		case r == utf8.RuneError:
			out = append(out, `\ufffd`...)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			out = appendHex(appendHex(out, `\u`, r1, 4), `\u`, r2, 4)
		default:
			out = appendHex(out, `\u`, r, 4)
		}
		i += n
		done = i
	}
	if out == nil {
		return b
	}
	return append(out, b[done:]...)
}

// All applies String in place to every exported string reachable from ptr.
func All(ptr any) {
	walk(reflect.ValueOf(ptr))
}

func walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			walk(v.Elem())
		}
	case reflect.Interface:
		if !v.IsNil() && v.CanSet() {
			settable := reflect.New(v.Elem().Type()).Elem()
			settable.Set(v.Elem())
			walk(settable)
			v.Set(settable)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				walk(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			walk(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		iter := v.MapRange()
		for iter.Next() {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			k.Set(iter.Key())
			e.Set(iter.Value())
			walk(k)
			walk(e)
			out.SetMapIndex(k, e)
		}
		if v.CanSet() {
			v.Set(out)
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(String(v.String()))
		}
	}
}
