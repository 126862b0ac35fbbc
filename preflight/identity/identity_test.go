package identity

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

const digest = "sha256:4f1c2d1b7f8e3a9c0d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4"

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		want    facts.Identity
	}{
		{"nothing", nil, facts.Identity{}},
		{"tag and digest in the reference",
			[]string{EnvImage + "=registry.example/train:2.3@" + digest},
			facts.Identity{Ref: "registry.example/train:2.3@" + digest, Digest: digest, From: "env", Pinned: true}},
		{"explicit digest wins over the reference's",
			[]string{EnvImage + "=r/t:1@sha256:aaaa", EnvDigest + "=" + digest},
			facts.Identity{Ref: "r/t:1@sha256:aaaa", Digest: digest, From: "env", Pinned: true}},
		{"a digest that is not one pins nothing", []string{EnvDigest + "=sha256:aaaa"}, facts.Identity{Digest: "sha256:aaaa", From: "env"}},
		{"tag only: no digest", []string{EnvImage + "=r/t:1"}, facts.Identity{Ref: "r/t:1", From: "env"}},
		{"surrounding space is not part of a value", []string{EnvImage + "= r/t:1 \n"}, facts.Identity{Ref: "r/t:1", From: "env"}},
		{"OCI label mirrors",
			[]string{EnvRevision + "=0123abc", EnvCreated + "=2026-11-01T10:00:00Z", EnvSource + "=https://github.example/org/repo"},
			facts.Identity{Revision: "0123abc", Created: "2026-11-01T10:00:00Z", SourceURL: "https://github.example/org/repo", From: "env"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FromEnv(envvars.Parse(tt.environ)); got != tt.want {
				t.Errorf("FromEnv = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestEveryIdentityVariableIsARowOfTheTable: the variables FromEnv reads
// are read from the container's environment, so envvars.Read lists them
// (what the container facts and the record keep derive from that table).
func TestEveryIdentityVariableIsARowOfTheTable(t *testing.T) {
	for _, name := range []string{EnvImage, EnvDigest, EnvRevision, EnvCreated, EnvSource} {
		if !envvars.IsRead(name) {
			t.Errorf("%s is read by identity.FromEnv but is no row of envvars.Read", name)
		}
	}
}
