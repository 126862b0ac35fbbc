package ldso

import (
	"fmt"
	"path"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// FS is what the model reads of the image: whether a file is there, and the
// dynamic section of an object. Paths are absolute, inside the image.
type FS interface {
	// IsFile reports whether path names a regular file, links followed.
	IsFile(path string) bool
	// Dynamic reads the object at path.
	Dynamic(path string) (Dynamic, error)
}

// Env is the loader's configuration in the image.
type Env struct {
	// LibraryPath is LD_LIBRARY_PATH, split; empty entries dropped.
	LibraryPath []string
	// Cache is the image's /etc/ld.so.cache.
	Cache []CacheEntry
	// SystemDirs are the directories glibc searches last: Debian and
	// Ubuntu build it with /lib/<triplet>, /usr/lib/<triplet>, /lib,
	// /usr/lib (LD_DEBUG=libs shows them as "system search path"); RHEL
	// and upstream with /lib64, /usr/lib64.
	SystemDirs []string
	// LibDir is what $LIB expands to: "lib/x86_64-linux-gnu" on Debian,
	// "lib64" elsewhere.
	LibDir string
}

// How a library was found: the step of ld.so's search that found it.
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
	// Name is what was asked for: a soname, or the path of a root.
	Name string
	// Path is where it was found; "" when it was not.
	Path string
	// Via is the search step that found it (Via* constants); for ViaRPath
	// and ViaRunPath, By names the object whose entry it was.
	Via string
	By  string
	// NeededBy is the object whose DT_NEEDED asked for it; "" for a root.
	NeededBy string
	// DlopenBy is the path of the object whose dlopen call asked for it
	// (a Dlopen request); "" for a root or a DT_NEEDED entry.
	DlopenBy string
	// Error is set when the object was found but could not be read.
	Error string
}

// Dlopen is a library that an object opens by name at run time: dlopen
// with a name without a slash, which ld.so searches as it searches the
// caller's DT_NEEDED entries (elf/dl-open.c passes the caller's link map
// to _dl_map_object). By is the caller's library name without ".so"
// ("libcudnn"): every loaded object whose soname is By.so or By.so.N...
// makes the request. A Name with a slash is opened by that path.
type Dlopen struct {
	By, Name string
}

// Limits that keep a hostile image cheap: real CUDA frameworks load a few
// hundred objects, each with tens of DT_NEEDED entries.
const (
	maxObjects = 1024
	maxNeeded  = 512
	maxDirs    = 256 // per RPATH, RUNPATH or LD_LIBRARY_PATH
	// maxHeld bounds the bytes the dynamic sections read hold together:
	// ReadDynamic bounds one object's (maxStrings), this all of them, so
	// that maxObjects objects of hostile names stay a few MiB. A real
	// object holds well under 1 KiB.
	maxHeld = 4 << 20
)

type node struct {
	obj    Object
	dyn    Dynamic
	loader *node
}

// Load loads roots (absolute paths, as dlopen with a path does) in order,
// then their dependencies breadth-first, as glibc's _dl_map_object_deps
// does, and returns every object in load order. preloaded maps sonames to
// paths already loaded before the roots (a framework's own preloading);
// they are reused by soname like any loaded object.
func Load(fs FS, env Env, preloaded []string, roots []string) []Object {
	return LoadDlopen(fs, env, preloaded, roots, nil)
}

// LoadDlopen is Load followed by the dlopen calls of dl: each request
// whose caller is loaded is resolved from the caller, and its dependencies
// loaded in turn, until no request adds an object. A request whose name
// is already loaded adds nothing, as dlopen returns the loaded object.
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
				// dlopen maps the object's dependencies before it
				// returns, so the next request finds them loaded.
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

// deps loads the DT_NEEDED entries of the nodes from index from on,
// breadth-first, and returns how many nodes there are once it is done.
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

// callerIs reports whether n is the library named lib ("libcudnn"): its
// soname, or else its file name, is lib.so or lib.so.<version>.
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

// add reads n's dynamic section and records it under its soname and the
// name it was asked for.
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

// need resolves name for the object n that needs it.
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
		// DT_RPATH of the needing object, then of the object that loaded
		// it, and on up; an object with DT_RUNPATH has no DT_RPATH.
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

// expand substitutes $ORIGIN and $LIB (ld.so(8) "Dynamic string tokens")
// in a search directory as glibc's _dl_dst_substitute does: one pass over
// the entry, a token's value copied as it is (a "$" in the object's own
// directory is no token), a "$" that starts no known token kept literally.
// An entry with a known token it cannot expand ($PLATFORM, whose value is
// the CPU's; $ORIGIN outside an object) is dropped: "" is returned.
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

// dstAt says which dynamic string token s starts with (s follows a "$"),
// and how many bytes it takes: "ORIGIN" or "{ORIGIN}", where an unbraced
// name must not run on into a letter, digit or "_" (glibc's is_dst).
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

// RootFS reads the dynamic sections of an image unpacked under a root
// directory ("/" for the running container). The image scan answers FS's
// IsFile itself, from the listings it caches.
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

// DebianSystemDirs are glibc's system directories as Debian and Ubuntu
// build it, for a multiarch triplet ("x86_64-linux-gnu").
func DebianSystemDirs(triplet string) []string {
	return []string{"/lib/" + triplet, "/usr/lib/" + triplet, "/lib", "/usr/lib"}
}

// isInterpreter reports whether name is ld.so itself (the PT_INTERP of
// every dynamically linked program), which is loaded before anything else
// and so always matches.
func isInterpreter(name string) bool {
	return strings.HasPrefix(name, "ld-linux") || name == "ld64.so.2"
}
