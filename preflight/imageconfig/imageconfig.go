// Package imageconfig reads an image's environment from its configuration:
// an OCI image layout directory (skopeo copy oci:DIR), a config blob, a
// runtime bundle's config.json (umoci unpack) or `docker image inspect`
// output. An unpacked root needs one: its Dockerfile's ENV, NVIDIA_REQUIRE_*
// and CUDA_VERSION included, lives in the config, not in any file.
package imageconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonbound"
	"github.com/gpu-preflight/gpu-preflight/internal/safefile"
)

// maxJSON bounds every file read: configs and manifests are a few KiB.
const maxJSON = 8 << 20

// limits bound every document's shape: an Env of a million empty strings
// would decode into 16 MiB of string headers.
var limits = jsonbound.Limits{Bytes: maxJSON, Depth: 64, Values: 200_000}

// Forms of configuration Env understands, as it names them.
const (
	FormOCILayout     = "OCI image layout"
	FormImageConfig   = "OCI image config"
	FormRuntimeConfig = "OCI runtime config"
	FormInspect       = "image inspect output"
)

// Env returns the environment, as KEY=VALUE strings, of the image whose
// configuration is at path (a file or an OCI layout directory), and its form.
// No read can block or grow without bound: path is opened O_NONBLOCK and
// must be a regular file or directory, every file is read up to maxJSON,
// and no name in a layout is followed out of it. path itself may be a
// symlink (a ConfigMap's file links into its ..data directory).
func Env(path string) (env []string, form string, err error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", fmt.Errorf("image config: %w", &os.PathError{Op: "open", Path: path, Err: err})
	}
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, "", fmt.Errorf("image config: %w", err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		defer f.Close()
		env, err := layoutEnv(fd)
		if err != nil {
			return nil, "", fmt.Errorf("image config %s: %w", path, err)
		}
		return env, FormOCILayout, nil
	}
	data, err := safefile.ReadOpen(f, maxJSON)
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

// layoutEnv follows an OCI layout from index.json to the config blob; it
// must hold exactly one manifest, so no other platform's config is read.
func layoutEnv(dir int) ([]string, error) {
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := readJSON(dir, "index.json", &index); err != nil {
		return nil, fmt.Errorf("not an OCI image layout: %w", err)
	}
	if len(index.Manifests) != 1 {
		return nil, fmt.Errorf("index.json lists %d manifests: copy the one image to check into its own layout", len(index.Manifests))
	}
	var manifest struct {
		Config descriptor `json:"config"`
	}
	if err := readJSON(dir, blobPath(index.Manifests[0].Digest), &manifest); err != nil {
		return nil, fmt.Errorf("its manifest: %w", err)
	}
	data, err := readBeneath(dir, blobPath(manifest.Config.Digest))
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

// blobPath is blobs/<algorithm>/<hex> of a digest; one that could leave the
// blobs directory names a file that does not exist.
func blobPath(digest string) string {
	alg, hex, ok := strings.Cut(digest, ":")
	if !ok || alg == "" || hex == "" || strings.ContainsAny(digest, "/\\") || alg == ".." || hex == ".." {
		return filepath.Join("blobs", "invalid-digest")
	}
	return filepath.Join("blobs", alg, hex)
}

func readJSON(dir int, name string, v any) error {
	data, err := readBeneath(dir, name)
	if err != nil {
		return err
	}
	if err := jsonbound.Unmarshal(data, v, limits); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(name), err)
	}
	return nil
}

// readBeneath reads the regular file name inside the layout, at most
// maxJSON bytes, refusing a symlink out of it or through /proc's magic
// links: openat2(2) with RESOLVE_BENEATH, or where that is missing (before
// Linux 5.6, a seccomp profile) O_NOFOLLOW on every component.
func readBeneath(dir int, name string) ([]byte, error) {
	fd, err := unix.Openat2(dir, name, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		fd, err = openNoFollow(dir, name)
	}
	if errors.Is(err, unix.EXDEV) {
		return nil, fmt.Errorf("%s: a symlink leads out of the layout: %w", name, err)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return safefile.ReadOpen(os.NewFile(uintptr(fd), name), maxJSON)
}

// openNoFollow opens name below dir a component at a time, following no symlink.
func openNoFollow(dir int, name string) (int, error) {
	parts := strings.Split(name, "/")
	cur := dir
	for i, p := range parts {
		flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
		if i < len(parts)-1 {
			flags |= unix.O_DIRECTORY
		}
		fd, err := unix.Openat(cur, p, flags, 0)
		if cur != dir {
			unix.Close(cur)
		}
		if err != nil {
			return -1, err
		}
		cur = fd
	}
	return cur, nil
}
