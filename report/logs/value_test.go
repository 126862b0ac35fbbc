package logs

import (
	"bytes"
	"testing"

	"github.com/rs/zerolog"
)

// TestEscapedWidthIsWhatALogLineHolds: the budget Cut keeps is counted as
// zerolog and capWriter escape, so for every single byte and a few runes,
// jsonLen is the length a log line holds between the quotes.
func TestEscapedWidthIsWhatALogLineHolds(t *testing.T) {
	var inputs []string
	for b := 0; b < 256; b++ {
		inputs = append(inputs, string([]byte{byte(b)}))
	}
	inputs = append(inputs, "é", "\u2028", "😀", "\xe2\x82", "a\"b\\c", "\u202e", "\u0085", "\U000e0001")
	for _, s := range inputs {
		var buf bytes.Buffer
		l := zerolog.New(capWriter{&buf})
		l.Log().Str("v", s).Send()
		// buf is {"v":"..."}\n
		written := buf.Len() - len(`{"v":""}`+"\n")
		if got := jsonLen(s); got != written {
			t.Errorf("jsonLen(%q) = %d, a log line holds %d bytes: %s", s, got, written, buf.Bytes())
		}
	}
}
