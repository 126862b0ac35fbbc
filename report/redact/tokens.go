package redact

import "strings"

// tokenFormat is a credential known by its own shape: a prefix its issuer
// puts on every token, then at least min characters of its alphabet, in at
// least dots+1 '.'-separated parts, then maybe a secret of that length.
type tokenFormat struct {
	prefixes []string
	min      int
	body     func(byte) bool
	dots     int
	secret   int
}

// tokenFormats are redacted wherever they appear (docs/redaction.md).
var tokenFormats = []tokenFormat{
	{prefixes: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, min: 30, body: alnum}, // GitHub, "About authentication to GitHub"
	{prefixes: []string{"github_pat_"}, min: 40, body: alnumUnderscore},                // GitHub fine-grained
	{prefixes: []string{"glpat-", "gloas-", "gldt-", "glrt-", "glrtr-", "glcbt-", "glptt-", "glft-", "glimt-", "glagent-",
		"glwt-", "glsoat-", "glffct-", "_gitlab_session="}, min: 20, body: dottedWord}, // GitLab, "GitLab token overview", "Token prefixes"
	{prefixes: []string{"xoxa-", "xoxb-", "xoxe-", "xoxo-"}, min: 10, body: alnumDash},         // Slack, "Token types"
	{prefixes: []string{"xoxp-", "xoxr-", "xoxs-", "xapp-"}, min: 10, body: alnumDash},         // Slack, "Token types" (xapp-: app-level)
	{prefixes: []string{"hf_"}, min: 30, body: alnum},                                          // Hugging Face
	{prefixes: []string{"AKIA", "ASIA"}, min: 16, body: upperDigit, secret: awsSecretLen},      // AWS access key ids, then the secret key
	{prefixes: []string{"AIza"}, min: 35, body: alnumDashUnderscore},                           // Google API keys
	{prefixes: []string{"ya29."}, min: 20, body: dottedWord},                                   // Google OAuth 2.0 access tokens
	{prefixes: []string{"npm_"}, min: 36, body: alnum},                                         // npm
	{prefixes: []string{"pypi-"}, min: 50, body: alnumDashUnderscore},                          // PyPI
	{prefixes: []string{"sk-"}, min: 40, body: alnumDashUnderscore},                            // OpenAI
	{prefixes: []string{"nvapi-"}, min: 20, body: alnumDashUnderscore},                         // NVIDIA NGC and build.nvidia.com API keys
	{prefixes: []string{"hvs.", "hvb.", "hvr."}, min: 24, body: alnumDashUnderscore},           // HashiCorp Vault, "Tokens", "Token formats"
	{prefixes: []string{"dckr_pat_"}, min: 10, body: alnumDashUnderscore},                      // Docker personal access tokens
	{prefixes: []string{"dapi"}, min: 32, body: alnumDash},                                     // Databricks personal access tokens
	{prefixes: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_"}, min: 20, body: alnum}, // Stripe, "API keys"
	{prefixes: []string{"eyJ"}, min: 20, body: dottedWord, dots: 2},                            // JWT: base64url of '{"'
}

// webhookPaths are URLs whose path is the credential (Slack's, Discord's).
var webhookPaths = []string{"hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/",
	"discord.com/api/webhooks/", "discordapp.com/api/webhooks/"}

// channelToken is the path segment of a conda channel URL before its token
// (https://host/t/<token>/<channel>), which conda masks in its own output.
const channelToken = "/t/"

// awsSecretLen is the length of an AWS secret access key.
const awsSecretLen = 40

// endsInPairedToken reports whether a secret may follow w.
func endsInPairedToken(w string) bool {
	for _, f := range tokenFormats {
		for _, p := range f.prefixes {
			if f.secret > 0 && strings.Contains(w, p) && strings.HasSuffix(redactTokenFormat(w, p, f), Placeholder) {
				return true
			}
		}
	}
	return false
}

// followingSecret returns the end of the n-character secret after s[:i], or i.
func followingSecret(s string, i, n int) int {
	k := i
	for k < len(s) && k-i < 8 && strings.IndexByte(" \t\n\r,:;=\"'", s[k]) >= 0 {
		k++
	}
	end := k
	for end < len(s) && (alnum(s[end]) || s[end] == '/' || s[end] == '+') {
		end++
	}
	if end-k != n {
		return i
	}
	return end
}

func alnum(c byte) bool { return isLetter(c) || c >= '0' && c <= '9' }

func alnumUnderscore(c byte) bool { return alnum(c) || c == '_' }

func alnumDash(c byte) bool { return alnum(c) || c == '-' }

func alnumDashUnderscore(c byte) bool { return alnum(c) || c == '-' || c == '_' }

func upperDigit(c byte) bool { return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }

// dottedWord is a token of '.'-joined parts: a JWT, a GitLab CI job token.
func dottedWord(c byte) bool { return alnumDashUnderscore(c) || c == '.' }

// redactTokens replaces every credential s holds in a known shape: the
// token formats, PEM blocks, webhook paths and conda channel tokens.
func redactTokens(s string) string {
	s = redactPEMBlocks(s)
	for _, f := range tokenFormats {
		for _, p := range f.prefixes {
			if strings.Contains(s, p) {
				s = redactTokenFormat(s, p, f)
			}
		}
	}
	for _, p := range webhookPaths {
		if strings.Contains(s, p) {
			s = redactAfter(s, p, func(c byte) bool { return alnumDashUnderscore(c) || c == '/' })
		}
	}
	if strings.Contains(s, "://") && strings.Contains(s, channelToken) {
		s = redactChannelTokens(s)
	}
	return s
}

// redactTokenFormat replaces each token of format f that starts a word.
func redactTokenFormat(s, prefix string, f tokenFormat) string {
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
		for end < len(s) && f.body(s[end]) {
			end++
		}
		if end-j-len(prefix) < f.min || f.dots > 0 && strings.Count(s[j:end], ".") < f.dots {
			from = end // a later prefix in the same run has less after it
			continue
		}
		b.WriteString(s[i:j])
		b.WriteString(Placeholder)
		if f.secret > 0 {
			if k := followingSecret(s, end, f.secret); k > end {
				b.WriteString(s[end:k-f.secret] + Placeholder)
				end = k
			}
		}
		i, from = end, end
	}
	if i == 0 {
		return s
	}
	b.WriteString(s[i:])
	return b.String()
}

// redactAfter replaces what follows each marker in s while body holds.
func redactAfter(s, marker string, body func(byte) bool) string {
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

// redactPEMBlocks replaces every PEM block (RFC 7468), to its end or s's.
func redactPEMBlocks(s string) string {
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

// redactChannelTokens replaces the segment after each "/t/" in a URL of s.
func redactChannelTokens(s string) string {
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
