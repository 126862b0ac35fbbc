package redact

import "strings"

// URLUserInfo replaces the user-info of every "scheme://user:pass@host" in
// s, a user alone too (tokens are passed that way), through the last '@' of
// the authority (userInfoEnd).
func URLUserInfo(s string) string {
	if !strings.Contains(s, "://") || !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 || !isScheme(s[:i]) {
			if i < 0 {
				b.WriteString(s)
				return b.String()
			}
			b.WriteString(s[:i+3])
			s = s[i+3:]
			continue
		}
		b.WriteString(s[:i+3])
		rest := s[i+3:]
		at := userInfoEnd(rest)
		if at < 0 {
			s = rest
			continue
		}
		b.WriteString(Placeholder)
		s = rest[at:]
	}
}

// userInfoEnd returns the index of the '@' ending the user-info that starts
// rest (after "scheme://"), or -1: the last '@' of the authority, or of the
// word when "user:rest" is no host:port, since a password may hold '/', '?'
// or '#' unescaped (AWS secret keys hold '/').
func userInfoEnd(rest string) int {
	word := len(rest)
	if i := strings.IndexAny(rest, " \t\n\r\v\f"); i >= 0 {
		word = i
	}
	end := strings.IndexAny(rest[:word], "/?#")
	if end < 0 {
		end = word
	}
	if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
		return at
	}
	if end == word {
		return -1
	}
	_, pass, ok := strings.Cut(rest[:end], ":")
	if !ok || pass == "" || strings.Trim(pass, "0123456789") == "" {
		return -1 // no password, or host:port
	}
	return strings.LastIndexByte(rest[:word], '@')
}

// isScheme reports whether before ends in a URL scheme (RFC 3986, 3.1).
func isScheme(before string) bool {
	n := 0
	for n < len(before) {
		c := before[len(before)-1-n]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			break
		}
		n++
	}
	if n == 0 {
		return false
	}
	first := before[len(before)-n]
	return first >= 'a' && first <= 'z' || first >= 'A' && first <= 'Z'
}

// redactSchemelessUserInfo replaces "user:password" before an '@' without
// a scheme ("etcd:pw@host:2379", torchrun's --rdzv-endpoint), at the word's
// start or after an '='. An image reference ("ml/train:2.3@sha256:...") is
// none: a user holds no '/', and a digest is no host.
func redactSchemelessUserInfo(w string) string {
	at := strings.LastIndexByte(w, '@')
	if at < 0 || !strings.Contains(w[:at], ":") || w[at+1:] == "" || isDigest(w[at+1:]) {
		return w
	}
	scheme := strings.LastIndex(w[:at], "://")
	for start := 0; start < at; {
		// The user ends at the first character a user cannot hold: ':'.
		colon := start
		for colon < at && userChar(w[colon]) {
			colon++
		}
		if colon > start && colon < at && w[colon] == ':' && scheme < start && w[colon+1:at] != "" &&
			w[colon+1:at] != Placeholder && !strings.EqualFold(w[start:colon], "mailto") {
			return w[:start] + Placeholder + w[at:]
		}
		i := strings.IndexByte(w[start:at], '=')
		if i < 0 {
			break
		}
		start += i + 1
	}
	return w
}

// userChar reports whether c can be in a user (RFC 3986's unreserved, %+!$).
func userChar(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || strings.IndexByte("-._~%+!$", c) >= 0
}

// isDigest reports whether s starts with an OCI content digest: an
// algorithm of [a-z0-9+._-] (image-spec, "Digests"), ':' and hex.
func isDigest(s string) bool {
	alg, hex, ok := strings.Cut(s, ":")
	if !ok || alg == "" || len(hex) < 32 || strings.Trim(alg, "abcdefghijklmnopqrstuvwxyz0123456789+._-") != "" {
		return false
	}
	for _, c := range []byte(hex[:32]) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
