package truncate

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStringKeepsAValueWithinTheLimitWhole(t *testing.T) {
	for _, s := range []string{"", "short", strings.Repeat("a", 40)} {
		if got := String(s, 40); got != s {
			t.Errorf("String(%q, 40) = %q, want it unchanged", s, got)
		}
	}
}

func TestStringEndsACutValueWithItsSize(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		want  string
	}{
		{strings.Repeat("a", 100), 40, strings.Repeat("a", 16) + "…[truncated 100 bytes]"},
		{strings.Repeat("é", 50), 41, strings.Repeat("é", 8) + "…[truncated 100 bytes]"}, // never half a rune
		{strings.Repeat("a", 100), 5, "…[truncated 100 bytes]"},                          // the note alone when it does not fit
	}
	for _, tt := range tests {
		if got := String(tt.in, tt.limit); got != tt.want {
			t.Errorf("String(%d bytes, %d) = %q, want %q", len(tt.in), tt.limit, got, tt.want)
		}
	}
}

// Whatever the limit, the result is valid UTF-8 when the input is, and no
// longer than the limit once the limit leaves room for the note.
func TestStringStaysWithinTheLimitAtARuneBoundary(t *testing.T) {
	s := strings.Repeat("aé€😀", 40) // runes of 1, 2, 3 and 4 bytes
	n := len(Note(len(s)))
	for limit := 0; limit <= len(s)+1; limit++ {
		got := String(s, limit)
		if !utf8.ValidString(got) {
			t.Fatalf("String(s, %d) = %q: half a rune", limit, got)
		}
		if limit >= n && len(got) > limit {
			t.Fatalf("String(s, %d) is %d bytes, over the limit", limit, len(got))
		}
		if limit < len(s) && !strings.HasPrefix(s, strings.TrimSuffix(got, Note(len(s)))) {
			t.Fatalf("String(s, %d) = %q: not the start of s", limit, got)
		}
	}
}

// Text escaped before (termsafe's, strconv's) is cut between two escapes,
// never inside one: no "\u20" or lone backslash is left before the note.
func TestStringCutsNoEscapeInTwo(t *testing.T) {
	pieces := []string{"NVIDIA H100", `\x1b`, "]0;PWNED", `\x07`, `\u202e`, `\U000e0041`, "中", `\xff`, `\t`, `\"`, `\\`, "a"}
	s := strings.Repeat(strings.Join(pieces, ""), 2)
	inside := map[int]bool{} // the cuts that fall within an escape
	at := 0
	for range 2 {
		for _, p := range pieces {
			if p[0] == '\\' {
				for i := at + 1; i < at+len(p); i++ {
					inside[i] = true
				}
			}
			at += len(p)
		}
	}
	note := Note(len(s))
	for limit := len(note); limit < len(s); limit++ {
		body, ok := strings.CutSuffix(String(s, limit), note)
		if !ok || !strings.HasPrefix(s, body) || inside[len(body)] || len(body) < limit-len(note)-len(`\U00000000`) {
			t.Errorf("String(s, %d) = %q: not the longest start of s that ends between escapes", limit, body)
		}
	}
}

func TestQuoteQuotesAValueWithinTheLimitWhole(t *testing.T) {
	for in, want := range map[string]string{
		"":             `""`,
		"0000:3b:00.0": `"0000:3b:00.0"`,
		"a\nb\x00":     `"a\nb\x00"`,
	} {
		if got := Quote(in, 16); got != want {
			t.Errorf("Quote(%q, 16) = %s, want %s", in, got, want)
		}
	}
}

// The note goes after the closing quote: it is no part of the value.
func TestQuoteQuotesTheStartOfALongValueAndSaysItsSize(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		want  string
	}{
		{strings.Repeat("x", 100_000), 8, `"xxxxxxxx"…[truncated 100000 bytes]`},
		{"éééé", 5, `"éé"…[truncated 8 bytes]`}, // never half a rune
		{"abc", 0, `""…[truncated 3 bytes]`},
	}
	for _, tt := range tests {
		if got := Quote(tt.in, tt.limit); got != tt.want {
			t.Errorf("Quote(%d bytes, %d) = %s, want %s", len(tt.in), tt.limit, got, tt.want)
		}
	}
}
