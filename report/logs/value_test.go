package logs

import (
	"bytes"
	"testing"

	"github.com/rs/zerolog"
)

// TestEscapedWidthIsWhatZerologWrites: the budget Cut keeps is counted
// as zerolog escapes, so for every single byte and a few runes, jsonLen
// is the length zerolog itself writes between the quotes.
func TestEscapedWidthIsWhatZerologWrites(t *testing.T) {
	var inputs []string
	for b := 0; b < 256; b++ {
		inputs = append(inputs, string([]byte{byte(b)}))
	}
	inputs = append(inputs, "é", "\u2028", "😀", "\xe2\x82", "a\"b\\c")
	for _, s := range inputs {
		var buf bytes.Buffer
		l := zerolog.New(&buf)
		l.Log().Str("v", s).Send()
		// buf is {"v":"..."}\n
		written := buf.Len() - len(`{"v":""}`+"\n")
		if got := jsonLen(s); got != written {
			t.Errorf("jsonLen(%q) = %d, zerolog writes %d bytes: %s", s, got, written, buf.Bytes())
		}
	}
}
