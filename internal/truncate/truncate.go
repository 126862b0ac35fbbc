// Package truncate bounds text of unbounded length where it enters a
// message, a log line or the record. One environment string can hold
// 128 KiB and a file under /proc or /sys whatever it holds, so a value is
// never copied whole into what a person or a pipeline reads: it keeps its
// start, cut at a rune boundary, and a note of how long the whole was,
// "…[truncated N bytes]".
package truncate

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// MessageBytes is how much of a value a one-line error message or warning
// quotes: enough to recognise a version, a PCI bus id or a setting, short
// enough that the line still reads as one line.
const MessageBytes = 120

// String returns s when it is at most limit bytes (so it cuts exactly when
// len(s) > limit). Otherwise it returns the start of s followed by the note,
// the two together at most limit bytes (the note alone when limit is
// shorter than the note). A caller that budgets bytes (a log line, a record
// field, a termination message) gets no more than it asked for.
func String(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	n := Note(len(s))
	return start(s, limit-len(n)) + n
}

// Quote quotes s as strconv.Quote does, for a message that names a bad
// value. When s is longer than limit bytes, it quotes only the start of s,
// at most limit bytes of it, and puts the note after the closing quote,
// where it cannot be mistaken for part of the value:
// "0000:3b:00.0xxxx"…[truncated 4096 bytes].
func Quote(s string, limit int) string {
	if len(s) <= limit {
		return strconv.Quote(s)
	}
	return strconv.Quote(start(s, limit)) + Note(len(s))
}

// Note is the mark a cut value ends with, saying how long the whole value
// was: for a writer that keeps a value's start as it streams in (a child's
// output) and knows the whole size only at the end.
func Note(size int) string {
	return fmt.Sprintf("…[truncated %d bytes]", size)
}

// start returns at most n bytes of the start of s, never half a rune.
func start(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
