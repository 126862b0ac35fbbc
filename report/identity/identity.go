// Package identity says which image a run used.
//
// A container cannot learn its own image digest: the manifest digest is a
// hash of the image, so it cannot be baked into it, and the Kubernetes
// downward API does not expose the image or imageID (kubernetes/kubernetes
// issues 80346 and 19475; docs/sources.md, "Provenance conventions"). gpu-preflight
// therefore takes identity from two places:
//
//   - Build time (baked into the image, mirrored from the OCI LABELs
//     org.opencontainers.image.{revision,created,source}):
//     PREFLIGHT_IMAGE_REVISION, PREFLIGHT_IMAGE_CREATED, PREFLIGHT_IMAGE_SOURCE,
//     or the image manifest that `gpu-preflight bake` writes.
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
package identity

import (
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/imageref"
	"github.com/gpu-preflight/gpu-preflight/report/redact"
)

// Environment variables read by FromEnv.
const (
	EnvImage    = imageref.EnvImage
	EnvDigest   = imageref.EnvDigest
	EnvRevision = "PREFLIGHT_IMAGE_REVISION" // LABEL org.opencontainers.image.revision
	EnvCreated  = "PREFLIGHT_IMAGE_CREATED"  // LABEL org.opencontainers.image.created (RFC 3339)
	EnvSource   = "PREFLIGHT_IMAGE_SOURCE"   // LABEL org.opencontainers.image.source (repository URL)
)

// Image is the image identity in a provenance record.
type Image struct {
	Ref      string
	Digest   string
	Revision string
	Created  string
	// SourceURL is the source repository (org.opencontainers.image.source).
	SourceURL string
	// From says where the identity came from: "env", "manifest", a gatherer's
	// own word, or "manifest+env" when both contributed; "" when nothing did.
	From string
}

// FromEnv reads the identity variables. Values pass through
// redact.Value: a source URL with a token in its user-info is recorded
// without it.
func FromEnv(get func(string) (string, bool)) Image {
	v := func(name string) string { s, _ := get(name); return redact.Value(strings.TrimSpace(s)) }
	im := Image{
		Ref:       v(EnvImage),
		Digest:    v(EnvDigest),
		Revision:  v(EnvRevision),
		Created:   v(EnvCreated),
		SourceURL: v(EnvSource),
	}
	if im.Digest == "" {
		im.Digest = imageref.DigestOf(im.Ref)
	}
	if im != (Image{}) {
		im.From = "env"
	}
	return im
}

// Merge combines what a gatherer found (facts: the baked manifest) with the
// environment. The reference and digest describe the deployment, so the
// run-time variables win; revision, created and source describe the build,
// so the baked facts win and the variables only fill gaps.
func Merge(baked facts.Identity, env Image) Image {
	out := Image{
		Ref:      pick(env.Ref, baked.Ref),
		Digest:   pick(env.Digest, baked.Digest),
		Revision: pick(baked.Revision, env.Revision),
		Created:  pick(baked.Created, env.Created),
	}
	out.SourceURL = env.SourceURL
	if out.Digest == "" {
		out.Digest = imageref.DigestOf(out.Ref)
	}
	bakedAny := baked.Ref != "" || baked.Digest != "" || baked.Revision != "" || baked.Created != ""
	switch {
	case bakedAny && env.From != "":
		out.From = pick(baked.Source, "manifest") + "+env"
	case bakedAny:
		out.From = pick(baked.Source, "manifest")
	default:
		out.From = env.From
	}
	return out
}

func pick(first, second string) string {
	if first != "" {
		return first
	}
	return second
}
