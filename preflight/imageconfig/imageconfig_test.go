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
			im, err := Read(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if im.Form != tt.form || !slices.Equal(im.Env, tt.want) {
				t.Errorf("Read = %q (%s), want %q (%s)", im.Env, im.Form, tt.want, tt.form)
			}
		})
	}
}

// The *.Containerfile images, built by buildah 1.28 (`buildah bud --format
// oci`), give the other fixtures: the config blob `buildah push IMAGE
// oci:DIR` writes, `podman image inspect`, and umoci 0.4.7's `umoci unpack`
// bundle config.json. The argv is Entrypoint followed by Cmd, Cmd alone
// without an Entrypoint, a runtime config's process.args as they are (OCI
// image-spec config.md and conversion.md); the working directory is
// WorkingDir or process.cwd, "/" when unset.
func TestCommandIsEntrypointThenCmdInItsWorkingDirectory(t *testing.T) {
	const (
		both     = "the image config's Entrypoint and Cmd"
		cmdAlone = "the image config's Cmd"
		args     = "the runtime config's process.args"
	)
	train := []string{"/opt/venv/bin/python", "train.py", "--epochs", "1"}
	tests := []struct {
		path    string
		command []string
		from    string
		workDir string
	}{
		{"testdata/buildah-entrypoint-config.json", train, both, "/app"},
		{"testdata/podman-inspect-entrypoint.json", train, both, "/app"},
		{"testdata/umoci-entrypoint-config.json", train, args, "/app"},
		{"testdata/podman-inspect-preflight.json", []string{"/usr/local/bin/gpu-preflight", "--", "python", "train.py"}, both, "/workspace"},
		{"testdata/buildah-cmd-config.json", []string{"./train.py"}, cmdAlone, "/app"},
		{"testdata/umoci-cmd-config.json", []string{"./train.py"}, args, "/app"},
		{"testdata/oci-image-config.json", nil, "", "/"},
		{"testdata/runc-spec-config.json", []string{"sh"}, args, "/"},
		{"testdata/oci-layout", nil, "", "/"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			im, err := Read(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(im.Command, tt.command) || im.CommandFrom != tt.from || im.WorkDir != tt.workDir {
				t.Errorf("Read = command %q from %q in %q, want %q from %q in %q", im.Command, im.CommandFrom, im.WorkDir, tt.command, tt.from, tt.workDir)
			}
		})
	}
}

// Docker's strslice.StrSlice reads Entrypoint and Cmd from one string as a
// one-word list, and an Entrypoint alone is the whole argv.
func TestEntrypointOfOneStringIsOneWord(t *testing.T) {
	im, err := Parse([]byte(`{"config":{"Entrypoint":"/usr/local/bin/train","Cmd":null,"WorkingDir":"app"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(im.Command, []string{"/usr/local/bin/train"}) || im.CommandFrom != "the image config's Entrypoint" || im.WorkDir != "/app" {
		t.Errorf("Parse = %q from %q in %q", im.Command, im.CommandFrom, im.WorkDir)
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
		{"CmdOfNumbers", write("g.json", `{"config":{"Cmd":[1,2]}}`), "cannot unmarshal number"},
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
			if _, err := Read(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read(%s) error %v, want one containing %q", tt.name, err, tt.want)
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

// Parse never panics and returns an image only with a known form.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/oci-image-config.json", "testdata/podman-image-inspect.json", "testdata/runc-spec-config.json",
		"testdata/buildah-entrypoint-config.json", "testdata/podman-inspect-preflight.json", "testdata/umoci-cmd-config.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"Config":{"Env":["A=1"],"Entrypoint":"x"}}`))
	f.Add([]byte(`[{"Config":null}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		im, err := Parse(data)
		if err == nil && (im.Form == "" || !strings.HasPrefix(im.WorkDir, "/") || (im.Command == nil) != (im.CommandFrom == "")) {
			t.Fatalf("Parse = %+v", im)
		}
		if err != nil && (im.Env != nil || im.Command != nil) {
			t.Fatal("an image with an error")
		}
	})
}
