// Package identity says which image a run used, from the container's
// environment. A container cannot learn its own digest (docs/sources.md,
// "Provenance conventions"), so the identity is what the build (ENV mirroring
// the OCI labels) and the deployer (PREFLIGHT_IMAGE, PREFLIGHT_IMAGE_DIGEST)
// put there; docs/schema/README.md shows how. `image-pinned` and the record
// both read the one facts.Identity FromEnv makes.
package identity

import (
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/imageref"
)

// Environment variables read by FromEnv; each is a row of envvars.Read.
const (
	EnvImage    = imageref.EnvImage
	EnvDigest   = imageref.EnvDigest
	EnvRevision = "PREFLIGHT_IMAGE_REVISION" // LABEL org.opencontainers.image.revision
	EnvCreated  = "PREFLIGHT_IMAGE_CREATED"  // LABEL org.opencontainers.image.created (RFC 3339)
	EnvSource   = "PREFLIGHT_IMAGE_SOURCE"   // LABEL org.opencontainers.image.source (repository URL)
)

// FromEnv reads the identity variables, trimmed; the record redacts them as
// it copies them (a token in a source URL's user-info).
func FromEnv(env envvars.Env) facts.Identity {
	v := func(name string) string { s, _ := env.Lookup(name); return strings.TrimSpace(s) }
	im := facts.Identity{
		Ref:       v(EnvImage),
		Digest:    v(EnvDigest),
		Revision:  v(EnvRevision),
		Created:   v(EnvCreated),
		SourceURL: v(EnvSource),
	}
	if im.Digest == "" {
		im.Digest = imageref.DigestOf(im.Ref)
	}
	if im != (facts.Identity{}) {
		im.From = FromEnvironment
	}
	im.Pinned = imageref.ValidDigest(im.Digest)
	return im
}

// FromEnvironment is facts.Identity.From when any variable was set.
const FromEnvironment = "env"
