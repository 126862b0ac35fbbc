// Package ocihook fills /proc/driver in a container as the NVIDIA Container
// Toolkit does. runc refuses OCI mounts under /proc but runs createContainer
// hooks in the container's mount namespace before pivot_root (OCI runtime
// spec, "createContainer Hooks"), so a hook mounts there itself.
package ocihook

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// State is what a hook learns of its container: runc's state on its stdin
// (OCI runtime spec, "State") and the root file system from config.json.
type State struct {
	ID          string            `json:"id"`
	Bundle      string            `json:"bundle"`
	Annotations map[string]string `json:"annotations"`
	// RootFS is config.json's root.path, absolute; its procfs is RootFS/proc.
	RootFS string `json:"-"`
}

// ReadState reads the container's state from r, a hook's stdin.
func ReadState(r io.Reader) (State, error) {
	var st State
	if err := json.NewDecoder(r).Decode(&st); err != nil {
		return st, fmt.Errorf("reading the container state from stdin: %w", err)
	}
	if st.Bundle == "" {
		return st, fmt.Errorf("the container state has no bundle path")
	}
	data, err := os.ReadFile(filepath.Join(st.Bundle, "config.json"))
	if err != nil {
		return st, err
	}
	var spec struct {
		Root struct {
			Path string `json:"path"`
		} `json:"root"`
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		return st, fmt.Errorf("reading %s/config.json: %w", st.Bundle, err)
	}
	st.RootFS = spec.Root.Path
	if !filepath.IsAbs(st.RootFS) {
		st.RootFS = filepath.Join(st.Bundle, st.RootFS)
	}
	return st, nil
}

// FillProcDriver mounts a tmpfs over rootfs/proc/driver, copies src into it
// and makes it read-only, as the toolkit's own tmpfs is.
func FillProcDriver(rootfs, src string) error {
	dst := filepath.Join(rootfs, "proc", "driver")
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if err := unix.Mount("tmpfs", dst, "tmpfs", flags, "mode=0555,size=1m"); err != nil {
		return fmt.Errorf("mounting a tmpfs over %s: %w", dst, err)
	}
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			return os.Mkdir(target, 0o555)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o444)
	})
	if err != nil {
		return fmt.Errorf("copying %s into the container's /proc/driver: %w", src, err)
	}
	if err := unix.Mount("", dst, "", unix.MS_REMOUNT|unix.MS_RDONLY|flags, ""); err != nil {
		return fmt.Errorf("making %s read-only: %w", dst, err)
	}
	return nil
}
