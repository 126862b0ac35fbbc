package redact

import (
	"strings"
	"unicode"
)

// Argv returns a copy of argv with the values of credential flags and keys,
// positional credentials (wandb login x) and every form a word can hold
// replaced; an element holding white space is a command line in itself.
// test/redacttest holds the forms, from the tools' documentation.
func Argv(argv []string) []string {
	if argv == nil {
		return nil
	}
	out := make([]string, len(argv))
	c := commandLine{positional: true, literal: true}
	paired := false // the element before ended in an AWS access key id
	for i, a := range argv {
		out[i] = c.step(a, func(a string) string {
			if strings.IndexFunc(a, unicode.IsSpace) >= 0 {
				return redactText(a, true)
			}
			return redactArgWord(a)
		})
		if paired && followingSecret(a, 0, awsSecretLen) == len(a) {
			out[i] = Placeholder
		}
		paired = endsInPairedToken(a)
	}
	return out
}

// commandLine is the state machine over a command line's words: what one
// word says of the next ones.
type commandLine struct {
	positional bool      // a command line, not free text
	literal    bool      // argv's words: a quote in one is part of the value, not shell syntax
	next       valueRule // for the value of a credential flag or key
	// login: after a login verb every word but a host is a credential, up
	// to the end of the command.
	login bool
	// echo: after echo or printf in a line piping into --password-stdin,
	// the words up to the pipe are the credential.
	echo, stdin bool
	prev        string
}

// loginVerbs are the words after which a command takes a credential as a
// positional argument, after the word before when there is one: `wandb
// login KEY` (the wandb CLI reference), `conda token set TOKEN`.
var loginVerbs = []struct{ before, verb string }{{"", "login"}, {"token", "set"}}

var shellOperators = map[string]bool{"|": true, "||": true, "&&": true, ";": true, "&": true}

// step returns w as it may be recorded and notes what it says of the next
// words; other rewrites it when no positional rule applies.
func (c *commandLine) step(w string, other func(string) string) string {
	prev := c.prev
	c.prev = w
	if c.next != keepValue && !isFlag(w) {
		n := c.next
		c.next = keepValue
		if c.literal && n == redactValue {
			return Placeholder
		}
		return n.apply(w)
	}
	c.next = keepValue
	if name, ok := flagWithoutValue(w); ok {
		if c.next = flagValueRule(name, w); c.next != keepValue {
			return w
		}
	}
	if !c.positional {
		return other(w)
	}
	switch {
	case shellOperators[w]:
		c.login, c.echo = false, false
		return w
	case c.echo:
		return Placeholder
	case c.stdin && (w == "echo" || w == "printf"):
		c.echo = true
		return w
	case c.login && !strings.HasPrefix(w, "-") && !namesHost(w):
		return Placeholder
	}
	for _, v := range loginVerbs {
		if w == v.verb && (v.before == "" || prev == v.before) {
			c.login = true
			return w
		}
	}
	if isConfigKey(w) && Sensitive(w) {
		c.next = redactValue
		return w
	}
	return other(w)
}

// isFlag reports whether w is a flag, not a value like "-----BEGIN".
func isFlag(w string) bool {
	n := len(w) - len(strings.TrimLeft(w, "-"))
	return n == 2 && len(w) > 2 && isLetter(w[2])
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isConfigKey reports whether w reads as a configuration key given as an
// argument (`git config user.password X`): a name with a '_' or '.'.
func isConfigKey(w string) bool {
	if w == "" || !isLetter(w[0]) || !strings.ContainsAny(w, "_.") {
		return false
	}
	for _, c := range []byte(w) {
		if !isLetter(c) && !(c >= '0' && c <= '9') && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// namesHost reports whether a word after a login verb names a registry or
// server: a URL, localhost, or a dotted host name with a port or path.
func namesHost(w string) bool {
	if strings.Contains(w, "://") {
		return true
	}
	host, _, _ := strings.Cut(w, "/")
	host, _, _ = strings.Cut(host, ":")
	if host == "localhost" {
		return true
	}
	if !strings.Contains(host, ".") || strings.HasPrefix(host, ".") || strings.HasSuffix(host, ".") {
		return false
	}
	for _, c := range []byte(host) {
		if !isLetter(c) && !(c >= '0' && c <= '9') && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// valueRule is what happens to the word after a flag without its value.
type valueRule int

const (
	keepValue        valueRule = iota
	redactValue                // the whole value is the credential
	redactAfterColon           // "user:password": the part after the first ':'
)

// apply rewrites w, the value as written, its shell quotes kept paired
// as a second pass reads them.
func (r valueRule) apply(w string) string {
	if r != redactAfterColon {
		return strayQuotes(w, Placeholder)
	}
	v := trimQuotes(w)
	user, rest, ok := strings.Cut(v, ":")
	switch {
	case !ok:
		return w
	case len(v) < len(w):
		return w[:1] + user + ":" + Placeholder + w[:1]
	case user != "" && (user[0] == '"' || user[0] == '\'') && !strings.Contains(user[1:], user[:1]) && strings.Contains(rest, user[:1]):
		return user + ":" + Placeholder + user[:1]
	}
	return user + ":" + Placeholder
}

// userFlags take "user:password": curl's -u/--user, --proxy-user/-U and
// --cert <certificate[:password]>, HTTPie's -a.
var userFlags = map[string]bool{"user": true, "u": true, "proxy-user": true, "U": true, "cert": true, "a": true}

// flagValueRule says what to do with the value of flag a, named name.
func flagValueRule(name, a string) valueRule {
	switch {
	case strings.HasSuffix(name, "-stdin"):
		// The credential comes from stdin; the next word is a registry.
		return keepValue
	case sensitiveFlag(name, a):
		return redactValue
	case userFlags[name]:
		return redactAfterColon
	}
	return keepValue
}

// flagWithoutValue returns the name of a flag whose value is the next word.
func flagWithoutValue(a string) (string, bool) {
	if !strings.HasPrefix(a, "-") || strings.ContainsAny(a, "= \t\n:") {
		return "", false
	}
	name := strings.TrimLeft(a, "-")
	if name == "" || !isLetter(name[0]) {
		return "", false
	}
	return name, true
}

// redactAttachedFlag redacts a short flag's attached value: mysql's
// -pPASSWORD, curl's -uUSER:PASSWORD.
func redactAttachedFlag(w string) (string, bool) {
	if len(w) < 3 || w[0] != '-' || w[1] == '-' {
		return "", false
	}
	switch w[1] {
	case 'p':
		if isPasswordAlias(w[1:]) || pFlagsTakingNoPassword[w[1:]] {
			return "", false // -pass, -passin: the value follows
		}
		return "-p" + Placeholder, true
	case 'u', 'U':
		if user, _, ok := strings.Cut(w[2:], ":"); ok {
			return w[:2] + user + ":" + Placeholder, true
		}
	}
	return "", false
}

// pFlagsTakingNoPassword start with p and take no password: openssl's
// -pbkdf2, gcc's -pthread and others, nvidia-smi's -pm.
var pFlagsTakingNoPassword = map[string]bool{"pbkdf2": true, "pthread": true, "pedantic": true, "pipe": true, "pie": true, "pg": true, "pm": true}

// redactArgWord redacts one argv element without white space.
func redactArgWord(w string) string {
	w = redactTokens(w)
	if r, ok := redactAttachedFlag(w); ok {
		return r
	}
	w = redactForms(w)
	// A header as one element: curl -H without the space, HTTPie's items.
	if prefix, ok := credentialHeader(w); ok {
		return prefix + " " + Placeholder
	}
	return w
}

// strayQuotes puts around r the quotes of w that nothing in w closes, in
// their order, one at w's start before r: each pairs with one outside w.
func strayQuotes(w, r string) string {
	for i := 0; i < len(w); i++ {
		if w[i] == '\\' {
			i++ // escaped, as closingQuote reads it
			continue
		}
		if w[i] != '"' && w[i] != '\'' {
			continue
		}
		switch e := closingQuote(w, i); {
		case e >= 0:
			i = e
		case i == 0:
			r = w[:1] + r
		default:
			r += w[i : i+1]
		}
	}
	return r
}

// trimQuotes drops the shell quotes around a flag's value ("--token 'x'").
func trimQuotes(w string) string {
	if len(w) >= 2 && (w[0] == '\'' || w[0] == '"') && w[len(w)-1] == w[0] {
		return w[1 : len(w)-1]
	}
	return w
}
