package imageconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// copyLayout copies testdata/oci-layout to a fresh directory and returns it
// with the manifest's and the config's blob paths inside it.
func copyLayout(t *testing.T) (dir, manifest, config string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "layout")
	if err := os.CopyFS(dir, os.DirFS("testdata/oci-layout")); err != nil {
		t.Fatal(err)
	}
	var index struct{ Manifests []descriptor }
	b, _ := os.ReadFile(filepath.Join(dir, "index.json"))
	if err := json.Unmarshal(b, &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %v", err)
	}
	manifest = filepath.Join(dir, blobPath(index.Manifests[0].Digest))
	var m struct{ Config descriptor }
	b, _ = os.ReadFile(manifest)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return dir, manifest, filepath.Join(dir, blobPath(m.Config.Digest))
}

// envWithin calls Read and fails the test when it takes more than 5 s: a
// read blocked on a FIFO would hold the preflight before its deadline and
// its signal handlers exist.
func envWithin(t *testing.T, path string) ([]string, error) {
	t.Helper()
	type result struct {
		env []string
		err error
	}
	done := make(chan result, 1)
	go func() { im, err := Read(path); done <- result{im.Env, err} }()
	select {
	case r := <-done:
		return r.env, r.err
	case <-time.After(5 * time.Second):
		t.Fatalf("Read(%s) blocked", path)
		return nil, nil
	}
}

// TestHostileLayoutsAreRefusedAtOnce: what the attacks of the second round
// put in PREFLIGHT_IMAGE_CONFIG or inside a layout fails at once, with an
// error that says what it found, and reads nothing outside the layout.
func TestHostileLayoutsAreRefusedAtOnce(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside.json")
	if err := os.WriteFile(outside, []byte(`{"config":{"Env":["STOLEN=1"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, want string
		prepare    func(t *testing.T, dir, manifest, config string) string
	}{
		{"ConfigIsAFIFO", "a FIFO", func(t *testing.T, dir, _, _ string) string {
			p := filepath.Join(dir, "..", "fifo")
			mkfifo(t, p)
			return p
		}},
		{"ManifestBlobIsAFIFO", "a FIFO", func(t *testing.T, dir, manifest, _ string) string {
			os.Remove(manifest)
			mkfifo(t, manifest)
			return dir
		}},
		{"ConfigBlobLinksOutOfTheLayout", "out of the layout", func(t *testing.T, dir, _, config string) string {
			os.Remove(config)
			if err := os.Symlink(outside, config); err != nil {
				t.Fatal(err)
			}
			return dir
		}},
		{"BlobsDirectoryLinksOutOfTheLayout", "out of the layout", func(t *testing.T, dir, _, _ string) string {
			elsewhere := filepath.Join(dir, "..", "elsewhere")
			if err := os.Rename(filepath.Join(dir, "blobs"), elsewhere); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, filepath.Join(dir, "blobs")); err != nil {
				t.Fatal(err)
			}
			return dir
		}},
		{"ConfigOverTheBound", "over the", func(t *testing.T, dir, _, _ string) string {
			p := filepath.Join(dir, "..", "huge.json")
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(500 << 20); err != nil { // sparse
				t.Fatal(err)
			}
			return p
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, manifest, config := copyLayout(t)
			path := tt.prepare(t, dir, manifest, config)
			env, err := envWithin(t, path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Env: %q, %v; want an error that says %q", env, err, tt.want)
			}
		})
	}
}

// TestSymlinksInsideTheLayoutAndToItStillWork: a blob that links to
// another blob of the same layout is read (openat2 RESOLVE_BENEATH), and
// the path handed over may itself be a symlink, as a ConfigMap's file is.
func TestSymlinksInsideTheLayoutAndToItStillWork(t *testing.T) {
	dir, _, config := copyLayout(t)
	moved := filepath.Join(dir, "blobs", "sha256", "moved")
	if err := os.Rename(config, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("moved", config); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "config-link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	env, err := envWithin(t, link)
	if err != nil || !slices.Equal(env, wantImageEnv) {
		t.Errorf("Env through symlinks inside the layout: %q, %v", env, err)
	}
}

// TestWithoutOpenat2NoSymlinkIsFollowed: the fallback for kernels without
// openat2 follows no symlink at all, inside the layout or out of it.
func TestWithoutOpenat2NoSymlinkIsFollowed(t *testing.T) {
	dir, _, config := copyLayout(t)
	os.Remove(config)
	if err := os.Symlink(filepath.Join(dir, "index.json"), config); err != nil {
		t.Fatal(err)
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	rel, _ := filepath.Rel(dir, config)
	if fd, err := openNoFollow(dfd, rel); err == nil {
		unix.Close(fd)
		t.Error("openNoFollow followed a symlink")
	}
	fd, err := openNoFollow(dfd, "index.json")
	if err != nil {
		t.Fatalf("openNoFollow of a plain file: %v", err)
	}
	unix.Close(fd)
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}
