package ldso

import (
	"fmt"
	"path"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// FS is what the model reads of the image; paths are absolute, inside it.
type FS interface {
	IsFile(path string) bool // a regular file, links followed
	Dynamic(path string) (Dynamic, error)
}

// Env is the loader's configuration in the image.
type Env struct {
	LibraryPath []string     // LD_LIBRARY_PATH, split, empty entries dropped
	Cache       []CacheEntry // /etc/ld.so.cache
	// SystemDirs are searched last (LD_DEBUG=libs: "system search path"):
	// DebianSystemDirs, or /lib64, /usr/lib64 on RHEL and upstream.
	SystemDirs []string
	LibDir     string // what $LIB expands to: "lib/x86_64-linux-gnu" on Debian, "lib64" elsewhere
}

// How a library was found: the step of ld.so's search.
const (
	ViaPath        = "path"            // loaded by its path (dlopen with a '/')
	ViaPreload     = "preloaded"       // loaded by path before the roots, by the framework itself
	ViaLoaded      = "already loaded"  // a loaded object has that soname
	ViaRPath       = "DT_RPATH"        // of the needing object or one that loaded it
	ViaLibraryPath = "LD_LIBRARY_PATH" //
	ViaRunPath     = "DT_RUNPATH"      // of the needing object
	ViaCache       = "ld.so.cache"     //
	ViaSystem      = "system directory"
)

// Object is one loaded object.
type Object struct {
	Name string // what was asked for: a soname, or the path of a root
	Path string // where it was found; "" when it was not
	// Via is the search step that found it; for ViaRPath and ViaRunPath,
	// By names the object whose entry it was.
	Via      string
	By       string
	NeededBy string // the object whose DT_NEEDED asked for it
	DlopenBy string // the path of the object whose dlopen asked for it
	Error    string // found but not readable
}

// Dlopen is a library an object opens at run time: a name without a slash
// is searched as the caller's DT_NEEDED entries are (elf/dl-open.c passes
// the caller's link map to _dl_map_object). By is the caller's name without
// ".so" ("libcudnn"): every loaded object By.so or By.so.N makes the request.
type Dlopen struct {
	By, Name string
}

// Limits that keep a hostile image cheap: real frameworks load a few hundred objects.
const (
	maxObjects = 1024
	maxNeeded  = 512
	maxDirs    = 256 // per RPATH, RUNPATH or LD_LIBRARY_PATH
	// maxHeld bounds the dynamic sections of all objects together
	// (ReadDynamic bounds one's): a real object holds well under 1 KiB.
	maxHeld = 4 << 20
)

type node struct {
	obj    Object
	dyn    Dynamic
	loader *node
}

// Load loads roots (absolute paths, as dlopen with a path does) in order,
// then their dependencies breadth-first, as glibc's _dl_map_object_deps
// does, and returns every object in load order. preloaded are paths loaded
// before the roots (a framework's own preloading), reused by soname.
func Load(fs FS, env Env, preloaded []string, roots []string) []Object {
	return LoadDlopen(fs, env, preloaded, roots, nil)
}

// LoadDlopen is Load followed by the dlopen calls of dl, each resolved from
// its loaded caller with its dependencies, until no request adds an object.
func LoadDlopen(fs FS, env Env, preloaded, roots []string, dl []Dlopen) []Object {
	l := loader{fs: fs, env: env, bySoname: map[string]*node{}}
	for _, p := range preloaded {
		l.root(p)
	}
	first := len(l.nodes)
	for _, p := range roots {
		l.root(p)
	}
	done := l.deps(0)
	asked := map[Dlopen]bool{}
	for more := true; more && len(l.nodes) < maxObjects; {
		more = false
		for i := 0; i < len(l.nodes) && len(l.nodes) < maxObjects; i++ {
			n := l.nodes[i]
			for _, d := range dl {
				if asked[d] || !callerIs(n, d.By) {
					continue
				}
				asked[d] = true
				if l.bySoname[d.Name] != nil {
					continue
				}
				before := len(l.nodes)
				l.need(d.Name, n)
				if len(l.nodes) > before {
					l.nodes[before].obj.DlopenBy = n.obj.Path
					more = true
				}
				// dlopen maps the object's dependencies before it returns.
				done = l.deps(done)
			}
		}
	}
	out := make([]Object, 0, len(l.nodes))
	for i, n := range l.nodes {
		if i < first {
			n.obj.Via = ViaPreload
		}
		out = append(out, n.obj)
	}
	return out
}

// deps loads the DT_NEEDED entries of nodes[from:] breadth-first and returns len(nodes).
func (l *loader) deps(from int) int {
	i := from
	for ; i < len(l.nodes) && len(l.nodes) < maxObjects; i++ {
		n := l.nodes[i]
		for j, name := range n.dyn.Needed {
			if j >= maxNeeded || len(l.nodes) >= maxObjects {
				break
			}
			l.need(name, n)
		}
	}
	return i
}

// callerIs reports whether n's soname, or else its file name, is lib.so or lib.so.<version>.
func callerIs(n *node, lib string) bool {
	if n.obj.Path == "" {
		return false
	}
	name := n.dyn.Soname
	if name == "" {
		name = path.Base(n.obj.Path)
	}
	rest, ok := strings.CutPrefix(name, lib+".so")
	return ok && (rest == "" || rest[0] == '.')
}

type loader struct {
	fs       FS
	env      Env
	nodes    []*node
	bySoname map[string]*node
	held     int // bytes of the dynamic sections in nodes
}

func (l *loader) root(p string) {
	if l.bySoname[p] != nil {
		return
	}
	n := &node{obj: Object{Name: p, Via: ViaPath}}
	if l.fs.IsFile(p) {
		n.obj.Path = p
	}
	l.add(n)
}

func (l *loader) add(n *node) {
	if n.obj.Path != "" {
		d, err := l.fs.Dynamic(n.obj.Path)
		if err != nil {
			n.obj.Error = err.Error()
		}
		if l.held += d.held(); l.held > maxHeld {
			n.obj.Error = fmt.Sprintf("not followed: the objects loaded before it hold %d bytes of names, the loader model's bound", maxHeld)
			d = Dynamic{Soname: d.Soname, Arch: d.Arch}
		}
		n.dyn = d
		if d.Soname != "" && l.bySoname[d.Soname] == nil {
			l.bySoname[d.Soname] = n
		}
	}
	if l.bySoname[n.obj.Name] == nil {
		l.bySoname[n.obj.Name] = n
	}
	l.nodes = append(l.nodes, n)
}

func (l *loader) need(name string, n *node) {
	if strings.Contains(name, "/") {
		l.root(name) // a DT_NEEDED with a slash is a path
		return
	}
	if l.bySoname[name] != nil || isInterpreter(name) {
		return // already loaded: reused, no new object
	}
	obj := Object{Name: name, NeededBy: n.obj.Path}
	obj.Path, obj.Via, obj.By = l.search(name, n)
	l.add(&node{obj: obj, loader: n})
}

// search is elf/dl-load.c's order for a name without a slash.
func (l *loader) search(name string, n *node) (found, via, by string) {
	try := func(dirs []string, origin string) string {
		for i, d := range dirs {
			if i >= maxDirs {
				break
			}
			d = l.expand(d, origin)
			if d == "" || !path.IsAbs(d) {
				continue
			}
			if p := path.Join(d, name); l.fs.IsFile(p) {
				return p
			}
		}
		return ""
	}
	if !n.dyn.HasRunPath {
		// Then of the object that loaded it, and on up; an object with
		// DT_RUNPATH has no DT_RPATH.
		for o := n; o != nil; o = o.loader {
			if p := try(o.dyn.RPath, path.Dir(o.obj.Path)); p != "" {
				return p, ViaRPath, o.obj.Path
			}
		}
	}
	if p := try(l.env.LibraryPath, ""); p != "" {
		return p, ViaLibraryPath, ""
	}
	if p := try(n.dyn.RunPath, path.Dir(n.obj.Path)); p != "" {
		return p, ViaRunPath, n.obj.Path
	}
	if n.dyn.NoDefLib {
		return "", "", ""
	}
	arch := n.dyn.Arch
	if p, ok := Lookup(l.env.Cache, name, arch); ok && l.fs.IsFile(p) {
		return p, ViaCache, ""
	}
	if p := try(l.env.SystemDirs, ""); p != "" {
		return p, ViaSystem, ""
	}
	return "", "", ""
}

// expand substitutes $ORIGIN and $LIB (ld.so(8) "Dynamic string tokens") as
// glibc's _dl_dst_substitute does, in one pass, an unknown "$" kept
// literally. An entry with a token it cannot expand ($PLATFORM, $ORIGIN
// outside an object) is dropped: "" is returned.
func (l *loader) expand(dir, origin string) string {
	var b strings.Builder
	for i := 0; i < len(dir); {
		if dir[i] != '$' {
			b.WriteByte(dir[i])
			i++
			continue
		}
		name, n := dstAt(dir[i+1:])
		var value string
		switch name {
		case "":
			b.WriteByte('$')
			i++
			continue
		case "ORIGIN":
			value = origin
		case "LIB":
			value = l.env.LibDir
		}
		if value == "" {
			return ""
		}
		b.WriteString(value)
		i += 1 + n
	}
	return path.Clean(b.String())
}

// dstAt says which token s starts with after a "$", and its length; an
// unbraced one must not run on into [A-Za-z0-9_] (glibc's is_dst).
func dstAt(s string) (name string, n int) {
	for _, tok := range []string{"ORIGIN", "PLATFORM", "LIB"} {
		if rest, ok := strings.CutPrefix(s, "{"+tok+"}"); ok {
			return tok, len(s) - len(rest)
		}
		if rest, ok := strings.CutPrefix(s, tok); ok {
			if rest != "" && (rest[0] == '_' || 'a' <= rest[0] && rest[0] <= 'z' || 'A' <= rest[0] && rest[0] <= 'Z' || '0' <= rest[0] && rest[0] <= '9') {
				continue
			}
			return tok, len(tok)
		}
	}
	return "", 0
}

// RootFS reads the dynamic sections of an image unpacked under a root ("/"
// for the running container); the image scan answers IsFile from its listings.
type RootFS struct{ Root fsroot.Root }

// Dynamic is FS's Dynamic, read straight from the file.
func (r RootFS) Dynamic(p string) (Dynamic, error) {
	f, err := r.Root.Open(p)
	if err != nil {
		return Dynamic{}, err
	}
	defer f.Close()
	return ReadDynamic(f)
}

// DebianSystemDirs are glibc's system directories on Debian and Ubuntu for a multiarch triplet.
func DebianSystemDirs(triplet string) []string {
	return []string{"/lib/" + triplet, "/usr/lib/" + triplet, "/lib", "/usr/lib"}
}

// isInterpreter: ld.so itself is loaded before anything else.
func isInterpreter(name string) bool {
	return strings.HasPrefix(name, "ld-linux") || name == "ld64.so.2"
}
