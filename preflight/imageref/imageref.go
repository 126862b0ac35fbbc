// Package imageref reads a container image reference the way the container
// engines do, to tell whether it names one immutable image (a digest) or a
// tag that can move.
//
// The grammar is the distribution project's (github.com/distribution/
// reference, the parser Docker, containerd, podman and CRI-O share): a tag
// follows the last ':' after the last '/', so "registry:5000/train" has no
// tag, and a reference without one means ":latest".
package imageref

import (
	"fmt"

	"github.com/distribution/reference"
)

// Environment variables that carry the image reference as deployed and its
// manifest digest. Nothing in a container can learn them by itself (the
// Kubernetes downward API does not expose the image), so the deployer
// injects them.
const (
	EnvImage  = "PREFLIGHT_IMAGE"
	EnvDigest = "PREFLIGHT_IMAGE_DIGEST"
)

// DefaultTag is the tag a reference without one resolves to.
const DefaultTag = "latest"

// Ref is a parsed reference.
type Ref struct {
	// Name is the repository as written, "registry.example/team/train".
	Name string
	// Tag is the tag as written; "" when the reference has none (the
	// engine pulls DefaultTag).
	Tag string
	// Digest is the "@algorithm:hex" part without the '@'; "" when none.
	Digest string
}

// Parse reads ref ("name[:tag][@digest]").
func Parse(ref string) (Ref, error) {
	r, err := reference.Parse(ref)
	if err != nil {
		return Ref{}, fmt.Errorf("image reference %q: %w", ref, err)
	}
	var out Ref
	if n, ok := r.(reference.Named); ok {
		out.Name = n.Name()
	}
	if t, ok := r.(reference.Tagged); ok {
		out.Tag = t.Tag()
	}
	if d, ok := r.(reference.Digested); ok {
		out.Digest = d.Digest().String()
	}
	if out.Name == "" {
		return Ref{}, fmt.Errorf("image reference %q: no repository name", ref)
	}
	return out, nil
}

// Pinned reports whether the reference names one image: it carries a digest.
func (r Ref) Pinned() bool { return r.Digest != "" }

// Floating reports whether the reference follows whatever was pushed last:
// no digest and the tag "latest", written or implied.
func (r Ref) Floating() bool {
	return r.Digest == "" && (r.Tag == "" || r.Tag == DefaultTag)
}

// ValidDigest reports whether d is a digest as a reference carries it
// ("sha256:" and 64 lower-case hex digits, or another registered
// algorithm).
func ValidDigest(d string) bool {
	_, err := reference.Parse("x@" + d)
	return err == nil
}

// DigestOf returns the digest a reference carries, "name[:tag]@sha256:<hex>"
// giving "sha256:<hex>", or "" when it carries none or is not a reference:
// the grammar Parse and ValidDigest read, so a digest taken from a
// reference is always a valid one.
func DigestOf(ref string) string {
	r, err := Parse(ref)
	if err != nil {
		return ""
	}
	return r.Digest
}
