package report

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// filled returns a record with every field set, by walking its type: each
// string is s, each number n, each pointer, slice and map non-nil with
// two entries. It fails the test on a kind the record should not hold, so
// a new field of a new shape cannot slip past the comparison.
func filled(t testing.TB, s string, n float64) Record {
	var r Record
	fillValue(t, reflect.ValueOf(&r).Elem(), s, n)
	return r
}

func fillValue(t testing.TB, v reflect.Value, s string, n float64) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(n))
	case reflect.Uint64:
		v.SetUint(uint64(math.Abs(n)))
	case reflect.Float64:
		v.SetFloat(n)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillValue(t, v.Elem(), s, n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fillValue(t, v.Index(i), s+string(rune('a'+i)), n)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for _, k := range []string{"z" + s, "a" + s, "<&>"} {
			e := reflect.New(v.Type().Elem()).Elem()
			fillValue(t, e, s, n)
			m.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillValue(t, v.Field(i), s, n)
			}
		}
	default:
		t.Fatalf("the record holds a %s (%s): teach EncodeCompact and this test about it", v.Kind(), v.Type())
	}
}

func assertSameAsEncodingJSON(t *testing.T, r Record) {
	t.Helper()
	want, wantErr := json.Marshal(r)
	got, err := EncodeCompact(r)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("EncodeCompact error %v, json.Marshal error %v", err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeCompact differs from json.Marshal:\n got %s\nwant %s", got, want)
	}
}

func TestEncodeCompactMatchesEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		name   string
		record Record
	}{
		{"zero record: nil slices, maps and pointers are null", Record{}},
		{"empty record from New: empty lists", New(Inputs{})},
		{"sample run", New(sampleInputs())},
		{"every field set", filled(t, "plain", 42)},
		{"HTML characters are escaped", filled(t, `<script>&"quote"\`, 1)},
		{"control characters and line separators", filled(t, "a\x00b\x1f\b\f\n\r\t\u2028\u2029", 2)},
		{"invalid UTF-8 becomes U+FFFD", filled(t, "bad \xff\xfe utf8 \xc3", 3)},
		{"non-ASCII text", filled(t, "Grüße 世界 🚀", 4)},
		{"small float in exponent form", filled(t, "x", 1e-7)},
		{"large float in exponent form", filled(t, "x", 1e21)},
		{"negative float", filled(t, "x", -12.5)},
		{"fraction", filled(t, "x", 0.1)},
	} {
		t.Run(tc.name, func(t *testing.T) { assertSameAsEncodingJSON(t, tc.record) })
	}
}

func TestEncodeCompactRejectsWhatEncodingJSONRejects(t *testing.T) {
	r := filled(t, "x", 1)
	r.Host.NVML.DurationMillis = math.NaN()
	if _, err := EncodeCompact(r); err == nil {
		t.Fatal("EncodeCompact accepted NaN, which is not JSON")
	}
}

func FuzzEncodeCompact(f *testing.F) {
	f.Add("plain", 1.5)
	f.Add(`<a href="x">&amp;</a>`, 1e-7)
	f.Add("\xff\u2028\x00", 1e21)
	f.Add("NVIDIA_REQUIRE_CUDA=cuda>=12.2 brand=tesla,driver>=470,driver<471", 0.0)
	f.Fuzz(func(t *testing.T, s string, n float64) {
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return
		}
		assertSameAsEncodingJSON(t, filled(t, s, n))
	})
}

func BenchmarkEncodeCompact(b *testing.B) {
	r := New(sampleInputs())
	for b.Loop() {
		if _, err := EncodeCompact(r); err != nil {
			b.Fatal(err)
		}
	}
}

func TestMarshalIndentsAsMarshalIndentDoes(t *testing.T) {
	r := filled(t, `<"x">`, 2.5)
	want, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Marshal(r)
	if err != nil || !bytes.Equal(got, append(want, '\n')) {
		t.Fatalf("Marshal = %s, %v; want json.MarshalIndent's output and a newline", got, err)
	}
}
