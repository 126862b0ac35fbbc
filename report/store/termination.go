package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpu-preflight/gpu-preflight/internal/safefile"
	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
	"github.com/gpu-preflight/gpu-preflight/report"
)

// WriteTermination writes msg (report.TerminationMessage) to path (the
// container's terminationMessagePath, PREFLIGHT_TERMINATION_LOG). In a pod
// the kubelet creates that file before the container starts, so a path
// that was not set explicitly (create false) is written only when the file
// exists: a run on a workstation or in plain Docker, where nothing is at
// /dev/termination-log, creates nothing. A path set explicitly (create) is
// created when its directory exists. An empty path or message writes
// nothing. The file is truncated and replaced in place (Kubernetes
// bind-mounts it, so it cannot be renamed over), and a symlink at path is
// not followed.
func WriteTermination(path, msg string, create bool) error {
	if path == "" || msg == "" {
		return nil
	}
	flags := os.O_WRONLY
	if create {
		if _, err := os.Stat(filepath.Dir(path)); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		flags |= os.O_CREATE
	}
	msg = truncate.String(msg, report.MaxTerminationBytes)
	// safefile: no symlink followed, a FIFO nobody reads fails with ENXIO
	// instead of blocking the abort forever, and a hard link to another
	// file is refused before anything is cut.
	f, err := safefile.OpenWrite(path, flags, 0o644)
	if !create && errors.Is(err, os.ErrNotExist) {
		return nil // not in a pod
	}
	if err != nil {
		return fmt.Errorf("write termination message to %s: %w (set PREFLIGHT_TERMINATION_LOG to the container's terminationMessagePath, or to \"\" to skip it)", path, err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return fmt.Errorf("write termination message to %s: %w", path, err)
	}
	if _, err := f.WriteString(msg); err != nil {
		f.Close()
		return fmt.Errorf("write termination message to %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write termination message to %s: %w", path, err)
	}
	return nil
}
