package fsroot

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"slices"
	"sync"
	"syscall"
)

// direntBufs are getdents(2) buffers, reused across listings.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// ReadDirNamesPrefix is ReadDirNamesFunc keeping the names that start with
// prefix, reading the kernel's linux_dirent64 records itself so that the
// names it leaves out cost nothing: finding python3.Y in a /usr/bin of
// thousands of programs allocates only those.
func (r Root) ReadDirNamesPrefix(p string, max int, prefix string) ([]string, error) {
	var names []string
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	seen := 0
	err := r.listDir(p, max, func(f *os.File) (int, error) {
		n, err := syscall.ReadDirent(int(f.Fd()), buf)
		if err != nil {
			return seen, err
		}
		if n <= 0 {
			return seen, io.EOF
		}
		seen += direntNames(buf[:n], func(name []byte) {
			if bytes.HasPrefix(name, []byte(prefix)) && len(names) < max {
				names = append(names, string(name))
			}
		})
		return seen, nil
	})
	slices.Sort(names)
	return names, err
}

// direntNames calls name with each name in a getdents64 buffer (struct
// linux_dirent64: d_reclen at 16, d_name at 19) but "." and "..", and
// returns how many entries it held.
func direntNames(buf []byte, name func([]byte)) int {
	const nameOff = 19
	count := 0
	for len(buf) >= nameOff {
		reclen := int(binary.NativeEndian.Uint16(buf[16:18]))
		if reclen < nameOff || reclen > len(buf) {
			break
		}
		n := buf[nameOff:reclen]
		if i := bytes.IndexByte(n, 0); i >= 0 {
			n = n[:i]
		}
		if !bytes.Equal(n, []byte(".")) && !bytes.Equal(n, []byte("..")) {
			count++
			name(n)
		}
		buf = buf[reclen:]
	}
	return count
}
