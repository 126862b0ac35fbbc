package logs

import (
	"unicode/utf8"

	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
	"github.com/gpu-preflight/gpu-preflight/report/redact"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// MaxValueBytes bounds, JSON-escaped, one value a log line carries from
// outside gpu-preflight: a warning or an error that quotes a path or a
// variable, a command, a probe's stderr. A line holds at most three such
// values and a message of maxFieldBytes beside its fixed fields, so it
// stays under MaxLineBytes (3 x 1500 + 3000 leaves 500 for the rest).
const MaxValueBytes = 1500

// Value is s as a log line may carry it: redacted (redact.Value, so a
// credential in a URL, a flag or a variable never reaches the log) and cut
// to MaxValueBytes (Cut). Every value gpu-preflight logs that it did not
// write itself passes through Value or Cut.
func Value(s string) string {
	return Cut(redact.Value(s), MaxValueBytes)
}

// Cut cuts s so that zerolog writes it in at most limit bytes, escapes
// included, keeping its start at a rune boundary and ending it with
// truncate's note of the whole length (truncate.String cuts raw bytes, so
// it cannot make this cut itself). JSON escaping makes a string longer
// than its bytes (a control character takes six), so the budget counts
// the escaped form, as zerolog writes it.
func Cut(s string, limit int) string {
	if jsonLen(s) <= limit {
		return s
	}
	note := truncate.Note(len(s))
	budget := limit - len(note)
	n, i := 0, 0
	var run termsafe.Run
	for i < len(s) {
		w, size := escapedWidth(s[i:], &run)
		if n+w > budget {
			break
		}
		n += w
		i += size
	}
	// s[:i] ends at a rune boundary: i only ever moves a whole rune on.
	return s[:i] + note
}

// jsonLen is the length of s as zerolog writes it, without the quotes.
func jsonLen(s string) int {
	n := 0
	var run termsafe.Run
	for i := 0; i < len(s); {
		w, size := escapedWidth(s[i:], &run)
		n += w
		i += size
	}
	return n
}

// escapedWidth returns how many bytes a log line holds for the first rune
// of s, and how many bytes of s that rune takes: zerolog escapes `"`, `\`,
// the C0 controls and DEL (internal/json/string.go, noEscapeTable) and
// writes `\ufffd` for a byte that is not UTF-8; capWriter escapes what
// termsafe does not show, above U+FFFF as a surrogate pair.
func escapedWidth(s string, run *termsafe.Run) (width, size int) {
	c := s[0]
	r, size := utf8.DecodeRuneInString(s)
	shown := run.Shown(r)
	switch {
	case c >= utf8.RuneSelf:
		switch {
		case r == utf8.RuneError && size == 1:
			return len(`\ufffd`), 1
		case shown:
			return size, size
		case r > 0xffff:
			return len(`\ud800\udc00`), size
		}
		return len(`\u0000`), size
	case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
		return 2, 1
	case c < 0x20 || c == 0x7f:
		return len(`\u0000`), 1
	}
	return 1, 1
}

// Err is err as a log line carries it (for zerolog's Event.Err): its text
// through Value. Errors name paths, commands and variables, which come from
// outside.
func Err(err error) error {
	if err == nil {
		return nil
	}
	return valueError(Value(err.Error()))
}

type valueError string

func (e valueError) Error() string { return string(e) }
