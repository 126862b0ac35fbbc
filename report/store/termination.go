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
// container's terminationMessagePath, PREFLIGHT_TERMINATION_LOG) when the
// path's directory exists, and does nothing otherwise: outside Kubernetes
// there is no /dev/termination-log to write. An empty path or message
// writes nothing. The file is truncated and replaced in place (Kubernetes
// bind-mounts it, so it cannot be renamed over), and a symlink at path is
// not followed.
func WriteTermination(path, msg string) error {
	if path == "" || msg == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Dir(path)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	msg = truncate.String(msg, report.MaxTerminationBytes)
	// safefile: no symlink followed, a FIFO nobody reads fails with ENXIO
	// instead of blocking the abort forever, and a hard link to another
	// file is refused before anything is cut.
	f, err := safefile.OpenWrite(path, os.O_WRONLY|os.O_CREATE, 0o644)
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
