package redact

import "strings"

// redactForms redacts the credential forms a word can hold: URL user-info,
// user:password@host, quoted pairs, openssl's pass:, --user=u:p, key=value.
func redactForms(w string) string {
	// User-info first: its '=' ("https://u=p@h") is no assignment's.
	w = URLUserInfo(w)
	w = redactSchemelessUserInfo(w)
	w = redactQuotedPairs(w)
	if strings.HasPrefix(w, "pass:") {
		return "pass:" + Placeholder
	}
	if name, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(name, "-") && userFlags[strings.TrimLeft(name, "-")] {
		return name + "=" + redactAfterColon.apply(v)
	}
	// Again: a value redacted inside user-info may have held what ended it.
	return redactSchemelessUserInfo(URLUserInfo(redactAssignments(w)))
}

// credentialHeader returns w up to the ':' of a credential-named HTTP
// header it starts ("Authorization:", "--header=X-Api-Key:abc"); a URL, an
// HTTPie JSON item ("token:=") and a redacted value are none.
func credentialHeader(w string) (string, bool) { return header(w, true) }

// header is credentialHeader; a header whose value is redacted counts
// unless skipRedacted.
func header(w string, skipRedacted bool) (string, bool) {
	start := 0 // where the name before the next ':' starts
	for i := 0; i < len(w); i++ {
		switch w[i] {
		case '=':
			start = i + 1
		case ':':
			name := strings.TrimLeft(w[start:i], `"'`)
			start = i + 1
			if !isHeaderName(name) || !Sensitive(name) {
				continue
			}
			rest := w[i+1:]
			if strings.HasPrefix(rest, "//") || strings.HasPrefix(rest, "=") ||
				skipRedacted && len(rest) <= len(Placeholder)+8 && strings.TrimSpace(strings.Trim(rest, `"'`)) == Placeholder {
				continue
			}
			return w[:i+1], true
		}
	}
	return "", false
}

// isHeaderName reports whether s can be a header name as people write them:
// "auth.example.com:443" is a host.
func isHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// redactAssignments redacts the value of every credential-keyed "key=value"
// in a word, a key starting after a separator ("Server=x;Password=y",
// "--set=a.password=y"). A value runs to the word's end when its key starts
// the word (a password may hold any character), else to the next '&' or ';'.
func redactAssignments(w string) string {
	if strings.IndexByte(w, '=') < 0 {
		return w
	}
	var b strings.Builder
	keyStart := 0 // start of the current key in w
	i := 0        // w[:i] is in b
	var open byte // a quote opened after '=' or ':', as wordEnd joins it, not yet closed
	for j := 0; j < len(w); j++ {
		switch c := w[j]; c {
		case '"', '\'':
			keyStart = j + 1
			if open == c {
				open = 0
			} else if open == 0 && j > 0 && (w[j-1] == '=' || w[j-1] == ':') {
				open = c
			}
		case '&', ';', ',', '?', ' ', '\t', '\n':
			keyStart = j + 1
		case '=':
			key := w[keyStart:j]
			if !sensitiveKey(key) {
				keyStart = j + 1
				continue
			}
			end := valueEnd(w, j+1, keyStart > 0)
			b.WriteString(w[i : j+1])
			b.WriteString(Placeholder)
			if open != 0 && strings.IndexByte(w[j+1:end], open) >= 0 {
				b.WriteByte(open) // the joined quote stays closed, as a second pass joins it
				open = 0
			}
			i, j, keyStart = end, end-1, end
		}
	}
	b.WriteString(w[i:])
	return b.String()
}

// valueEnd returns the end of the value that starts at w[from]: the word's
// end, or with stop the next '&' or ';', past every quote the value opens
// as wordEnd joins it (after '=' or ':'): a quoted separator is the value's.
func valueEnd(w string, from int, stop bool) int {
	end := len(w)
	for p := from; p < end; p++ {
		switch c := w[p]; {
		case stop && (c == '&' || c == ';'):
			return p
		case (c == '"' || c == '\'') && p > 0 && (w[p-1] == '=' || w[p-1] == ':'):
			if e := closingQuote(w, p); e >= 0 {
				p = e
			}
		}
	}
	return end
}

// redactQuotedPairs redacts the value after every quoted credential key and
// ':' or '=': JSON and Python literals, and JSON escaped in a shell string.
func redactQuotedPairs(s string) string {
	if !strings.ContainsAny(s, "\"'") {
		return s
	}
	if strings.Contains(s, `\"`) {
		s = redactEscapedPairs(s, `\"`)
	}
	if strings.Contains(s, `\'`) {
		s = redactEscapedPairs(s, `\'`)
	}
	var b strings.Builder
	i := 0               // s[:i] is in b
	var unclosed [2]bool // by quote: one that nothing closes, so no later one closes either
	for j := 0; j < len(s); j++ {
		q := s[j]
		if q != '"' && q != '\'' || unclosed[q&1] {
			continue
		}
		end := closingQuote(s, j)
		if end < 0 {
			unclosed[q&1] = true // a character, not a pair: the other quote still pairs
			continue
		}
		key := s[j+1 : end]
		k := end + 1
		for k < len(s) && s[k] == ' ' {
			k++
		}
		if k >= len(s) || (s[k] != ':' && s[k] != '=') || !quotedKey(key) {
			j = end
			continue
		}
		k++
		for k < len(s) && s[k] == ' ' {
			k++
		}
		if k >= len(s) {
			break
		}
		var from, to int
		if v := s[k]; v == '"' || v == '\'' {
			from, to = k+1, closingQuote(s, k)
			if to < 0 {
				to = len(s)
			}
		} else if strings.HasPrefix(s[k:], Placeholder) {
			j = k + len(Placeholder) - 1 // redacted before: its ']' ends no value
			continue
		} else {
			from, to = k, k
			for to < len(s) && !strings.ContainsRune(",}] \t\n", rune(s[to])) {
				to++
			}
		}
		b.WriteString(s[i:from])
		b.WriteString(Placeholder)
		i, j = to, to
		if to < len(s) && (s[to] == '"' || s[to] == '\'') {
			b.WriteByte(s[to])
			i = to + 1
		}
		j = i - 1
	}
	b.WriteString(s[i:])
	return b.String()
}

// redactEscapedPairs is redactQuotedPairs for the escaped quote q (`\"`).
func redactEscapedPairs(s, q string) string {
	var b strings.Builder
	i := 0 // s[:i] is in b
	for {
		open := strings.Index(s[i:], q)
		if open < 0 {
			break
		}
		open += i
		end := strings.Index(s[open+len(q):], q)
		if end < 0 {
			break
		}
		end += open + len(q)
		key := s[open+len(q) : end]
		k := end + len(q)
		for k < len(s) && s[k] == ' ' {
			k++
		}
		if k >= len(s) || (s[k] != ':' && s[k] != '=') || !quotedKey(key) {
			b.WriteString(s[i:end])
			i = end
			continue
		}
		k++
		for k < len(s) && s[k] == ' ' {
			k++
		}
		from, to := k, k
		if strings.HasPrefix(s[k:], Placeholder) {
			b.WriteString(s[i:k])
			i = k
			continue
		}
		if strings.HasPrefix(s[k:], q) {
			from = k + len(q)
			if e := strings.Index(s[from:], q); e >= 0 {
				to = from + e
			} else {
				to = len(s)
			}
		} else {
			for to < len(s) && !strings.ContainsRune(",}] \t\n\\", rune(s[to])) {
				to++
			}
		}
		b.WriteString(s[i:from])
		b.WriteString(Placeholder)
		i = to
	}
	b.WriteString(s[i:])
	return b.String()
}

// closingQuote returns the index of the quote closing s[i], or -1.
func closingQuote(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case s[i]:
			return j
		}
	}
	return -1
}

// quotedKey reports whether a quoted key names a credential; one holding a
// redacted value is what a first pass left, no key.
func quotedKey(key string) bool {
	return (Sensitive(key) || isPasswordAlias(key)) && !strings.Contains(key, Placeholder)
}
