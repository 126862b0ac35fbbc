// Package jsonenctest holds what the tests of generated encoders (jsongen)
// need: random values where an encoder and its reference could part (HTML
// characters, U+2028, control bytes, invalid UTF-8, nil against empty,
// extreme numbers, NaN), and Marshal, the reference for the record form.
package jsonenctest

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
)

// Marshal writes v as the generated encoders do, by reflection: as
// encoding/json's Marshal, except that a struct type with an
// AppendRecordJSON method, and all it holds, is in the record form
// (what jsongen writes). Strings and numbers are Marshal's own.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	err := marshal(&b, reflect.ValueOf(v), false)
	return b.Bytes(), err
}

func marshal(b *bytes.Buffer, v reflect.Value, record bool) error {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		return marshal(b, v.Elem(), record)
	case reflect.Slice:
		if v.IsNil() && !record {
			b.WriteString("null")
			return nil
		}
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := marshal(b, v.Index(i), record); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case reflect.Map:
		if v.IsNil() && !record {
			b.WriteString("null")
			return nil
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(x.String(), y.String()) })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := marshal(b, k, record); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := marshal(b, v.MapIndex(k), record); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case reflect.Struct:
		_, has := reflect.PointerTo(v.Type()).MethodByName("AppendRecordJSON")
		record = record || has
		b.WriteByte('{')
		n := 0
		for i := range v.NumField() {
			name, omitEmpty, ok := tagOf(v.Type().Field(i), record)
			if !ok || omitEmpty && isEmpty(v.Field(i)) {
				continue
			}
			if n++; n > 1 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + name + `":`)
			if err := marshal(b, v.Field(i), record); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	}
	s, err := json.Marshal(v.Interface())
	b.Write(s)
	return err
}

// isEmpty is what omitempty leaves out: false, 0, "", nil, empty slices
// and maps; never a struct.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map, reflect.String:
		return v.Len() == 0
	case reflect.Float64, reflect.Float32:
		return v.Float() == 0
	case reflect.Struct:
		return false
	}
	return v.IsZero()
}

// tagOf is a field's name and omitempty as the encoder writes it, and
// whether it is written at all.
func tagOf(f reflect.StructField, record bool) (name string, omitEmpty, ok bool) {
	if !f.IsExported() {
		return "", false, false
	}
	tag := f.Tag.Get("json")
	rec, hasRec := f.Tag.Lookup("record")
	hasRec = hasRec && record
	if tag == "-" && !hasRec || hasRec && rec == "-" {
		return "", false, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" || tag == "-" {
		name = f.Name
	}
	omitEmpty = opts == "omitempty" && !record
	if hasRec {
		n, o, _ := strings.Cut(rec, ",")
		if n != "" {
			name = n
		}
		omitEmpty = o == "omitempty"
	}
	return name, omitEmpty, true
}

// pieces are what random strings are built from.
var pieces = []string{
	"", "a", "Z", "0", " ", "/", "gpu", "<", ">", "&", `"`, `\`, "\u2028", "\u2029",
	"\x00", "\x01", "\b", "\f", "\n", "\r", "\t", "\x1b", "\x1f", "\x7f",
	"\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80",
	"\u00e9", "\u4e16", "\U0001F600", "\ufffd", "\u2027", "\u202a",
}

// Floats are the numbers where encoding/json's format switches or ends.
var Floats = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, 1e-6, 9.999999999999999e-7, 1e-7, 1e20, 1e21,
	999999999999999900000, math.MaxFloat64, math.SmallestNonzeroFloat64, 1e-300, 123.456,
}

// String is a random string of pieces and random bytes.
func String(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(6) {
		if r.IntN(8) == 0 {
			b.WriteByte(byte(r.IntN(256)))
		} else {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
	}
	return b.String()
}

// Float is a random float64: an edge of Floats, any bit pattern, a
// duration-like number, and once in nonFinite draws (0: never) a NaN or
// an infinity.
func Float(r *rand.Rand, nonFinite int) float64 {
	if nonFinite > 0 && r.IntN(nonFinite) == 0 {
		return []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[r.IntN(3)]
	}
	switch r.IntN(4) {
	case 0:
		f := Floats[r.IntN(len(Floats))]
		if r.IntN(2) == 0 {
			f = -f
		}
		return f
	case 1:
		if f := math.Float64frombits(r.Uint64()); !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
		return 0
	default:
		return float64(r.IntN(1_000_000)) / 1000
	}
}

// Fill sets every exported field that v (a pointer) reaches to random
// contents: nil, empty or filled slices, maps and pointers, strings from
// String, numbers with their type's extremes. nonFinite is Float's.
func Fill(r *rand.Rand, v any, nonFinite int) {
	fill(r, reflect.ValueOf(v).Elem(), nonFinite, 0)
}

func fill(r *rand.Rand, v reflect.Value, nonFinite, depth int) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.String:
		v.SetString(String(r))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := v.Type().Bits()
		lo, hi := int64(-1)<<(bits-1), int64(uint64(1)<<(bits-1)-1)
		v.SetInt([]int64{0, 1, -1, lo, hi, r.Int64N(1000), int64(r.Uint64()) >> (64 - bits)}[r.IntN(7)])
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		hi := uint64(1)<<(v.Type().Bits()-1)*2 - 1
		v.SetUint([]uint64{0, 1, hi, r.Uint64N(1000), r.Uint64() & hi}[r.IntN(5)])
	case reflect.Float64:
		v.SetFloat(Float(r, nonFinite))
	case reflect.Pointer:
		if r.IntN(3) == 0 || depth > 6 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(r, p.Elem(), nonFinite, depth+1)
		v.Set(p)
	case reflect.Slice:
		switch n := r.IntN(5); {
		case n == 0 || depth > 6:
			v.SetZero()
		case n == 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1)
			for i := range n - 1 {
				fill(r, s.Index(i), nonFinite, depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch n := r.IntN(6); {
		case n == 0 || depth > 6:
			v.SetZero()
		default:
			m := reflect.MakeMapWithSize(v.Type(), n-1)
			for range n - 1 {
				k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				fill(r, k, nonFinite, depth+1)
				fill(r, e, nonFinite, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i), nonFinite, depth+1)
			}
		}
	default:
		panic("jsonenctest: cannot fill a " + v.Type().String())
	}
}
