// Package identity says which image a run used, from the container's
// environment.
//
// A container cannot learn its own image digest: the manifest digest is a
// hash of the image, so it cannot be baked into it, and the Kubernetes
// downward API does not expose the image or imageID (kubernetes/kubernetes
// issues 80346 and 19475; docs/sources.md, "Provenance conventions"). So the
// identity is what two parties put in the container's environment:
//
//   - Build time (ENV in the Dockerfile, mirrored from the OCI LABELs
//     org.opencontainers.image.{revision,created,source}):
//     PREFLIGHT_IMAGE_REVISION, PREFLIGHT_IMAGE_CREATED, PREFLIGHT_IMAGE_SOURCE.
//
//   - Run time (injected by whoever deploys the image): PREFLIGHT_IMAGE, the
//     reference exactly as deployed, best pinned as "name:tag@sha256:<hex>",
//     and PREFLIGHT_IMAGE_DIGEST, the manifest digest "sha256:<hex>". Deploy
//     by digest and set the same string in both places, e.g. in a pod spec:
//
//     image: registry.example/train:2.3@sha256:4f1c...
//     env:
//
//   - {name: PREFLIGHT_IMAGE, value: "registry.example/train:2.3@sha256:4f1c..."}
//
//     When PREFLIGHT_IMAGE carries "@<digest>" and PREFLIGHT_IMAGE_DIGEST is
//     unset, the digest is taken from the reference (imageref.DigestOf).
//
// The container's environment is the process's inside the container, and
// the image's (its config or OCI bundle) under --root: the `image-pinned`
// check and the record's image identity both read the one facts.Identity
// FromEnv makes, so they cannot disagree.
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

// FromEnv reads the identity variables, trimmed of surrounding space. The
// values are raw: the record redacts them as it copies them (a source URL
// with a token in its user-info is recorded without it).
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
