// Package imageconfig reads how an unpacked image starts (its Dockerfile's
// ENV, ENTRYPOINT, CMD, WORKDIR) from its OCI layout, config blob, runtime
// bundle config.json or `docker image inspect` output.
package imageconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonbound"
	"github.com/gpu-preflight/gpu-preflight/internal/safefile"
)

// maxJSON bounds every file read: configs and manifests are a few KiB.
const maxJSON = 8 << 20

// limits bound every document's shape, a million empty strings included.
var limits = jsonbound.Limits{Bytes: maxJSON, Depth: 64, Values: 200_000}

// Forms of configuration Read understands, as it names them.
const (
	FormOCILayout     = "OCI image layout"
	FormImageConfig   = "OCI image config"
	FormRuntimeConfig = "OCI runtime config"
	FormInspect       = "image inspect output"
)

// Image is the process a configuration starts: its argv is nil when unset,
// its working directory "/".
type Image struct {
	Env         []string
	Command     []string
	CommandFrom string
	WorkDir     string
	Form        string
}

// Read reads the configuration at path, a file or an OCI layout directory,
// O_NONBLOCK, each file up to maxJSON, no name followed out of a layout;
// path itself may be a symlink (a ConfigMap's file).
func Read(path string) (Image, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return Image{}, fmt.Errorf("image config: %w", &os.PathError{Op: "open", Path: path, Err: err})
	}
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return Image{}, fmt.Errorf("image config: %w", err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		defer f.Close()
		im, err := layoutImage(fd)
		if err != nil {
			return Image{}, fmt.Errorf("image config %s: %w", path, err)
		}
		return im, nil
	}
	data, err := safefile.ReadOpen(f, maxJSON)
	if err != nil {
		return Image{}, fmt.Errorf("image config: %w", err)
	}
	im, err := Parse(data)
	if err != nil {
		return Image{}, fmt.Errorf("image config %s: %w", path, err)
	}
	return im, nil
}

// imageFields are an image config's "config", inspect output's "Config".
type imageFields struct {
	Env        []string `json:"Env"`
	Entrypoint words    `json:"Entrypoint"`
	Cmd        words    `json:"Cmd"`
	WorkingDir string   `json:"WorkingDir"`
}

type processFields struct {
	Env  []string `json:"env"`
	Args []string `json:"args"`
	Cwd  string   `json:"cwd"`
}

type config struct {
	Config  *imageFields   `json:"config"`
	Process *processFields `json:"process"`
}

type inspected struct {
	Config *imageFields `json:"Config"`
}

// words is Entrypoint or Cmd: also one string, as Docker's strslice reads it.
type words []string

func (w *words) UnmarshalJSON(b []byte) error {
	var s string
	if bytes.HasPrefix(b, []byte(`"`)) {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*w = words{s}
		return nil
	}
	return json.Unmarshal(b, (*[]string)(w))
}

func (f imageFields) image(form string) Image {
	im := Image{Env: f.Env, WorkDir: workDir(f.WorkingDir), Form: form}
	im.Command = append(append(im.Command, f.Entrypoint...), f.Cmd...)
	switch {
	case len(f.Entrypoint) > 0 && len(f.Cmd) > 0:
		im.CommandFrom = "the image config's Entrypoint and Cmd"
	case len(f.Entrypoint) > 0:
		im.CommandFrom = "the image config's Entrypoint"
	case len(f.Cmd) > 0:
		im.CommandFrom = "the image config's Cmd"
	}
	return im
}

func (p processFields) image() Image {
	im := Image{Env: p.Env, WorkDir: workDir(p.Cwd), Form: FormRuntimeConfig}
	if len(p.Args) > 0 {
		im.Command, im.CommandFrom = p.Args, "the runtime config's process.args"
	}
	return im
}

func workDir(dir string) string {
	return path.Join("/", dir)
}

var errNoEnv = errors.New(`no environment in it: want an OCI image config ("config": {"Env": [...]}), an OCI runtime config ("process": {"env": [...]}), docker/podman image inspect output, or an OCI image layout directory`)

// Parse reads one configuration file's contents.
func Parse(data []byte) (Image, error) {
	if err := jsonbound.Check(data, limits); err != nil {
		return Image{}, err
	}
	if bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("[")) {
		var list []inspected
		if err := json.Unmarshal(data, &list); err != nil {
			return Image{}, fmt.Errorf("not JSON image inspect output: %w", err)
		}
		if len(list) == 0 || list[0].Config == nil {
			return Image{}, errNoEnv
		}
		if len(list) > 1 {
			return Image{}, fmt.Errorf("inspect output of %d images: inspect the one image to check", len(list))
		}
		return list[0].Config.image(FormInspect), nil
	}
	var c config
	if err := json.Unmarshal(data, &c); err != nil {
		return Image{}, fmt.Errorf("not a JSON image or runtime config: %w", err)
	}
	switch {
	case c.Process != nil:
		return c.Process.image(), nil
	case c.Config != nil:
		return c.Config.image(FormImageConfig), nil
	}
	return Image{}, errNoEnv
}

// layoutImage follows index.json, of exactly one manifest, to the config blob.
func layoutImage(dir int) (Image, error) {
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := readJSON(dir, "index.json", &index); err != nil {
		return Image{}, fmt.Errorf("not an OCI image layout: %w", err)
	}
	if len(index.Manifests) != 1 {
		return Image{}, fmt.Errorf("index.json lists %d manifests: copy the one image to check into its own layout", len(index.Manifests))
	}
	var manifest struct {
		Config descriptor `json:"config"`
	}
	if err := readJSON(dir, blobPath(index.Manifests[0].Digest), &manifest); err != nil {
		return Image{}, fmt.Errorf("its manifest: %w", err)
	}
	data, err := readBeneath(dir, blobPath(manifest.Config.Digest))
	if err != nil {
		return Image{}, fmt.Errorf("its config: %w", err)
	}
	im, err := Parse(data)
	if err != nil {
		return Image{}, fmt.Errorf("its config: %w", err)
	}
	if im.Form != FormImageConfig {
		return Image{}, fmt.Errorf("its config blob is %s, not an OCI image config", im.Form)
	}
	im.Form = FormOCILayout
	return im, nil
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

// readBeneath reads the regular file name inside the layout, up to maxJSON:
// openat2(2) RESOLVE_BENEATH, else (before Linux 5.6, seccomp) O_NOFOLLOW
// on every component.
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
