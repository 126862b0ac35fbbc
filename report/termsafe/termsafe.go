// Package termsafe makes text from outside gpu-preflight safe to show on a
// terminal, and tells whether output goes to one. An image's files, the
// pod's environment and the driver's answers may hold control characters,
// ECMA-48 escape sequences, and bidirectional or invisible format characters:
// a terminal acts on the first two, and a reader cannot see the last.
// docs/terminal-output.md says what is escaped and why.
package termsafe

import (
	"io"
	"reflect"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// String returns s as one line a terminal prints and does not act on: every
// control character (Unicode Cc: C0, DEL, C1), format character (Cf: the
// bidirectional controls, zero-width characters) and line or paragraph
// separator (Zl, Zp) is written as an escape, \n, \r, \t, \x1b, \u202e or
// \U000e0001, and each byte of invalid UTF-8 as \xff. Every other rune comes
// back as it was, and String(String(s)) == String(s).
func String(s string) string { return escape(s, false) }

// Lines is String for a message of several lines, such as the termination
// message: its line feeds are kept.
func Lines(s string) string { return escape(s, true) }

// NewWriter returns a writer that passes what is written through Lines to
// w: for a renderer that prints many values with fmt. Each Write is escaped
// on its own, as a whole value (one fmt.Fprintf is one Write).
func NewWriter(w io.Writer) io.Writer { return writer{w} }

type writer struct{ w io.Writer }

func (t writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, Lines(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// shown reports whether a terminal shows r as text rather than acting on it
// or showing nothing.
func shown(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 0x20 && r != 0x7f
	}
	return !unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp)
}

const hexDigits = "0123456789abcdef"

func escape(s string, keepNewlines bool) string {
	i := 0
	for i < len(s) {
		if c := s[i]; c >= 0x20 && c < 0x7f || c == '\n' && keepNewlines {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || !shown(r) {
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
			b = appendHex(b, `\x`, rune(s[i]), 2)
		case shown(r) || r == '\n' && keepNewlines:
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

// JSON returns the JSON text b with every character String would escape
// written as a JSON escape (\u202e, \u0085, a surrogate pair above U+FFFF),
// but the whitespace between tokens; invalid UTF-8 becomes \ufffd, as
// encoding/json writes it. Outside ASCII, a raw character can only stand
// inside a string, where its escape means the same: the values decode as
// they were. Encoders leave these raw (encoding/json all but U+2028 and
// U+2029, zerolog all but C0), and a terminal showing the JSON acts on them.
func JSON(b []byte) []byte {
	var out []byte
	done := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\r' || c == '\t' {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError && shown(r) || r == utf8.RuneError && n == 3 {
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
			// RFC 8259, section 7: a surrogate pair.
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

// All applies String in place to every string reachable from ptr (struct
// fields, slice elements, map keys and values, through pointers); nothing
// the caller shares may be reachable.
func All(ptr any) {
	walk(reflect.ValueOf(ptr))
}

func walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			elem := v.Elem()
			if v.Kind() == reflect.Interface && elem.Kind() == reflect.String {
				v.Set(reflect.ValueOf(String(elem.String())))
				return
			}
			walk(elem)
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
