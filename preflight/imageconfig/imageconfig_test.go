package imageconfig

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The testdata files are real: podman 4.3's image inspect and save
// --format oci-dir of an image imported with three ENV lines, and runc
// 1.1's `runc spec`.
var wantImageEnv = []string{
	"NVIDIA_REQUIRE_CUDA=cuda>=12.8 brand=tesla,driver>=535,driver<536",
	"CUDA_VERSION=12.8.1",
	"NVIDIA_VISIBLE_DEVICES=all",
}

func TestEnvOfEveryForm(t *testing.T) {
	tests := []struct {
		path string
		form string
		want []string
	}{
		{"testdata/oci-layout", FormOCILayout, wantImageEnv},
		{"testdata/oci-image-config.json", FormImageConfig, wantImageEnv},
		{"testdata/podman-image-inspect.json", FormInspect, wantImageEnv},
		{"testdata/runc-spec-config.json", FormRuntimeConfig, []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			env, form, err := Env(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if form != tt.form || !slices.Equal(env, tt.want) {
				t.Errorf("Env = %q (%s), want %q (%s)", env, form, tt.want, tt.form)
			}
		})
	}
}

func TestEnvRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	twoImages, _ := os.ReadFile("testdata/podman-image-inspect.json")
	list := strings.TrimSpace(string(twoImages))
	list = list[:len(list)-1] + "," + list[1:]
	tests := []struct {
		name, path, want string
	}{
		{"NotJSON", write("a.json", "ENV CUDA_VERSION=12.8"), "not a JSON"},
		{"NoEnvironment", write("b.json", `{"architecture":"amd64"}`), "no environment in it"},
		{"TwoImages", write("c.json", list), "inspect output of 2 images"},
		{"EmptyInspect", write("d.json", "[]"), "no environment"},
		{"Missing", filepath.Join(dir, "none.json"), "no such file"},
		{"DirectoryWithoutIndex", t.TempDir(), "not an OCI image layout"},
		// Shapes that would decode into tens of MiB from a few.
		{"MillionVariables", write("e.json", `{"config":{"Env":[`+strings.Repeat(`"",`, 1_000_000)+`""]}}`), "more than 200000 values"},
		{"DeepNesting", write("f.json", strings.Repeat(`{"config":`, 100_000)), "nested more than 64 deep"},
		{"IndexOfManyManifests", layoutWithIndex(t, `{"manifests":[`+strings.Repeat(`{"digest":"sha256:x"},`, 200_000)+`{}]}`), "more than 200000 values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := Env(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Env(%s) error %v, want one containing %q", tt.name, err, tt.want)
			}
		})
	}
}

// layoutWithIndex is an OCI layout directory holding only index.json.
func layoutWithIndex(t *testing.T, index string) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.json"), []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A digest in index.json cannot send the reader outside blobs/.
func TestLayoutDigestStaysInBlobs(t *testing.T) {
	for _, d := range []string{"sha256:../../../etc/passwd", "../x", "sha256:", "..:..", "plain"} {
		if p := blobPath(d); !strings.HasPrefix(p, "blobs/") || strings.Contains(p, "..") {
			t.Errorf("blobPath(%q) = %q", d, p)
		}
	}
}

// Parse never panics and returns an environment only with a known form.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/oci-image-config.json", "testdata/podman-image-inspect.json", "testdata/runc-spec-config.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"Config":{"Env":["A=1"]}}`))
	f.Add([]byte(`[{"Config":null}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, form, err := Parse(data)
		if err == nil && form == "" {
			t.Fatalf("no form for %d variables", len(env))
		}
		if err != nil && env != nil {
			t.Fatal("an environment with an error")
		}
	})
}
