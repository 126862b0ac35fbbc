package termsafe

import "testing"

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
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"\x1b[2J", "ok\n{\"level\":\"error\"}", "\u009b", "\xff", "12.4", "\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		for i, r := range out {
			if unsafe(r, len(string(r))) && !(r == 0xfffd && out[i:i+3] == "\ufffd") {
				t.Fatalf("String(%q) = %q keeps %U", s, out, r)
			}
		}
		if String(out) != out {
			t.Fatalf("String not idempotent on %q", s)
		}
	})
}
