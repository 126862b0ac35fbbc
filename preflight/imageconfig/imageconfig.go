// Package imageconfig reads an image's environment from its configuration,
// in the forms the tools that store, unpack and inspect images write:
//
//   - an OCI image layout directory (skopeo copy oci:DIR, podman save
//     --format oci-dir): index.json names the manifest, the manifest the
//     config blob, whose config.Env is the environment;
//   - an OCI image config blob on its own (the same JSON, "config": {"Env"});
//   - an OCI runtime bundle's config.json (umoci unpack, runc spec):
//     "process": {"env"};
//   - docker image inspect / podman image inspect output: a JSON array whose
//     first object has "Config": {"Env"}.
//
// An unpacked image's NVIDIA_REQUIRE_* and CUDA_VERSION are set by its
// Dockerfile's ENV, which lives in the config, not in any file of the root
// filesystem: a check of an unpacked root needs one of these to know them.
package imageconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonbound"
)

// maxJSON bounds every file read: image configs and manifests are a few KiB
// (an inspect of an image with a long history some tens).
const maxJSON = 8 << 20

// limits bound every document's shape as maxJSON its size: an Env of a
// million empty strings would decode into 16 MiB of string headers.
var limits = jsonbound.Limits{Bytes: maxJSON, Depth: 64, Values: 200_000}

// Forms of configuration Env understands, as it names them.
const (
	FormOCILayout     = "OCI image layout"
	FormImageConfig   = "OCI image config"
	FormRuntimeConfig = "OCI runtime config"
	FormInspect       = "image inspect output"
)

// Env returns the environment, as KEY=VALUE strings, of the image whose
// configuration is at path (a file, or an OCI image layout directory), and
// the form it was read in.
func Env(path string) (env []string, form string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", fmt.Errorf("image config: %w", err)
	}
	if st.IsDir() {
		env, err := layoutEnv(path)
		if err != nil {
			return nil, "", fmt.Errorf("image config %s: %w", path, err)
		}
		return env, FormOCILayout, nil
	}
	data, err := readMax(path)
	if err != nil {
		return nil, "", fmt.Errorf("image config: %w", err)
	}
	env, form, err = Parse(data)
	if err != nil {
		return nil, "", fmt.Errorf("image config %s: %w", path, err)
	}
	return env, form, nil
}

// config holds the fields of every accepted file form.
type config struct {
	Config *struct {
		Env []string `json:"Env"`
	} `json:"config"`
	Process *struct {
		Env []string `json:"env"`
	} `json:"process"`
}

type inspected struct {
	Config *struct {
		Env []string `json:"Env"`
	} `json:"Config"`
}

var errNoEnv = errors.New(`no environment in it: want an OCI image config ("config": {"Env": [...]}), an OCI runtime config ("process": {"env": [...]}), docker/podman image inspect output, or an OCI image layout directory`)

// Parse reads the environment from one configuration file's contents.
func Parse(data []byte) (env []string, form string, err error) {
	if err := jsonbound.Check(data, limits); err != nil {
		return nil, "", err
	}
	if bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("[")) {
		var list []inspected
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, "", fmt.Errorf("not JSON image inspect output: %w", err)
		}
		if len(list) == 0 || list[0].Config == nil {
			return nil, "", errNoEnv
		}
		if len(list) > 1 {
			return nil, "", fmt.Errorf("inspect output of %d images: inspect the one image to check", len(list))
		}
		return list[0].Config.Env, FormInspect, nil
	}
	var c config
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, "", fmt.Errorf("not a JSON image or runtime config: %w", err)
	}
	switch {
	case c.Process != nil:
		return c.Process.Env, FormRuntimeConfig, nil
	case c.Config != nil:
		return c.Config.Env, FormImageConfig, nil
	}
	// docker inspect of one image without the surrounding array.
	var one inspected
	if json.Unmarshal(data, &one) == nil && one.Config != nil {
		return one.Config.Env, FormInspect, nil
	}
	return nil, "", errNoEnv
}

// layoutEnv follows an OCI image layout from index.json to the config blob.
// The layout must hold exactly one image manifest, so that the check cannot
// silently read another platform's or tag's config.
func layoutEnv(dir string) ([]string, error) {
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := readJSON(filepath.Join(dir, "index.json"), &index); err != nil {
		return nil, fmt.Errorf("not an OCI image layout: %w", err)
	}
	if len(index.Manifests) != 1 {
		return nil, fmt.Errorf("index.json lists %d manifests: copy the one image to check into its own layout", len(index.Manifests))
	}
	var manifest struct {
		Config descriptor `json:"config"`
	}
	if err := readJSON(blobPath(dir, index.Manifests[0].Digest), &manifest); err != nil {
		return nil, fmt.Errorf("its manifest: %w", err)
	}
	data, err := readMax(blobPath(dir, manifest.Config.Digest))
	if err != nil {
		return nil, fmt.Errorf("its config: %w", err)
	}
	env, form, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("its config: %w", err)
	}
	if form != FormImageConfig {
		return nil, fmt.Errorf("its config blob is %s, not an OCI image config", form)
	}
	return env, nil
}

type descriptor struct {
	Digest string `json:"digest"`
}

// blobPath is blobs/<algorithm>/<hex> of a digest; a digest that could
// leave the blobs directory names a file that does not exist.
func blobPath(dir, digest string) string {
	alg, hex, ok := strings.Cut(digest, ":")
	if !ok || alg == "" || hex == "" || strings.ContainsAny(digest, "/\\") || alg == ".." || hex == ".." {
		return filepath.Join(dir, "blobs", "invalid-digest")
	}
	return filepath.Join(dir, "blobs", alg, hex)
}

func readJSON(path string, v any) error {
	data, err := readMax(path)
	if err != nil {
		return err
	}
	if err := jsonbound.Unmarshal(data, v, limits); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return nil
}

// readMax reads a regular file of at most maxJSON bytes.
func readMax(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxJSON+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxJSON {
		return nil, fmt.Errorf("%s is larger than %d bytes: not an image config", path, maxJSON)
	}
	return data, nil
}
