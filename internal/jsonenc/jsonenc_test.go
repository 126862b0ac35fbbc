package jsonenc

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"testing"
)

// encoding/json is the oracle: every case, seed and fuzzed input must
// encode to exactly its bytes.

var stringCases = []string{
	"", "plain ascii", `"quoted" \back\slash/`, "<script>&amp;</script>",
	"\x00\x01\x07\x08\x09\x0a\x0b\x0c\x0d\x1b\x1f\x7f", "tab\there\nnewline\r\n",
	"\u2028line\u2029para", "caf\u00e9 \u4e16\u754c \U0001F600", "\ufffd literal replacement",
	"\xff", "a\xc3", "\xc3\x28", "\xed\xa0\x80 surrogate", "\xf4\x90\x80\x80 above U+10FFFF",
	"\xe2\x80 cut U+2028", "\xe2\x80\xa8\xe2\x80\xa9\xe2\x80\xaa", "trailing \\",
}

var floatCases = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.1, 1.5, 100, 1e20, 1e21, 1e-6, 9.999999e-7, 1e-7,
	123456789012345680000, 1e100, 1e-100, 1e-300, math.MaxFloat64, -math.MaxFloat64,
	math.SmallestNonzeroFloat64, 5e-324, 2.2250738585072014e-308, 0.000001234, 12.345e-10,
	float64(1<<53) + 1, 3.14159, 1.7976931348623157e308, -1e-7, 1e+22,
}

func checkString(t testing.TB, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("json.Marshal(%q): %v", s, err)
	}
	got := AppendString([]byte("prefix"), s)
	if !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("AppendString(%q) = %s, encoding/json writes %s", s, got[len("prefix"):], want)
	}
}

func checkFloat(t testing.TB, f float64) {
	t.Helper()
	want, jerr := json.Marshal(f)
	got, err := AppendFloat([]byte("prefix"), f)
	if jerr != nil {
		if !errors.Is(err, ErrNotFinite) || string(got) != "prefix" {
			t.Fatalf("AppendFloat(%v) = %q, %v; encoding/json fails (%v)", f, got, err, jerr)
		}
		return
	}
	if err != nil || !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("AppendFloat(%v) = %s, %v; encoding/json writes %s", f, got, err, want)
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range stringCases {
		checkString(t, s)
	}
	// Every byte alone and after a rune start, so each branch of the
	// escaping meets every byte value.
	for b := range 256 {
		checkString(t, string([]byte{byte(b)}))
		checkString(t, string([]byte{'x', 0xe2, byte(b), 'y'}))
		checkString(t, string([]byte{0xe2, 0x80, byte(b)}))
	}
}

func TestAppendFloat(t *testing.T) {
	for _, f := range floatCases {
		checkFloat(t, f)
		checkFloat(t, -f)
		checkFloat(t, math.Nextafter(f, math.Inf(1)))
		checkFloat(t, math.Nextafter(f, math.Inf(-1)))
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		checkFloat(t, f)
	}
	// Each power of ten, and its neighbours, across the whole range: the
	// switches between positional and exponent form sit at 1e-6 and 1e21.
	for e := -325; e <= 309; e++ {
		f := math.Pow10(e)
		checkFloat(t, f)
		checkFloat(t, math.Nextafter(f, 0))
		checkFloat(t, math.Nextafter(f, math.Inf(1)))
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkString(t, s) })
}

func FuzzAppendFloat(f *testing.F) {
	for _, x := range floatCases {
		f.Add(math.Float64bits(x))
	}
	f.Add(math.Float64bits(math.NaN()))
	f.Add(math.Float64bits(math.Inf(-1)))
	// Any bit pattern: every NaN payload, subnormals, both zeros.
	f.Fuzz(func(t *testing.T, bits uint64) { checkFloat(t, math.Float64frombits(bits)) })
}
