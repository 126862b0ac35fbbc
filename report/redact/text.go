package redact

import "strings"

// Value redacts free text (an environment value, a message): tokens and
// quoted credential keys anywhere, the flag and word forms in each word,
// and the rest of the line after a credential header ("Authorization:
// Bearer x"). White space is kept.
// Its result redacts to itself: where redacting changed s, it runs again
// until nothing changes (quotes a first pass took out can pair the rest of
// s anew).
func Value(s string) string {
	for range maxPasses {
		r := redactText(s, false)
		if r == s {
			break
		}
		s = r
	}
	return s
}

// maxPasses bounds Value's passes; two are the rule.
const maxPasses = 8

// redactText is Value; isCommandLine reads s as a command line (an argv
// element holding white space), where Argv's positional rules apply too.
func redactText(s string, isCommandLine bool) string {
	if s == "" {
		return s
	}
	s = redactTokens(s)
	s = redactQuotedPairs(s)
	var b strings.Builder
	b.Grow(len(s))
	c := commandLine{positional: isCommandLine, stdin: isCommandLine && strings.Contains(strings.ToLower(s), "password-stdin")}
	i := 0
	for i < len(s) {
		j := i
		for j < len(s) && isSpace(s[j]) {
			j++
		}
		b.WriteString(s[i:j])
		if j == len(s) {
			break
		}
		k := wordEnd(s, j, c.next != keepValue)
		w := s[j:k]
		if prefix, ok := header(w, false); ok && c.next == keepValue {
			// The rest of the line, or of the quoted word, whatever the scheme.
			c.prev = w
			b.WriteString(URLUserInfo(prefix))
			switch v := w[len(prefix):]; {
			case v != "" && (v[0] == '"' || v[0] == '\'') && closingQuote(v, 0) == len(v)-1:
				b.WriteString(v[:1] + Placeholder + v[:1]) // a quoted value ends at its quote
			case quotedThrough(w, len(prefix)):
				b.WriteString(" " + Placeholder + w[len(w)-1:]) // so does a quoted header's
			default:
				eol := strings.IndexByte(s[k:], '\n')
				if eol < 0 {
					eol = len(s) - k
				}
				switch rest := v + s[k:k+eol]; {
				case strings.TrimRight(strings.TrimSpace(rest), `"'`) == Placeholder:
					b.WriteString(rest) // redacted before, its quote kept
				case strings.TrimSpace(rest) != "":
					b.WriteString(" " + Placeholder)
				}
				k += eol
			}
			i = k
			continue
		}
		other := redactForms
		if isCommandLine {
			// In free text "nvidia-smi -pm 1" is a remedy, not a password.
			other = redactCommandWord
		}
		b.WriteString(c.step(w, other))
		i = k
	}
	return b.String()
}

// quotedThrough reports whether a quote that wordEnd joined before n in w
// (after '=' or ':') closes w.
func quotedThrough(w string, n int) bool {
	for p := 1; p < n; p++ {
		if (w[p] == '"' || w[p] == '\'') && (w[p-1] == '=' || w[p-1] == ':') {
			return closingQuote(w, p) == len(w)-1
		}
	}
	return false
}

// redactCommandWord redacts one word of a command line held in a string,
// whose headers redactText reads across words.
func redactCommandWord(w string) string {
	if r, ok := redactAttachedFlag(w); ok {
		return r
	}
	return redactForms(w)
}

// wordEnd returns the end of the word at s[j]: a quote after '=' or ':', or
// opening a flag's value, runs to its close (--password='two words').
func wordEnd(s string, j int, value bool) int {
	k := j
	for k < len(s) && !isSpace(s[k]) {
		if c := s[k]; (c == '"' || c == '\'') && (k == j && value || k > j && (s[k-1] == '=' || s[k-1] == ':')) {
			if e := closingQuote(s, k); e >= 0 {
				k = e + 1
				continue
			}
		}
		k++
	}
	return k
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
