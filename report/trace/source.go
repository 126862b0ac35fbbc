package trace

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Source is one operand: standard input, a file, or a directory, whose
// streams are read as the node laid them out.
type Source struct {
	Name   string
	groups []group
}

// group is a sequence of streams one writer wrote in time order: one
// file, or a directory's files (a container's current log and its
// rotations, a records directory) oldest first.
type group struct {
	name  string
	stdin io.Reader
	dir   string // read the files of dir
	file  string // read this file
}

// maxSorted bounds the names of one directory sorted before reading; a
// larger directory is read in listing order.
const maxSorted = 1 << 16

// Sources opens the operands: "-", files and directories, walked with
// each directory of files a group. A link out of the walk
// (/var/log/containers' into /var/log/pods) makes its target's directory
// a group, so rotations are read too, once.
func Sources(operands []string, stdin io.Reader) ([]Source, error) {
	var out []Source
	for _, name := range operands {
		if name == "-" {
			out = append(out, Source{Name: name, groups: []group{{name: name, stdin: stdin}}})
			continue
		}
		st, err := os.Stat(name)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", name, err)
		}
		src := Source{Name: name}
		if !st.IsDir() {
			src.groups = []group{{name: name, file: name}}
			out = append(out, src)
			continue
		}
		root, err := filepath.EvalSymlinks(name)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", name, err)
		}
		dirs := map[string]bool{}
		add := func(dir string) {
			if !dirs[dir] {
				dirs[dir] = true
				src.groups = append(src.groups, group{name: dir, dir: dir})
			}
		}
		filepath.WalkDir(name, func(path string, e fs.DirEntry, err error) error {
			if err != nil || !e.IsDir() {
				return nil
			}
			if path != name && strings.HasPrefix(e.Name(), ".") {
				return filepath.SkipDir
			}
			entries, err := os.ReadDir(path)
			if err != nil {
				return nil
			}
			for _, f := range entries {
				switch {
				case strings.HasPrefix(f.Name(), "."):
				case f.Type().IsRegular():
					add(path)
				case f.Type()&fs.ModeSymlink != 0:
					if t, err := filepath.EvalSymlinks(filepath.Join(path, f.Name())); err == nil && !within(t, root) {
						if st, err := os.Stat(t); err == nil && st.Mode().IsRegular() {
							add(filepath.Dir(t))
						}
					}
				}
			}
			return nil
		})
		if len(src.groups) == 0 {
			src.groups = []group{{name: name, dir: name}}
		}
		out = append(out, src)
	}
	return out, nil
}

func within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// eachFile calls f with dir's regular files, not hidden (a writer's
// temporary files are), in logOrder.
func eachFile(dir string, f func(path string)) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	var names []string
	for {
		batch, err := d.ReadDir(1024)
		for _, e := range batch {
			n := e.Name()
			switch {
			case strings.HasPrefix(n, ".") || !e.Type().IsRegular():
			case len(names) < maxSorted:
				names = append(names, n)
			default:
				f(filepath.Join(dir, n))
			}
		}
		if err == io.EOF || len(batch) == 0 {
			break
		}
		if err != nil {
			return err
		}
	}
	slices.SortFunc(names, logOrder)
	for _, n := range names {
		f(filepath.Join(dir, n))
	}
	return nil
}

// logOrder sorts a directory's files oldest first, rotations as their
// writer made them: the kubelet's 0.log.20240101-120000(.gz) before 0.log,
// Docker's ID-json.log.2 before .1 before ID-json.log.
func logOrder(a, b string) int {
	fa, ra := rotation(a)
	fb, rb := rotation(b)
	if c := strings.Compare(fa, fb); c != 0 {
		return c
	}
	return strings.Compare(ra, rb)
}

// rotation splits a file name into its log's name and a key that sorts
// its rotations oldest first and the log itself last.
func rotation(name string) (family, key string) {
	name = strings.TrimSuffix(name, ".gz")
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return name, "~"
	}
	suffix := name[i+1:]
	if n, err := strconv.Atoi(suffix); err == nil && n >= 0 {
		return name[:i], fmt.Sprintf("0-%020d", 1<<40-n) // Docker: .1 is newer than .2
	}
	if len(suffix) == 15 && suffix[8] == '-' && strings.Trim(suffix[:8]+suffix[9:], "0123456789") == "" {
		return name[:i], "1-" + suffix // the kubelet: .YYYYMMDD-HHMMSS
	}
	return name, "~"
}

// each reads g's streams in order.
func (g group) each(read func(part string, r io.Reader) error, skip func(error)) error {
	switch {
	case g.stdin != nil:
		return read(g.name, g.stdin)
	case g.file != "":
		return readFile(g.file, read)
	}
	return eachFile(g.dir, func(path string) {
		if err := readFile(path, read); err != nil {
			skip(err)
		}
	})
}

// readFile reads a regular file or a FIFO (trace <(logcli ...)), never a
// device.
func readFile(path string, read func(part string, r io.Reader) error) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() && st.Mode()&os.ModeNamedPipe == 0 {
		return fmt.Errorf("%s: not a regular file or a pipe (%s)", path, st.Mode().Type())
	}
	if st.Mode()&os.ModeNamedPipe != 0 {
		syscall.SetNonblock(int(f.Fd()), false)
	}
	return read(path, f)
}

// Stream is a source of one stream: r, named name.
func Stream(name string, r io.Reader) Source {
	return Source{Name: name, groups: []group{{name: name, stdin: r}}}
}
