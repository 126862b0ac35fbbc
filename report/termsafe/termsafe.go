// Package termsafe makes text from facts safe to print on a terminal, and
// tells whether output goes to one. A value gpu-preflight reports was written
// by whoever built the image or the pod; raw, its control characters could
// clear the screen or forge a line. JSON output needs none of this.
package termsafe

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// String returns s with everything a terminal would act on written as a
// readable escape: C0 controls and DEL as \x1b (\n, \r, \t as such), C1
// controls and bidirectional overrides as \u009b, invalid UTF-8 as \xff.
func String(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafe(r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r, n):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func unsafe(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return true
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi embeddings, overrides, isolates
		return true
	}
	return false
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
