package imageref

import (
	"strings"
	"testing"
)

const sha = "sha256:4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c"

// The reference forms an engine accepts, and what each pins.
func TestReferenceForms(t *testing.T) {
	for _, tt := range []struct {
		ref               string
		name, tag, digest string
		pinned, floating  bool
	}{
		{"train", "train", "", "", false, true},
		{"train:latest", "train", "latest", "", false, true},
		{"train:2.3", "train", "2.3", "", false, false},
		{"train@" + sha, "train", "", sha, true, false},
		{"train:latest@" + sha, "train", "latest", sha, true, false},
		{"train:2.3@" + sha, "train", "2.3", sha, true, false},
		{"registry.example/team/train", "registry.example/team/train", "", "", false, true},
		// A port is not a tag: the tag follows the last ':' after the last '/'.
		{"registry.example:5000/train", "registry.example:5000/train", "", "", false, true},
		{"registry.example:5000/train:latest", "registry.example:5000/train", "latest", "", false, true},
		{"registry.example:5000/train:12.4-cudnn9", "registry.example:5000/train", "12.4-cudnn9", "", false, false},
		{"localhost/train:v1@" + sha, "localhost/train", "v1", sha, true, false},
		{"nvcr.io/nvidia/pytorch:24.05-py3", "nvcr.io/nvidia/pytorch", "24.05-py3", "", false, false},
		// "LATEST" is a different tag: tags are case-sensitive.
		{"train:LATEST", "train", "LATEST", "", false, false},
	} {
		r, err := Parse(tt.ref)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.ref, err)
			continue
		}
		if r.Name != tt.name || r.Tag != tt.tag || r.Digest != tt.digest || r.Pinned() != tt.pinned || r.Floating() != tt.floating {
			t.Errorf("Parse(%q) = %+v pinned=%v floating=%v; want %s %q %q pinned=%v floating=%v",
				tt.ref, r, r.Pinned(), r.Floating(), tt.name, tt.tag, tt.digest, tt.pinned, tt.floating)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, ref := range []string{"", "Train:1", "train:", "train@sha256:abc", ":latest", "train:a b"} {
		if r, err := Parse(ref); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", ref, r)
		}
	}
}

func TestValidDigest(t *testing.T) {
	for d, want := range map[string]bool{sha: true, "sha256:abc": false, "": false, "md5": false} {
		if got := ValidDigest(d); got != want {
			t.Errorf("ValidDigest(%q) = %v, want %v", d, got, want)
		}
	}
}

// The digest a reference carries is read by the reference grammar, so only
// a valid digest is taken from it.
func TestDigestOfTakesOnlyAValidDigestFromAReference(t *testing.T) {
	tests := []struct{ ref, want string }{
		{"r/t:1@" + sha, sha},
		{"r/t@" + sha, sha},
		{"registry.example:5000/train:2.3@" + sha, sha},
		{"r/t:1", ""},
		{"r/t:1@", ""},
		{"r/t:1@sha256:", ""},
		{"r/t:1@sha256:abc", ""}, // too short for sha256
		{"Train:1@" + sha, ""},   // not a reference: no repository name in capitals
		{"", ""},
	}
	for _, tt := range tests {
		if got := DigestOf(tt.ref); got != tt.want {
			t.Errorf("DigestOf(%q) = %q, want %q", tt.ref, got, tt.want)
		}
	}
}

func FuzzDigestOf(f *testing.F) {
	for _, s := range []string{"registry.example/train:2.3@" + sha, "r/t:1", "@", "@:", "a@b:c@sha256:x", "nvcr.io/nvidia/pytorch:24.01-py3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		d := DigestOf(ref)
		if d == "" {
			return
		}
		if !ValidDigest(d) || !strings.HasSuffix(ref, "@"+d) || strings.Contains(d, "@") {
			t.Errorf("DigestOf(%q) = %q", ref, d)
		}
	})
}
