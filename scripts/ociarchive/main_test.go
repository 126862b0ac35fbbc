package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// readLayout reads an archive back: file name to contents.
func readLayout(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(epoch) {
			t.Errorf("%s: uid %d gid %d mtime %v, want 0, 0, the epoch", h.Name, h.Uid, h.Gid, h.ModTime)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = body
	}
}

// blob returns the blob a descriptor names, checking its digest and size.
func blob(t *testing.T, files map[string][]byte, d descriptor) []byte {
	t.Helper()
	b, ok := files["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
	if !ok {
		t.Fatalf("no blob for %s", d.Digest)
	}
	sum := sha256.Sum256(b)
	if "sha256:"+hex.EncodeToString(sum[:]) != d.Digest || int64(len(b)) != d.Size {
		t.Fatalf("blob %s: digest or size (%d, want %d) does not match", d.Digest, len(b), d.Size)
	}
	return b
}

func TestArchiveIsTheSameBytesEveryTime(t *testing.T) {
	bins := map[string][]byte{"amd64": []byte("amd64 binary"), "arm64": []byte("arm64 binary")}
	var a, b bytes.Buffer
	if err := write(&a, "gpu-preflight:v1.2.3", bins); err != nil {
		t.Fatal(err)
	}
	// Another map, filled in the other order.
	if err := write(&b, "gpu-preflight:v1.2.3", map[string][]byte{"arm64": bins["arm64"], "amd64": bins["amd64"]}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two archives of the same binaries differ")
	}
}

// TestLayoutNamesOneIndexOfEachPlatformsImage walks the layout from
// index.json to each platform's binary, checking every digest on the way.
func TestLayoutNamesOneIndexOfEachPlatformsImage(t *testing.T) {
	bins := map[string][]byte{"amd64": []byte("amd64 binary"), "arm64": []byte("arm64 binary")}
	var buf bytes.Buffer
	if err := write(&buf, "gpu-preflight:v1.2.3", bins); err != nil {
		t.Fatal(err)
	}
	files := readLayout(t, buf.Bytes())
	if string(files["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout = %q", files["oci-layout"])
	}
	type index struct {
		MediaType string       `json:"mediaType"`
		Manifests []descriptor `json:"manifests"`
	}
	var top index
	if err := json.Unmarshal(files["index.json"], &top); err != nil {
		t.Fatal(err)
	}
	if len(top.Manifests) != 1 || top.Manifests[0].Annotations[refAnnotation] != "gpu-preflight:v1.2.3" || top.Manifests[0].MediaType != mediaIndex {
		t.Fatalf("index.json names %+v, want one image index tagged gpu-preflight:v1.2.3", top.Manifests)
	}
	var idx index
	if err := json.Unmarshal(blob(t, files, top.Manifests[0]), &idx); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range idx.Manifests {
		if m.Platform == nil || m.Platform.OS != "linux" || m.MediaType != mediaManifest {
			t.Fatalf("manifest descriptor %+v", m)
		}
		arch := m.Platform.Architecture
		seen[arch] = true
		var man struct {
			Config descriptor   `json:"config"`
			Layers []descriptor `json:"layers"`
		}
		if err := json.Unmarshal(blob(t, files, m), &man); err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			Architecture string `json:"architecture"`
			Config       struct{ Entrypoint []string }
			RootFS       struct {
				DiffIDs []string `json:"diff_ids"`
			} `json:"rootfs"`
		}
		if err := json.Unmarshal(blob(t, files, man.Config), &cfg); err != nil {
			t.Fatal(err)
		}
		if cfg.Architecture != arch || len(man.Layers) != 1 || len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != man.Layers[0].Digest {
			t.Errorf("%s: config %+v, layers %+v", arch, cfg, man.Layers)
		}
		if len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/"+binPath {
			t.Errorf("%s: entrypoint %q", arch, cfg.Config.Entrypoint)
		}
		layer := readLayout(t, blob(t, files, man.Layers[0]))
		if !bytes.Equal(layer[binPath], bins[arch]) {
			t.Errorf("%s: the layer's %s is %q", arch, binPath, layer[binPath])
		}
	}
	if !seen["amd64"] || !seen["arm64"] || len(seen) != 2 {
		t.Errorf("platforms %v, want amd64 and arm64", seen)
	}
}

func TestRefMustBeATag(t *testing.T) {
	for _, ref := range []string{"", "a b"} {
		if err := write(io.Discard, ref, map[string][]byte{"amd64": nil}); err == nil {
			t.Errorf("ref %q accepted", ref)
		}
	}
}
