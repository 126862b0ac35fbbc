// Package ledger appends one line per run to a shared JSON-lines file
// (PREFLIGHT_LEDGER), so a node or a volume keeps the history of every run
// in one place that `grep` and `jq -s` read.
//
// Several gpu-preflight processes may append at once (ranks of one job on
// one node, jobs sharing a volume). Each line goes out in a single write(2)
// on a descriptor opened with O_APPEND: on Linux the kernel then picks the
// end-of-file offset and writes the whole buffer under the inode lock, so
// concurrent lines neither overwrite nor interleave with each other on a
// local file system (write(2): "the file offset is first set to the end of
// the file ... and the adjustment of the file offset and the write operation
// are performed as an atomic step"). NFS does not give that guarantee.
package ledger

import (
	"bytes"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/report"
)

// MaxLineBytes bounds a ledger line. Linux writes at most 0x7ffff000 bytes in
// one call; a record is a few KiB, so this only guards against a record
// that has grown absurdly (a framework scan gone wrong).
const MaxLineBytes = 16 << 20

// Append adds r to the ledger at path as one compact JSON line, creating the
// file (mode 0640) if needed. It never follows a symlink at path, writes the
// line in exactly one write(2), and fdatasyncs it so a line that Append
// reported written survives a crash.
func Append(path string, r report.Record) error {
	line, err := report.EncodeCompact(r)
	if err != nil {
		return fmt.Errorf("append to ledger %s: %w", path, err)
	}
	// encoding/json escapes control characters, so the only newline is ours.
	if bytes.IndexByte(line, '\n') >= 0 {
		return fmt.Errorf("append to ledger %s: encoded record contains a newline", path)
	}
	line = append(line, '\n')
	if len(line) > MaxLineBytes {
		return fmt.Errorf("append to ledger %s: record %s is %d bytes, over the %d-byte line limit", path, r.RunID, len(line), MaxLineBytes)
	}
	// O_NONBLOCK: a FIFO nobody reads fails with ENXIO instead of blocking
	// the abort (or the run) forever; it changes nothing for a file.
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0o640)
	if err != nil {
		return fmt.Errorf("append to ledger %s: %w (point PREFLIGHT_LEDGER at a writable file, or unset it)", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("append to ledger %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("append to ledger %s: not a regular file (point PREFLIGHT_LEDGER at a regular file)", path)
	}
	n, err := writeOnce(fd, line)
	if err != nil {
		return fmt.Errorf("append to ledger %s: %w", path, err)
	}
	if n != len(line) {
		// A short write (disk full) leaves a torn line; say so rather than
		// complete it with a second write another process may interleave with.
		return fmt.Errorf("append to ledger %s: short write (%d of %d bytes; the file system may be full): the last line is torn", path, n, len(line))
	}
	if err := unix.Fdatasync(fd); err != nil {
		return fmt.Errorf("append to ledger %s: fdatasync: %w", path, err)
	}
	return nil
}

// writeOnce is one write(2), retried only when nothing was written because a
// signal interrupted it.
func writeOnce(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		return n, err
	}
}
