package termsafe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc"
	"github.com/rs/zerolog"
)

func TestString(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"12.4", "12.4"},
		{"registry.example/ml/train:2.3@sha256:4f1c", "registry.example/ml/train:2.3@sha256:4f1c"},
		{"GPU-5eed", "GPU-5eed"},
		{"naïve – ok", "naïve – ok"},
		{`back\slash`, `back\slash`},
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},                     // clear the screen
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},               // retitle the terminal
		{"ok\n{\"level\":\"error\"}", `ok\n{"level":"error"}`}, // forge a line
		{"ok\rERROR", `ok\rERROR`},
		{"a\tb", `a\tb`},
		{"\x00\x7f", `\x00\x7f`},
		{"\u009b31m", `\u009b31m`},         // C1 CSI
		{"abc\u202edcba", `abc\u202edcba`}, // right-to-left override
		{"\xff\xfe", `\xff\xfe`},           // not UTF-8
		{"", ""},
	} {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// ECMA-48 control sequences (5th edition, 1991: section 5.4 CSI, 8.3.89
// OSC, 8.3.27 DCS, 8.3.128 SOS, 8.3.94 PM, 8.3.2 APC, 8.3.143 ST), each in
// its 7-bit form (ESC Fe), as a C1 character and as a raw 8-bit byte.
var ecma48 = []string{
	"\x1b[2J", "\x1b[31;1m", "\x1b[?1049h", "\x1b[6n",
	"\x1b]0;PWNED\x07", "\x1b]0;PWNED\x1b\\", "\x1b]52;c;cHduZWQ=\x07", "\x1b]8;;http://x.example\x1b\\link\x1b]8;;\x1b\\",
	"\x1bP1$r0m\x1b\\", "\x1bXsos\x1b\\", "\x1b^pm\x1b\\", "\x1b_apc\x1b\\",
	"\x1bc", "\x1b#8", "\x1b7\x1b8", "\x1b(0", "\x1bN", "\x1bO",
	"\u009b2J", "\u009d0;PWNED\u009c", "\u009d0;PWNED\a", "\u0090q\u009c", "\u0098sos\u009c", "\u009epm\u009c", "\u009fapc\u009c",
	"\x9b2J", "\x9d0;PWNED\x9c", "\x90q\x9c", "\x98sos\x9c", "\x9epm\x9c", "\x9fapc\x9c", "\u0085next line",
}

// UAX #9 (Unicode Bidirectional Algorithm), table 2 "Explicit Directional
// Formatting Characters" and section 2.6 implicit marks; the zero-width and
// invisible characters that an image could use to make two names look alike.
var bidi = []rune{0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c}
var invisible = []rune{0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0x00ad, 0x2061, 0x180e, 0xe0001, 0xe0041}

// fillers are the Hangul fillers (UAX #44's DerivedCoreProperties.txt,
// Other_Default_Ignorable_Code_Point), letters a terminal shows as blank.
var fillers = []rune{0x115f, 0x1160, 0x3164, 0xffa0}

func TestStringShowsEveryControlOfAnEscapeSequence(t *testing.T) {
	for _, s := range ecma48 {
		out := String(s)
		if bad := raw(out, false); bad != "" {
			t.Errorf("String(%q) = %q keeps %s", s, out, bad)
		}
		if !strings.Contains(out, `\`) {
			t.Errorf("String(%q) = %q shows no escape", s, out)
		}
	}
	if got := String("NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e"); got != `NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e` {
		t.Errorf("the issue's GPU name: %q", got)
	}
	if got := String("\x9d0;PWNED\x9c \u009d0;PWNED\u009c"); got != `\x9d0;PWNED\x9c \u009d0;PWNED\u009c` {
		t.Errorf("8-bit OSC: %q", got)
	}
}

// Every format character of Unicode's Cf category is escaped, which covers
// the lists above: the set is Go's unicode.Cf table, not a copy of it.
func TestStringEscapesEveryFormatCharacter(t *testing.T) {
	for _, r := range append(append([]rune{0x2028, 0x2029}, bidi...), invisible...) {
		if !unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			t.Errorf("%U is not a format character or separator in Go's tables", r)
		}
	}
	n := 0
	for _, rng := range unicode.Cf.R16 {
		for r := rune(rng.Lo); r <= rune(rng.Hi); r += rune(rng.Stride) {
			n += escaped(t, r)
		}
	}
	for _, rng := range unicode.Cf.R32 {
		for r := rune(rng.Lo); r <= rune(rng.Hi); r += rune(rng.Stride) {
			n += escaped(t, r)
		}
	}
	if n < 150 {
		t.Errorf("only %d Cf characters checked", n)
	}
	if got := String("\U000e0001"); got != `\U000e0001` {
		t.Errorf("a tag character above U+FFFF: %q", got)
	}
}

func escaped(t *testing.T, r rune) int {
	t.Helper()
	want := fmt.Sprintf(`a\u%04xb`, r)
	if r > 0xffff {
		want = fmt.Sprintf(`a\U%08xb`, r)
	}
	if got := String("a" + string(r) + "b"); got != want {
		t.Errorf("String(%U) = %q, want %q", r, got, want)
	}
	return 1
}

// Text in any script, with combining marks, variation selectors and emoji,
// passes as it came; only a joiner between emoji (U+200D, a Cf character)
// is shown, as it is also what can hide a character.
func TestStringKeepsPlainText(t *testing.T) {
	for _, s := range []string{
		"NVIDIA H100 80GB HBM3", "Ελληνικά", "Русский текст", "中文 日本語 한국어", "العربية", "עברית",
		"हिन्दी", "ภาษาไทย", "Tiếng Việt", "e\u0301", "😀 👍🏽 ❤️ 🇩🇪", "\u00a0\u3000", "\ufffd", "…[truncated 12 bytes]",
	} {
		if got := String(s); got != s {
			t.Errorf("String(%q) = %q, want it unchanged", s, got)
		}
	}
	if got := String("👩\u200d💻"); got != `👩\u200d💻` {
		t.Errorf("String(ZWJ sequence) = %q", got)
	}
}

func TestLinesKeepsLineFeedsOnly(t *testing.T) {
	in := "gpu-preflight: stop\nGPU 0 (NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e)\r\n\tmore"
	want := "gpu-preflight: stop\nGPU 0 (NVIDIA H100\\x1b]0;PWNED\\x07\\x1b[2J\\u202e)\\r\n\\tmore"
	if got := Lines(in); got != want {
		t.Errorf("Lines = %q, want %q", got, want)
	}
	if Lines("a\nb") != "a\nb" || String("a\nb") != `a\nb` {
		t.Error("only Lines keeps a line feed")
	}
}

func TestWriterEscapesWhatARendererPrints(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	n, err := fmt.Fprintf(w, "  %s %s (CUDA %s)\n", "torch", "2.9.0+cu130\x1b]0;PWNED\x07\x1b[2J", "13.0")
	if err != nil || n != len("  torch 2.9.0+cu130\x1b]0;PWNED\x07\x1b[2J (CUDA 13.0)\n") {
		t.Fatalf("Fprintf = %d, %v: a writer reports the bytes it was given", n, err)
	}
	if got := b.String(); got != "  torch 2.9.0+cu130\\x1b]0;PWNED\\x07\\x1b[2J (CUDA 13.0)\n" {
		t.Errorf("wrote %q", got)
	}
}

// probes are values an image or a driver could hold, for the JSON tests.
var probes = []string{
	"NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e", "2.9.0+cu130\x1b]0;PWNED\x07\x1b[2J", "\u2028\u2029\u0085\u009b2J\x7f",
	"a\u200bb\ufeff\u2066c\u2069", "tag\U000e0001\U000e0041", "bad \xff\xfe utf-8", "中文 😀 <&>", "",
}

// Each encoder the project writes JSON with leaves some of these raw;
// through JSON none is left, and every value decodes as it was encoded.
func TestJSONEscapesWhatEncodersLeaveRaw(t *testing.T) {
	encoders := map[string]func(string) []byte{
		"encoding/json": func(s string) []byte { b, _ := json.Marshal(s); return b },
		"jsonenc":       func(s string) []byte { return jsonenc.AppendString(nil, s) },
		"zerolog": func(s string) []byte {
			var b bytes.Buffer
			l := zerolog.New(&b)
			l.Log().Str("v", s).Send()
			return b.Bytes()
		},
	}
	leftRaw := map[string]bool{}
	for name, encode := range encoders {
		for _, s := range probes {
			enc := encode(s)
			if raw(string(enc), true) != "" {
				leftRaw[name] = true
			}
			out := JSON(enc)
			if bad := raw(string(out), true); bad != "" {
				t.Errorf("%s: JSON(%s) = %s keeps %s", name, enc, out, bad)
			}
			var before, after any
			if err := json.Unmarshal(enc, &before); err != nil {
				t.Fatalf("%s wrote %s: %v", name, enc, err)
			}
			if err := json.Unmarshal(out, &after); err != nil || fmt.Sprint(before) != fmt.Sprint(after) {
				t.Errorf("%s: JSON(%s) = %s decodes to %q (%v), want %q", name, enc, out, after, err, before)
			}
		}
	}
	for name := range encoders {
		if !leftRaw[name] {
			t.Errorf("%s escapes every probe itself: JSON would not be needed after it", name)
		}
	}
	if in := []byte("{\n\t\"a\": \"b\"\r\n}"); !bytes.Equal(JSON(in), in) {
		t.Errorf("the whitespace between tokens changed: %q", JSON(in))
	}
	if got := string(JSON([]byte(`"` + "\U000e0001" + `"`))); got != `"\udb40\udc01"` {
		t.Errorf("above U+FFFF: %s, want a surrogate pair", got)
	}
}

func TestAllEscapesEveryStringInPlace(t *testing.T) {
	type inner struct{ S string }
	v := struct {
		A   string
		P   *inner
		L   []inner
		M   map[string]string
		Any any
		n   string
	}{"\x1b", &inner{"\x1b"}, []inner{{"\n"}}, map[string]string{"k\x1b": "v\x1b"}, "\a", "\x1b"}
	All(&v)
	if v.A != `\x1b` || v.P.S != `\x1b` || v.L[0].S != `\n` || v.M[`k\x1b`] != `v\x1b` || v.Any != `\x07` {
		t.Errorf("not all escaped: %+v %+v", v, *v.P)
	}
	if v.n != "\x1b" {
		t.Error("an unexported field was changed")
	}

	// A log line's fields as zerolog's console writer decodes them.
	evt := map[string]any{"gpus": []any{map[string]any{"name": "H100\u202e"}}, "n": 8.0}
	All(&evt)
	if got := fmt.Sprint(evt); got != `map[gpus:[map[name:H100\u202e]] n:8]` {
		t.Errorf("nested values: %s", got)
	}
}

// raw names the first byte or rune in out that a terminal would act on or
// not show (a line feed allowed in JSON text), or a run of more than 30
// combining marks, or "". It reads Unicode's tables itself, not Shown.
func raw(out string, json bool) string {
	marks := 0
	for i, r := range out {
		if unicode.In(r, unicode.Mn, unicode.Me) {
			if marks++; marks > 30 {
				return fmt.Sprintf("%d combining marks in a row", marks)
			}
		} else {
			marks = 0
		}
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(out[i:], "\ufffd"):
			return fmt.Sprintf("byte %#x", out[i])
		case json && (r == '\n' || r == '\t' || r == '\r'):
		case unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Other_Default_Ignorable_Code_Point):
			return fmt.Sprintf("%U", r)
		}
	}
	return ""
}

// The Hangul fillers are letters (Lo) a terminal shows as blank space, which
// Unicode lists as default ignorable: a name can hide behind them as behind
// a zero-width space.
func TestStringEscapesTheHangulFillers(t *testing.T) {
	for _, r := range fillers {
		if !unicode.Is(unicode.Lo, r) || !unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) {
			t.Errorf("%U is not a default-ignorable letter in Go's tables", r)
		}
		escaped(t, r)
	}
	if got := String("\u034f\ufe0f"); got != `\u034f`+"\ufe0f" {
		t.Errorf("the grapheme joiner escaped, a variation selector kept: %q", got)
	}
}

// Combining marks stack over the lines above and below; past UAX #15's 30
// in a row each is its escape, in terminal text and in JSON.
func TestMarksPastThirtyInARowAreEscaped(t *testing.T) {
	flood := "Z" + strings.Repeat("\u0301", 40) + " e\u0301"
	want := "Z" + strings.Repeat("\u0301", 30) + strings.Repeat(`\u0301`, 10) + " e\u0301"
	if got := String(flood); got != want {
		t.Errorf("String(40 marks) = %q, want %q", got, want)
	}
	if got := String(want); got != want {
		t.Errorf("not idempotent: %q", got)
	}
	enc, _ := json.Marshal(flood)
	if got := string(JSON(enc)); got != `"`+want+`"` {
		t.Errorf("JSON(40 marks) = %s", got)
	}
	if got := String(strings.Repeat("\u0301", 30) + "\x1b" + strings.Repeat("\u0301", 30)); raw(got, false) != "" {
		t.Errorf("an escape ends a run of marks: %q", got)
	}
}

func FuzzString(f *testing.F) {
	for _, s := range append([]string{"ok\n{\"level\":\"error\"}", "\xff", "12.4", "中文 😀", "👩\u200d💻"}, ecma48...) {
		f.Add(s)
	}
	for _, r := range slices.Concat(bidi, invisible, fillers, []rune{0x7f, 0x85, 0x9b, 0x2028, 0x2029, 0x034f, 0xe007f}) {
		f.Add("a" + string(r) + "b")
	}
	for _, s := range []string{"\x9b31m", "\x1b]0;x\a", "\x80\x9f\xc0\xff", "\xe2\x80", "\xed\xa0\x80",
		"Z" + strings.Repeat("\u0301", 40), strings.Repeat("\u20dd", 31) + "\xff" + strings.Repeat("\u20dd", 31)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if bad := raw(out, false); bad != "" {
			t.Fatalf("String(%q) = %q keeps %s", s, out, bad)
		}
		if String(out) != out {
			t.Fatalf("String not idempotent on %q", s)
		}
		if raw(s, false) == "" && out != s {
			t.Fatalf("String(%q) = %q changed text a terminal shows as it is", s, out)
		}
		if lines := Lines(s); strings.Join(strings.Split(lines, "\n"), `\n`) != out {
			t.Fatalf("Lines(%q) = %q is not String(%q) = %q with its line feeds", s, lines, s, out)
		}
		enc, _ := json.Marshal(s)
		safe := JSON(enc)
		if bad := raw(string(safe), true); bad != "" {
			t.Fatalf("JSON(%s) = %s keeps %s", enc, safe, bad)
		}
		var want, back string
		if err := json.Unmarshal(enc, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(safe, &back); err != nil || back != want {
			t.Fatalf("JSON(%s) = %s decodes to %q (%v), want %q", enc, safe, back, err, want)
		}
	})
}
