package report

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// EncodeCompact encodes r as compact JSON, byte for byte what json.Marshal
// gives, without json.Marshal's first-use cost.
//
// encoding/json builds an encoder for every struct type the first time it
// meets it (field lists, tag parsing, sorting): about 0.25 ms for a Record,
// paid on every start of a process that encodes one record and exits, 6% of
// gpu-preflight's start-up (docs/PERFORMANCE.md). This walker reads the
// struct tags as it goes and hands every string and float to encoding/json,
// so escaping and number formats stay encoding/json's own; the shapes it
// meets are the record's: structs with plain `json:"name"` tags, pointers,
// slices, string-keyed maps, and strings, bools, integers and floats. Any
// other shape, or a tag with options, is handed whole to json.Marshal.
// TestEncodeCompactMatchesEncodingJSON keeps the two identical.
func EncodeCompact(r Record) ([]byte, error) {
	b, err := appendValue(make([]byte, 0, 4096), reflect.ValueOf(r))
	if err != nil {
		return nil, fmt.Errorf("encode provenance record %s: %w", r.RunID, err)
	}
	return b, nil
}

func appendValue(b []byte, v reflect.Value) ([]byte, error) {
	if customEncoding(v.Type()) {
		return appendMarshal(b, v.Interface())
	}
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); plainString(s) {
			return append(append(append(b, '"'), s...), '"'), nil
		}
		return appendMarshal(b, v.String())
	case reflect.Bool:
		return strconv.AppendBool(b, v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		return appendMarshal(b, v.Interface())
	case reflect.Pointer:
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		return appendValue(b, v.Elem())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			break // []byte is base64: encoding/json's business
		}
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i := range v.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, v.Index(i)); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case reflect.Map:
		if k := v.Type().Key(); k.Kind() != reflect.String || customEncoding(k) {
			break
		}
		return appendMap(b, v)
	case reflect.Struct:
		if s, ok, err := appendStruct(b, v); ok || err != nil {
			return s, err
		}
	}
	return appendMarshal(b, v.Interface())
}

// customEncoding reports whether t (or *t) chooses its own encoding, as a
// json.Marshaler or encoding.TextMarshaler: encoding/json's business.
func customEncoding(t reflect.Type) bool {
	if t.NumMethod() == 0 && reflect.PointerTo(t).NumMethod() == 0 {
		return false
	}
	for _, m := range []reflect.Type{marshalerType, textMarshalerType} {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return true
		}
	}
	return false
}

// appendMarshal appends what json.Marshal gives for x.
func appendMarshal(b []byte, x any) ([]byte, error) {
	j, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	return append(b, j...), nil
}

// appendMap writes a string-keyed map with its keys sorted, as
// encoding/json does.
func appendMap(b []byte, v reflect.Value) ([]byte, error) {
	if v.IsNil() {
		return append(b, "null"...), nil
	}
	keys := v.MapKeys()
	slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(x.String(), y.String()) })
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendMarshal(b, k.String()); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = appendValue(b, v.MapIndex(k)); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendStruct writes a struct whose exported fields all carry a plain
// json tag. It reports false, having written nothing, for any other struct
// (an embedded field, a field without a tag or with options), which
// appendValue then gives to json.Marshal whole.
func appendStruct(b []byte, v reflect.Value) ([]byte, bool, error) {
	t := v.Type()
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() && (f.Anonymous || !plainName(f.Tag.Get("json"))) {
			return b, false, nil
		}
	}
	b = append(b, '{')
	n := 0
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, '"')
		b = append(b, f.Tag.Get("json")...)
		b = append(b, '"', ':')
		var err error
		if b, err = appendValue(b, v.Field(i)); err != nil {
			return nil, true, err
		}
	}
	return append(b, '}'), true, nil
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// plainString reports whether s is printable ASCII that encoding/json
// writes as is: no quote, backslash, control character, or the <, > and &
// it escapes for HTML.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// plainName reports whether a json tag is a bare name that needs no
// escaping: letters, digits and underscores, as every record field has.
func plainName(tag string) bool {
	if tag == "" {
		return false
	}
	for i := 0; i < len(tag); i++ {
		c := tag[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
