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
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/internal/safefile"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/store"
)

// MaxLineBytes bounds a ledger line. Linux writes at most 0x7ffff000 bytes in
// one call; a record is a few KiB, so this only guards against a record
// that has grown absurdly (a framework scan gone wrong).
const MaxLineBytes = 16 << 20

// Append adds r to the ledger at path as one compact JSON line, creating the
// file (mode 0640) if needed. It never follows a symlink at path, and
// refuses anything but a regular file with one link (internal/safefile).
// It writes the line in exactly one write(2), and fdatasyncs it so a line
// that Append reported written survives a crash. A write cut short (a full
// disk) is truncated away again, so the ledger never keeps a partial line;
// should one be left all the same (a crash between the two), the next
// append starts with the newline that ends it, so the torn line costs only
// itself.
func Append(path string, r report.Record) error {
	line, err := r.AppendJSON(make([]byte, 0, report.EncodedBytes))
	if err != nil {
		return fmt.Errorf("append to ledger %s: %w", path, err)
	}
	// The encoder escapes control characters, so the only newline is ours.
	if bytes.IndexByte(line, '\n') >= 0 {
		return fmt.Errorf("append to ledger %s: encoded record contains a newline", path)
	}
	line = append(line, '\n')
	if len(line) > MaxLineBytes {
		return fmt.Errorf("append to ledger %s: record %s is %d bytes, over the %d-byte line limit", path, r.RunID, len(line), MaxLineBytes)
	}
	// safefile: no symlink followed, a FIFO nobody reads fails with ENXIO
	// instead of blocking the abort (or the run) forever, and a file with
	// another hard link is refused: the line would land in that file too.
	// Read-write, so that whether the last line is torn is read through
	// the same descriptor (one descriptor, and the very file written); a
	// ledger this user may append to but not read is opened write-only,
	// and then counts as whole.
	readable := true
	f, err := safefile.OpenWrite(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o640)
	if errors.Is(err, unix.EACCES) {
		readable = false
		f, err = safefile.OpenWrite(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	}
	if err != nil {
		return fmt.Errorf("append to ledger %s: %w (%s)", path, err, remedy(err))
	}
	defer f.Close()
	fd := int(f.Fd())
	// Whether the last line is torn can only be read while no other
	// gpu-preflight appends: a write in progress shows half written to a
	// reader. So the check runs under the file's lock, which Append takes
	// for at most lockWait; without it the line goes out unchecked.
	locked := lock(fd)
	if torn, err := endsTorn(fd, locked && readable); err != nil {
		return fmt.Errorf("append to ledger %s: %w", path, err)
	} else if torn {
		// An earlier append was cut short and could not be cut back (a
		// crash in between): end its torn line first, in the same write,
		// so this record is not glued onto it and lost with it.
		line = append([]byte{'\n'}, line...)
	}
	n, err := writeOnce(fd, line)
	if n > 0 && n < len(line) {
		// A short write (disk full) leaves a torn line: cut it back, so
		// the ledger holds whole lines only.
		if cerr := cutBack(fd, n, locked); cerr != nil {
			err = fmt.Errorf("short write (%d of %d bytes: %w), and the torn line could not be cut back (%v): the next append will end it", n, len(line), unix.ENOSPC, cerr)
		} else {
			err = fmt.Errorf("short write (%d of %d bytes: %w): the partial line was cut back", n, len(line), unix.ENOSPC)
		}
	}
	if locked {
		unix.Flock(fd, unix.LOCK_UN) // the fdatasync below needs no lock
	}
	if err != nil {
		return fmt.Errorf("append to ledger %s: %w (%s)", path, err, remedy(err))
	}
	if err := unix.Fdatasync(fd); err != nil {
		return fmt.Errorf("append to ledger %s: fdatasync: %w (%s)", path, err, remedy(err))
	}
	return nil
}

// endsTorn reports whether the ledger open as fd ends without a newline:
// its last line was torn by a short write. Only with the lock held is no
// other append half way; without it, or when fd cannot be read (check
// false), the file counts as whole.
func endsTorn(fd int, check bool) (bool, error) {
	var st unix.Stat_t
	if !check || unix.Fstat(fd, &st) != nil || st.Size == 0 {
		return false, nil
	}
	var last [1]byte
	n, err := unix.Pread(fd, last[:], st.Size-1)
	if err != nil {
		return false, fmt.Errorf("read the last byte: %w", err)
	}
	return n == 1 && last[0] != '\n', nil
}

// lockWait bounds how long Append waits for another appender's lock: a
// few milliseconds at most in practice, and a holder stuck on a hung
// volume must not hold up the start of the job.
const lockWait = 500 * time.Millisecond

// lock takes an exclusive flock(2) on fd within lockWait, and reports
// whether it did.
func lock(fd int) bool {
	for deadline := time.Now().Add(lockWait); ; time.Sleep(time.Millisecond) {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return true
		}
		if err != unix.EWOULDBLOCK && err != unix.EINTR || time.Now().After(deadline) {
			return false
		}
	}
}

// cutBack truncates away the n bytes the last write(2) on fd appended,
// which ended where fd's offset now is. Only under the lock (locked) is no
// other gpu-preflight appending; without it the cut is made only when the
// file still ends where the write did, and is refused otherwise (another
// line may have followed).
func cutBack(fd, n int, locked bool) error {
	end, err := unix.Seek(fd, 0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if !locked {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
		if st.Size != end {
			return errors.New("another line followed it")
		}
	}
	return unix.Ftruncate(fd, end-int64(n))
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

func remedy(err error) string {
	if v := store.VolumeRemedy(err, "PREFLIGHT_LEDGER", "unset it"); v != "" {
		return v
	}
	return "point PREFLIGHT_LEDGER at a writable regular file of its own, or unset it"
}
