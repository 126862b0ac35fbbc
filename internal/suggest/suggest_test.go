package suggest

import (
	"strings"
	"testing"
)

// A typo within two edits (a swap of two runes counting one) names the
// word it was meant to be; further away, or for a word too short to tell,
// nothing does.
func TestClosestNamesATypoWithinTwoEdits(t *testing.T) {
	words := []string{"check", "explain", "bake", "diff", "version"}
	for word, want := range map[string]string{
		"chek": "check", "exlpain": "explain", "expalin": "explain", "verison": "version", "bkae": "bake",
		"ab": "", "xyzzy": "", "diffs": "diff", "c": "", strings.Repeat("x", 1<<17): "",
	} {
		got, ok := Closest(word, words)
		if got != want || ok != (want != "") {
			t.Errorf("Closest(%.20q) = %q, %v; want %q", word, got, ok, want)
		}
	}
}
