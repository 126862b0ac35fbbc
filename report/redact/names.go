package redact

import (
	"strings"
	"unicode"
)

// credentialWords mark a name as a credential anywhere in it ("DBPASSWORD").
var credentialWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "COOKIE", "PRIVATE",
	"SIGNATURE", "JWT", "BEARER"}

// Sensitive reports whether a variable, flag or key name looks like it holds
// a credential: a credentialWord anywhere; or, of its nameWords, SIG (Azure's
// sig=), PASS, PWD or PW unless it is the whole name (the shell's PWD), a
// word ending in KEY(S) (not KEYBOARD), or one starting or ending in AUTH
// (OAUTH2, not AUTHOR).
func Sensitive(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range credentialWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	ws := nameWords(name)
	for _, w := range ws {
		switch {
		case w == "SIG":
			return true
		case (w == "PASS" || w == "PWD" || w == "PW") && len(ws) > 1:
			return true
		case strings.HasSuffix(w, "KEY") || strings.HasSuffix(w, "KEYS"):
			return true
		case w == "AUTHOR" || w == "AUTHORS":
		case strings.HasPrefix(w, "AUTH") || strings.HasSuffix(strings.TrimRight(w, "0123456789"), "AUTH"):
			return true
		}
	}
	return false
}

// nameWords splits a name into upper-case words at non-alphanumerics and
// lower-to-upper changes: "apiKey" is API KEY.
func nameWords(name string) []string {
	var out []string
	var cur []rune
	var prev rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToUpper(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

// passwordAliases are names Sensitive leaves alone (the shell's PWD) that
// take a password as a flag or a key: --pass, -passin, {"pwd": ...}.
var passwordAliases = []string{"pass", "pwd", "pw", "passin", "passout"}

func isPasswordAlias(name string) bool {
	for _, n := range passwordAliases {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	return false
}

// sensitiveFlag is Sensitive for a flag's name (a, as given): a password
// alias and mysql's, sshpass's and docker login's -p take a password too.
func sensitiveFlag(name, a string) bool {
	return Sensitive(name) || isPasswordAlias(name) || a == "-p"
}

// sensitiveKey is Sensitive for an assignment's key ("pwd=x" too); a key
// written as a flag ("--pass=x") follows sensitiveFlag.
func sensitiveKey(key string) bool {
	if strings.HasPrefix(key, "-") {
		name := strings.TrimLeft(key, "-")
		return sensitiveFlag(name, key)
	}
	return Sensitive(key) || isPasswordAlias(strings.TrimRight(key, ":"))
}
