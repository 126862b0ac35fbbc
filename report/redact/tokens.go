package redact

import "strings"

// tokenFormats are credentials known by their own shape, redacted wherever
// they appear: a prefix the issuer puts on every token, then at least min
// characters of its alphabet (docs/schema/README.md, "Secrets", has the
// sources).
var tokenFormats = []struct {
	prefix string
	min    int
	body   func(byte) bool
}{
	{"ghp_", 30, alnum}, {"gho_", 30, alnum}, {"ghu_", 30, alnum}, {"ghs_", 30, alnum}, {"ghr_", 30, alnum}, // GitHub
	{"github_pat_", 40, alnumUnderscore},
	{"glpat-", 20, alnumDashUnderscore},                                                                    // GitLab personal access tokens
	{"xoxa-", 10, alnumDash}, {"xoxb-", 10, alnumDash}, {"xoxe-", 10, alnumDash}, {"xoxo-", 10, alnumDash}, // Slack
	{"xoxp-", 10, alnumDash}, {"xoxr-", 10, alnumDash}, {"xoxs-", 10, alnumDash},
	{"hf_", 30, alnum},                                 // Hugging Face User Access Tokens
	{"AKIA", 16, upperDigit}, {"ASIA", 16, upperDigit}, // AWS access key ids (long-term, temporary)
	{"AIza", 35, alnumDashUnderscore}, // Google API keys
	{"npm_", 36, alnum},               // npm access tokens
	{"pypi-", 50, alnumDashUnderscore},
	{"sk-", 40, alnumDashUnderscore}, // OpenAI API keys
	{"eyJ", 20, jwtBody},             // a JWT: base64url of '{"', three parts (checked in tokens)
}

// webhookPaths are URLs whose path is the credential: whoever has it may
// post (Slack's incoming webhooks, Discord's webhooks).
var webhookPaths = []string{"hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/",
	"discord.com/api/webhooks/", "discordapp.com/api/webhooks/"}

// channelToken is the path segment of a conda channel URL that carries a
// token (https://host/t/<token>/<channel>), which conda masks in its own
// output.
const channelToken = "/t/"

func alnum(c byte) bool               { return isLetter(c) || c >= '0' && c <= '9' }
func alnumUnderscore(c byte) bool     { return alnum(c) || c == '_' }
func alnumDash(c byte) bool           { return alnum(c) || c == '-' }
func alnumDashUnderscore(c byte) bool { return alnum(c) || c == '-' || c == '_' }
func upperDigit(c byte) bool          { return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
func jwtBody(c byte) bool             { return alnumDashUnderscore(c) || c == '.' }

// tokens replaces every credential s holds in a known shape: the token
// formats above, PEM blocks ("-----BEGIN ...-----" to "-----END ...-----",
// or to the end when the block is cut), webhook paths and conda channel
// tokens.
func tokens(s string) string {
	s = pemBlocks(s)
	for _, f := range tokenFormats {
		if strings.Contains(s, f.prefix) {
			s = replaceFormat(s, f.prefix, f.min, f.body)
		}
	}
	for _, p := range webhookPaths {
		if strings.Contains(s, p) {
			s = replaceAfter(s, p, func(c byte) bool { return alnumDashUnderscore(c) || c == '/' })
		}
	}
	if strings.Contains(s, "://") && strings.Contains(s, channelToken) {
		s = channelTokens(s)
	}
	return s
}

// replaceFormat replaces each prefix that starts a word (no letter or digit
// before it) and is followed by at least min body characters.
func replaceFormat(s, prefix string, min int, body func(byte) bool) string {
	var b strings.Builder
	i := 0 // s[:i] is in b
	for from := 0; ; {
		j := strings.Index(s[from:], prefix)
		if j < 0 {
			break
		}
		j += from
		if j > 0 && alnum(s[j-1]) {
			from = j + len(prefix) // inside a word: no token starts here
			continue
		}
		end := j + len(prefix)
		for end < len(s) && body(s[end]) {
			end++
		}
		if end-j-len(prefix) < min || prefix == "eyJ" && strings.Count(s[j:end], ".") < 2 {
			// A later prefix in the same run has less of it after it.
			from = end
			continue
		}
		b.WriteString(s[i:j])
		b.WriteString(Placeholder)
		i, from = end, end
	}
	if i == 0 {
		return s
	}
	b.WriteString(s[i:])
	return b.String()
}

// replaceAfter replaces what follows each marker in s, as long as body
// holds, with Placeholder.
func replaceAfter(s, marker string, body func(byte) bool) string {
	var b strings.Builder
	i := 0
	for {
		j := strings.Index(s[i:], marker)
		if j < 0 {
			break
		}
		j += i + len(marker)
		end := j
		for end < len(s) && body(s[end]) {
			end++
		}
		b.WriteString(s[i:j])
		if end > j && s[j:end] != Placeholder {
			b.WriteString(Placeholder)
		} else {
			b.WriteString(s[j:end])
		}
		i = end
	}
	b.WriteString(s[i:])
	return b.String()
}

// pemBlocks replaces every PEM block (RFC 7468) with Placeholder.
func pemBlocks(s string) string {
	const begin, end = "-----BEGIN ", "-----END "
	if !strings.Contains(s, begin) {
		return s
	}
	var b strings.Builder
	i := 0 // s[:i] is in b
	for {
		j := strings.Index(s[i:], begin)
		if j < 0 {
			break
		}
		j += i
		stop := len(s)
		if e := strings.Index(s[j:], end); e >= 0 {
			stop = j + e + len(end)
			if d := strings.Index(s[stop:], "-----"); d >= 0 {
				stop += d + len("-----")
			} else {
				stop = len(s)
			}
		}
		b.WriteString(s[i:j])
		b.WriteString(Placeholder)
		i = stop
	}
	b.WriteString(s[i:])
	return b.String()
}

// channelTokens replaces the path segment after each "/t/" that follows
// "://" in the same word of s.
func channelTokens(s string) string {
	var b strings.Builder
	i := 0       // s[:i] is in b
	url := false // "://" seen in the current word
	for j := 0; j < len(s); j++ {
		switch c := s[j]; {
		case strings.IndexByte(" \t\n\"'=", c) >= 0:
			url = false
		case c == ':' && strings.HasPrefix(s[j:], "://"):
			url = true
			j += 2
		case c == '/' && url && strings.HasPrefix(s[j:], channelToken):
			seg := j + len(channelToken)
			end := seg
			for end < len(s) && strings.IndexByte("/?# \t\n\"'", s[end]) < 0 {
				end++
			}
			if end > seg && s[seg:end] != Placeholder {
				b.WriteString(s[i:seg])
				b.WriteString(Placeholder)
				i = end
			}
			j = end - 1
		}
	}
	b.WriteString(s[i:])
	return b.String()
}
