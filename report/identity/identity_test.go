package identity

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

const digest = "sha256:4f1c2d1b7f8e3a9c0d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4"

func lookup(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want Image
	}{
		{"nothing", map[string]string{}, Image{}},
		{"tag and digest in the reference",
			map[string]string{EnvImage: "registry.example/train:2.3@" + digest},
			Image{Ref: "registry.example/train:2.3@" + digest, Digest: digest, From: "env"}},
		{"explicit digest wins over the reference's",
			map[string]string{EnvImage: "r/t:1@sha256:aaaa", EnvDigest: digest},
			Image{Ref: "r/t:1@sha256:aaaa", Digest: digest, From: "env"}},
		{"tag only: no digest", map[string]string{EnvImage: "r/t:1"}, Image{Ref: "r/t:1", From: "env"}},
		{"OCI label mirrors",
			map[string]string{EnvRevision: "0123abc", EnvCreated: "2026-11-01T10:00:00Z", EnvSource: "https://github.example/org/repo"},
			Image{Revision: "0123abc", Created: "2026-11-01T10:00:00Z", SourceURL: "https://github.example/org/repo", From: "env"}},
		{"source URL with a token loses it",
			map[string]string{EnvSource: "https://x-access-token:ghs_planted@github.example/org/repo"},
			Image{SourceURL: "https://[redacted]@github.example/org/repo", From: "env"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FromEnv(lookup(tt.env)); got != tt.want {
				t.Errorf("FromEnv = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestMergeRuntimeRefAndBakedBuildMetadata(t *testing.T) {
	baked := facts.Identity{Ref: "train:build", Revision: "baked-rev", Created: "2026-11-01T10:00:00Z", Source: "manifest"}
	env := Image{Ref: "registry.example/train:2.3@" + digest, Digest: digest, Revision: "env-rev", From: "env"}
	got := Merge(baked, env)
	want := Image{Ref: env.Ref, Digest: digest, Revision: "baked-rev", Created: baked.Created, From: "manifest+env"}
	if got != want {
		t.Errorf("Merge = %+v, want %+v", got, want)
	}
	if got := Merge(baked, Image{}); got.From != "manifest" || got.Ref != "train:build" {
		t.Errorf("Merge(baked, none) = %+v", got)
	}
	if got := Merge(facts.Identity{}, Image{}); got != (Image{}) {
		t.Errorf("Merge(none, none) = %+v, want empty", got)
	}
	if got := Merge(facts.Identity{}, Image{Revision: "r", From: "env"}); got.Revision != "r" || got.From != "env" {
		t.Errorf("env fills gaps: %+v", got)
	}
}
