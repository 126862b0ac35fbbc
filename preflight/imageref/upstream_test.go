package imageref

import (
	// go-digest accepts an algorithm only when its hash is linked in.
	_ "crypto/sha256"
	_ "crypto/sha512"
	"os/exec"
	"strings"
	"testing"

	"github.com/distribution/reference"
)

// upstream is what github.com/distribution/reference makes of ref, the
// parser the engines use: Parse's answer must be the same.
func upstream(ref string) (Ref, bool) {
	r, err := reference.Parse(ref)
	if err != nil {
		return Ref{}, false
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
	return out, out.Name != ""
}

// agreementSeeds are references an engine accepts and near misses of each
// rule of the grammar, for the test and as the fuzz target's seeds.
var agreementSeeds = func() []string {
	hex64 := strings.Repeat("4f1c", 16)
	seeds := []string{
		"train", "train:latest", "train:2.3", "train@sha256:" + hex64, "train:2.3@sha256:" + hex64,
		"registry.example/team/train", "registry.example:5000/train:12.4-cudnn9", "localhost/train:v1",
		"nvcr.io/nvidia/pytorch:24.05-py3", "train:LATEST", "Train:1", "train:", ":latest", "train:a b", "",
		"a/b/c/d", "a.b/c", "a_b", "a__b", "a___b", "a-b", "a---b", "a._b", "a.", ".a", "a..b", "-a", "a-", "_a",
		"A/b", "a/B", "Registry.Example/train", "registry-.example/train", "-registry.example/train",
		"registry..example/train", "registry.example:/train", "registry.example:port/train", "registry.example:5000",
		"localhost:5000", "[::1]/train", "[::1]:5000/train:t", "[fe80::1%eth0]/train", "[]/train", "[::1/train",
		"a:b:c", "a:b/c", "a/b:c:d", "a@b", "a@sha256:" + hex64 + "@x", "a@SHA256:" + hex64,
		"a@sha256:" + strings.ToUpper(hex64), "a@sha256:" + hex64[:63], "a@sha256:" + hex64 + "0",
		"a@sha384:" + strings.Repeat("ab", 48), "a@sha512:" + strings.Repeat("ab", 64), "a@md5:" + hex64[:32],
		"a@sha256+b64:" + hex64, "a@s-:" + hex64, "a@:" + hex64, "a:" + strings.Repeat("t", 128),
		"a:" + strings.Repeat("t", 129), "a:_t", "a:.t", "a:-t", "a:t.-_", strings.Repeat("a", 255),
		strings.Repeat("a", 256), "d.example/" + strings.Repeat("a", 255), "d.example/" + strings.Repeat("a", 256),
		"a/" + strings.Repeat("b", 254), "a/" + strings.Repeat("b", 256), "x/y@sha256:" + hex64, "@sha256:" + hex64, "sha256:" + hex64, "sha512:" + strings.Repeat("ab", 64),
		"a/\xff", "a\x00b", "a/b/", "/a", "a//b",
	}
	return seeds
}()

// Parse accepts what the engines' parser accepts, and reads the same name,
// tag and digest from it; ValidDigest accepts the digests it accepts.
func TestParseAgreesWithDistributionReference(t *testing.T) {
	for _, ref := range agreementSeeds {
		agree(t, ref)
	}
}

func FuzzParseAgreesWithDistributionReference(f *testing.F) {
	for _, s := range agreementSeeds {
		f.Add(s)
	}
	f.Fuzz(agree)
}

func agree(t *testing.T, ref string) {
	want, ok := upstream(ref)
	got, err := Parse(ref)
	switch {
	case ok && err != nil:
		t.Errorf("Parse(%q): %v; distribution/reference reads %+v", ref, err, want)
	case !ok && err == nil:
		t.Errorf("Parse(%q) = %+v; distribution/reference rejects it", ref, got)
	case ok && got != want:
		t.Errorf("Parse(%q) = %+v; distribution/reference reads %+v", ref, got, want)
	}
	// The input as a digest: ValidDigest says what the engines' parser
	// says of "x@" and it.
	if _, ok := upstream("x@" + ref); ok != ValidDigest(ref) {
		t.Errorf("ValidDigest(%q) = %v; distribution/reference: %v", ref, !ok, ok)
	}
}

// The library is the tests' oracle, not part of gpu-preflight: linked in,
// its package initialisation would compile its regular expressions on every
// start.
func TestShimDoesNotLinkTheReferenceLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/gpu-preflight/gpu-preflight/cmd/gpu-preflight").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "github.com/gpu-preflight/gpu-preflight/preflight/imageref\n") {
		t.Fatalf("go list did not list the shim's packages:\n%s", out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/distribution/") || strings.HasPrefix(pkg, "github.com/opencontainers/go-digest") {
			t.Errorf("gpu-preflight links %s; keep it in the tests", pkg)
		}
	}
}
