// Package truncate bounds text of unbounded length (an environment string,
// a file under /proc) where it enters a message, a log line or the record:
// its start, cut between runes and escapes, and "…[truncated N bytes]".
package truncate

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MessageBytes is how much of a value a one-line message quotes: enough to
// recognise a version or a bus id, short enough to stay one line.
const MessageBytes = 120

// String returns s when it is at most limit bytes, else its start and the
// note, together at most limit bytes (the note alone when limit is shorter).
func String(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	n := Note(len(s))
	return start(s, limit-len(n)) + n
}

// Quote quotes s as strconv.Quote does, for a message naming a bad value;
// past limit bytes it quotes the start and puts the note after the closing
// quote, where it cannot pass for the value.
func Quote(s string, limit int) string {
	if len(s) <= limit {
		return strconv.Quote(s)
	}
	return strconv.Quote(start(s, limit)) + Note(len(s))
}

// Note is the mark a cut value of size bytes ends with.
func Note(size int) string {
	return fmt.Sprintf("…[truncated %d bytes]", size)
}

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
	for i := 0; i < n; {
		j := strings.IndexByte(s[i:n], '\\')
		if j < 0 {
			break
		}
		i += j
		w := escapeLen(s[i:])
		if i+w > n {
			return s[:i]
		}
		i += w
	}
	return s[:n]
}

// escapeLen is the length of the escape (\", \x1b, \u202e) at s's backslash.
func escapeLen(s string) int {
	if len(s) < 2 {
		return 1
	}
	d := 0
	switch s[1] {
	case 'x':
		d = 2
	case 'u':
		d = 4
	case 'U':
		d = 8
	}
	if len(s) < 2+d || strings.Trim(s[2:2+d], "0123456789abcdefABCDEF") != "" {
		return 2
	}
	return 2 + d
}
