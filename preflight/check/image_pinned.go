package check

import (
	"fmt"

	"github.com/gpu-preflight/gpu-preflight/preflight/imageref"
)

// ImagePinned is the `image-pinned` check: the image reference the run was
// deployed from (facts.Container.Identity) names one image. "latest" or no
// tag, without a digest, follows the last push: the record cannot say which
// image ran (info). Another tag passes: tags are conventionally not moved.
var ImagePinned = Check{ID: "image-pinned", rule: imagePinned}

func imagePinned(in Input) Finding {
	f := Finding{}
	ref, digest := in.Facts.Container.Identity.Ref, in.Facts.Container.Identity.Digest
	if ref == "" {
		f.Status = Skip
		f.Message = "no image reference: set " + imageref.EnvImage + " to the reference the image was deployed from"
		return f
	}
	r, err := imageref.Parse(ref)
	if err != nil {
		f.Status = Info
		f.Message = fmt.Sprintf("%s=%q is not an image reference (%v), so whether the run is pinned cannot be told", imageref.EnvImage, ref, err)
		f.Remedy = "set " + imageref.EnvImage + " to the reference exactly as deployed, name[:tag]@sha256:<digest>"
		return f
	}
	switch {
	case r.Pinned():
		f.Status = Pass
		f.Message = fmt.Sprintf("image %s is pinned by digest", ref)
	case imageref.ValidDigest(digest):
		f.Status = Pass
		f.Message = fmt.Sprintf("image %s, digest %s from %s", ref, digest, imageref.EnvDigest)
	case r.Floating():
		tag := "no tag (so :latest)"
		if r.Tag != "" {
			tag = "the tag " + r.Tag
		}
		f.Status = Info
		f.Message = fmt.Sprintf("image %s has %s and no digest: it names whatever was pushed last, so this run cannot be reproduced or rolled back from its record", ref, tag)
		f.Remedy = fmt.Sprintf("deploy by digest: image: %s@sha256:<digest> (crane digest %s, skopeo inspect, or docker buildx imagetools inspect print it), and set %s to the same string",
			ref, ref, imageref.EnvImage)
	default:
		f.Status = Pass
		f.Message = fmt.Sprintf("image %s (tag %s, no digest: tags can be moved; @sha256:<digest> pins it)", ref, r.Tag)
	}
	return f
}
