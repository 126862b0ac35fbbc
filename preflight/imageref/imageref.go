// Package imageref reads a container image reference as the engines do, to
// tell a digest (one immutable image) from a tag that can move. The grammar
// is distribution/reference v0.6.0's with go-digest's digests (docs/sources.md,
// "Image references"), read by hand because that library compiles its
// regular expressions at every start; it is the tests' oracle
// (TestParseAgreesWithDistributionReference, FuzzParseAgreesWithDistributionReference).
package imageref

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Environment variables that carry the image reference as deployed and its
// digest: nothing in a container can learn them (the downward API does not
// expose the image), so the deployer injects them.
const (
	EnvImage  = "PREFLIGHT_IMAGE"
	EnvDigest = "PREFLIGHT_IMAGE_DIGEST"
)

// DefaultTag is the tag a reference without one resolves to.
const DefaultTag = "latest"

// Ref is a parsed reference.
type Ref struct {
	Name   string // the repository as written, "registry.example/team/train"
	Tag    string // as written; "" when none (the engine pulls DefaultTag)
	Digest string // "algorithm:hex", without the '@'; "" when none
}

// The grammar's limits (distribution/reference's RepositoryNameTotalLengthMax
// and its tag pattern).
const (
	maxPathBytes = 255 // the repository path, without the domain
	maxTagBytes  = 128
)

var (
	errFormat    = errors.New("invalid reference format")
	errUppercase = errors.New("invalid reference format: repository name must be lowercase")
	errNameLong  = errors.New("repository name must not be more than " + strconv.Itoa(maxPathBytes) + " characters")
	errDigest    = errors.New("invalid digest: want sha256, sha384 or sha512 and that many lower-case hex digits")
)

// Parse reads ref ("name[:tag][@digest]").
func Parse(ref string) (Ref, error) {
	r, err := parse(ref)
	if err == errFormat && ref != "" {
		if _, lower := parse(strings.ToLower(ref)); lower == nil {
			err = errUppercase
		}
	}
	if err != nil {
		return Ref{}, fmt.Errorf("image reference %q: %w", ref, err)
	}
	return r, nil
}

func parse(ref string) (Ref, error) {
	var r Ref
	rest := ref
	// Neither the name nor the tag holds an '@'.
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		rest, r.Digest = rest[:i], rest[i+1:]
		if !digestShape(r.Digest) {
			return Ref{}, errFormat
		}
	}
	// A ':' after the last '/' starts the tag; one before it is a port.
	if i := strings.LastIndexByte(rest, ':'); i >= 0 && i > strings.LastIndexByte(rest, '/') {
		rest, r.Tag = rest[:i], rest[i+1:]
		if !validTag(r.Tag) {
			return Ref{}, errFormat
		}
	}
	r.Name = rest
	path, ok := splitName(r.Name)
	if !ok {
		return Ref{}, errFormat
	}
	if len(path) > maxPathBytes {
		return Ref{}, errNameLong
	}
	if r.Digest != "" && !ValidDigest(r.Digest) {
		return Ref{}, errDigest
	}
	return r, nil
}

// splitName checks [domain '/'] remote-name and returns the remote name;
// the grammar prefers a first component that is a domain.
func splitName(name string) (path string, ok bool) {
	if i := strings.IndexByte(name, '/'); i >= 0 && validDomain(name[:i]) && validRemoteName(name[i+1:]) {
		return name[i+1:], true
	}
	return name, validRemoteName(name)
}

// validRemoteName: path-component ['/' path-component]*.
func validRemoteName(s string) bool {
	for c := range strings.SplitSeq(s, "/") {
		if !validPathComponent(c) {
			return false
		}
	}
	return true
}

// validPathComponent: [a-z0-9]+ (separator [a-z0-9]+)*, where a separator
// is one '.', one '_', two '_', or any number of '-'.
func validPathComponent(s string) bool {
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && lowerAlnum(s[j]) {
			j++
		}
		if j == i {
			return false // empty, or a separator at the start or after another
		}
		if j == len(s) {
			return true
		}
		k := j
		switch s[j] {
		case '.':
			k++
		case '_':
			k++
			if k < len(s) && s[k] == '_' {
				k++
			}
		case '-':
			for k < len(s) && s[k] == '-' {
				k++
			}
		default:
			return false
		}
		if k == len(s) {
			return false // a separator at the end
		}
		i = k
	}
	return false
}

// validDomain: host [':' port], host a domain name or a bracketed IPv6
// address ('[' [0-9a-fA-F:]+ ']').
func validDomain(s string) bool {
	host := s
	if i := strings.LastIndexByte(s, ':'); i >= 0 && !strings.HasSuffix(s, "]") {
		host = s[:i]
		if port := s[i+1:]; port == "" || !allOf(port, digit) {
			return false
		}
	}
	if inner, ok := strings.CutPrefix(host, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		return ok && inner != "" && allOf(inner, func(c byte) bool { return hexDigit(c) || c == ':' })
	}
	for c := range strings.SplitSeq(host, ".") {
		// [a-zA-Z0-9] or [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]
		if c == "" || c[0] == '-' || c[len(c)-1] == '-' ||
			!allOf(c, func(c byte) bool { return alnum(c) || c == '-' }) {
			return false
		}
	}
	return true
}

// validTag: [\w][\w.-]{0,127}.
func validTag(s string) bool {
	return s != "" && len(s) <= maxTagBytes && word(s[0]) &&
		allOf(s, func(c byte) bool { return word(c) || c == '.' || c == '-' })
}

// digestShape is the grammar's digest: an algorithm ([A-Za-z][A-Za-z0-9]*
// joined by [-_+.]), ':', 32 or more hex digits.
func digestShape(s string) bool {
	alg, hex, ok := strings.Cut(s, ":")
	if !ok || len(hex) < 32 || !allOf(hex, hexDigit) {
		return false
	}
	for i := 0; i < len(alg); {
		if !letter(alg[i]) {
			return false
		}
		i++
		for i < len(alg) && alnum(alg[i]) {
			i++
		}
		if i == len(alg) {
			return true
		}
		switch alg[i] {
		case '-', '_', '+', '.':
			i++
		default:
			return false
		}
		if i == len(alg) {
			return false
		}
	}
	return false
}

// digestHexLen is the hex length of each algorithm go-digest registers, else 0.
func digestHexLen(alg string) int {
	switch alg {
	case "sha256":
		return 64
	case "sha384":
		return 96
	case "sha512":
		return 128
	}
	return 0
}

// Pinned reports whether the reference names one image: it carries a digest.
func (r Ref) Pinned() bool { return r.Digest != "" }

// Floating reports whether the reference follows the last push: no digest, tag "latest".
func (r Ref) Floating() bool {
	return r.Digest == "" && (r.Tag == "" || r.Tag == DefaultTag)
}

// ValidDigest reports whether d is a digest go-digest accepts: sha256,
// sha384 or sha512 and its lower-case hex.
func ValidDigest(d string) bool {
	alg, hex, ok := strings.Cut(d, ":")
	n := digestHexLen(alg)
	return ok && n > 0 && len(hex) == n && allOf(hex, func(c byte) bool { return digit(c) || 'a' <= c && c <= 'f' })
}

// DigestOf returns the digest a reference carries ("sha256:<hex>"), or ""
// when none or not a reference; such a digest is always valid.
func DigestOf(ref string) string {
	r, err := Parse(ref)
	if err != nil {
		return ""
	}
	return r.Digest
}

func allOf(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func digit(c byte) bool      { return '0' <= c && c <= '9' }
func letter(c byte) bool     { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func alnum(c byte) bool      { return digit(c) || letter(c) }
func lowerAlnum(c byte) bool { return digit(c) || 'a' <= c && c <= 'z' }
func word(c byte) bool       { return alnum(c) || c == '_' }
func hexDigit(c byte) bool   { return digit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
