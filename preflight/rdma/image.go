package rdma

import (
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/ldso"
	"github.com/gpu-preflight/gpu-preflight/preflight/nccl"
	"github.com/gpu-preflight/gpu-preflight/preflight/transport"
)

// ncclSettings resolves NCCL's variables as the image's NCCL will: the
// environment, then its configuration files, read from the image.
func (g *gatherer) ncclSettings(uid int) facts.NCCLConfig {
	n := facts.NCCLConfig{Version: g.o.NCCLVersion}
	v, _ := nccl.ParseVersion(g.o.NCCLVersion)
	env := g.o.Env
	var files []nccl.ConfFile
	for _, p := range nccl.ConfFiles(v, env, g.passwdHome(uid)) {
		b, err := g.image.ReadFileMax(p, maxFile)
		g.warn(err)
		if err == nil {
			files = append(files, nccl.ConfFile{Path: p, Data: b})
			n.ConfFiles = append(n.ConfFiles, p)
		}
	}
	n.Settings = nccl.Resolve(v, env, files)
	return n
}

// passwdHome is the home directory of uid in the image's /etc/passwd,
// which NCCL before 2.30.3 takes its ~/.nccl.conf from.
func (g *gatherer) passwdHome(uid int) string {
	b, err := g.image.ReadFileMax("/etc/passwd", 1<<20)
	if err != nil {
		g.warn(err)
		return ""
	}
	return PasswdHome(string(b), uid)
}

// PasswdHome reads the home directory of uid from a passwd(5) file:
// "name:password:UID:GID:gecos:home:shell".
func PasswdHome(passwd string, uid int) string {
	for line := range strings.SplitSeq(passwd, "\n") {
		f := strings.Split(line, ":")
		if len(f) >= 6 && f[2] == strconv.Itoa(uid) {
			return f[5]
		}
	}
	return ""
}

// ParseDriverConfig reads an /etc/libibverbs.d file as rdma-core's
// read_config_file does: "driver NAME" lines, blank lines and "#"
// comments, white space around words ignored.
func ParseDriverConfig(s string) []string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		f := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
		if len(f) >= 2 && f[0] == "driver" {
			out = append(out, f[1])
		}
	}
	return out
}

// verbsFile reads libibverbs' file name, libibverbs.so.1.<ABI>.<rdma-core>.0
// (rdma-core libibverbs/CMakeLists.txt).
func verbsFile(name string) (abi, rdmaCore int, ok bool) {
	rest, ok := strings.CutPrefix(name, "libibverbs.so.1.")
	if !ok {
		return 0, 0, false
	}
	f := strings.SplitN(rest, ".", 3)
	if len(f) < 3 {
		return 0, 0, false
	}
	if strings.Trim(f[0], "0123456789") != "" || strings.Trim(f[1], "0123456789") != "" {
		return 0, 0, false
	}
	abi, err1 := strconv.Atoi(f[0])
	rdmaCore, err2 := strconv.Atoi(f[1])
	return abi, rdmaCore, err1 == nil && err2 == nil
}

// providerABI is rdma-core's IBVERBS_PABI_VERSION by release: a
// provider's file is lib<name>-rdmav<PABI>.so (rdma-core CMakeLists.txt).
var providerABI = []struct{ from, pabi int }{{65, 65}, {64, 64}, {59, 59}, {57, 57}, {34, 34}, {33, 33}, {25, 25}}

func pabi(rdmaCore int) int {
	for _, r := range providerABI {
		if rdmaCore >= r.from {
			return r.pabi
		}
	}
	return 0
}

// imageSide finds, with the loader model, what the image's NCCL loads of
// the RDMA stack: libibverbs, the providers the host's HCAs need, and the
// net plugins its settings name.
func (g *gatherer) imageSide(hcas []facts.HCA, n facts.NCCLConfig) facts.RDMAImage {
	im := facts.RDMAImage{NCCL: g.o.NCCL}
	if len(hcas) > 0 {
		im.Configured = g.configuredProviders()
	}
	if im.NCCL == "" {
		return im
	}
	v, _ := nccl.ParseVersion(n.Version)
	env := g.loaderEnv()
	fs := imageFS{g}
	requests := []ldso.Dlopen{{By: "libnccl", Name: "libibverbs.so"}, {By: "libnccl", Name: "libibverbs.so.1"}}
	plugins := nccl.NetPlugins(n.Settings, v)
	for _, names := range plugins {
		for _, name := range names {
			requests = append(requests, ldso.Dlopen{By: "libnccl", Name: name})
		}
	}
	objs := ldso.LoadDlopen(fs, env, nil, []string{im.NCCL}, requests)
	im.Verbs = library(objs, "libibverbs.so")
	if im.Verbs.Path == "" {
		im.Verbs = library(objs, "libibverbs.so.1")
	}
	for _, names := range plugins {
		p := facts.NetPlugin{Names: names}
		for _, name := range names {
			if p.Library = library(objs, name); p.Library.Path != "" {
				break
			}
		}
		im.Plugins = append(im.Plugins, p)
	}
	if im.Verbs.Path == "" {
		return im
	}
	if real, err := g.image.Resolve(im.Verbs.Path); err == nil {
		if abi, core, ok := verbsFile(path.Base(real)); ok {
			im.VerbsABI, im.RDMACore = abi, core
		}
	}
	im.Providers = g.providers(hcas, im, env)
	return im
}

// Bounds on a hostile /etc/libibverbs.d: rdma-core 56 ships 17 files of a
// line each.
const (
	maxProviders    = 256
	maxProviderFile = 4 << 10
)

// configuredProviders are the provider names libibverbs loads: those of
// RDMAV_DRIVERS (or else IBV_DRIVERS), then of every regular file in
// /etc/libibverbs.d (libibverbs/dynamic_driver.c, load_drivers).
func (g *gatherer) configuredProviders() []string {
	var out []string
	for _, name := range []string{"RDMAV_DRIVERS", "IBV_DRIVERS"} {
		if v, ok := g.o.Env(name); ok {
			out = strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ';' })
			break
		}
	}
	files, err := g.image.ReadDirNames("/etc/libibverbs.d")
	g.warn(err)
	for _, f := range files[:min(len(files), maxProviders)] {
		b, err := g.image.ReadFileMax("/etc/libibverbs.d/"+f, maxProviderFile)
		if err == nil {
			out = append(out, ParseDriverConfig(string(b))...)
		}
	}
	return out[:min(len(out), maxProviders)]
}

// providers resolves each provider the HCAs need as load_driver does: in
// the provider directory (the lib directory's libibverbs/ beside
// libibverbs), else by name from libibverbs.
func (g *gatherer) providers(hcas []facts.HCA, im facts.RDMAImage, env ldso.Env) []facts.VerbsProvider {
	var names []string
	for _, h := range hcas {
		if p := transport.ProviderFor(h); p != "" && !slices.Contains(names, p) {
			names = append(names, p)
		}
	}
	dir := path.Join(path.Dir(im.Verbs.Path), "libibverbs")
	listing, _ := g.image.ReadDirNames(dir)
	var requests []ldso.Dlopen
	want := map[string]string{}
	for _, name := range names {
		file := ""
		if n := pabi(im.RDMACore); n > 0 {
			file = "lib" + name + "-rdmav" + strconv.Itoa(n) + ".so"
		} else if i := slices.IndexFunc(listing, func(f string) bool {
			return strings.HasPrefix(f, "lib"+name+"-rdmav") && strings.HasSuffix(f, ".so")
		}); i >= 0 {
			file = listing[i]
		}
		if file == "" {
			continue
		}
		req := file
		if slices.Contains(listing, file) {
			req = path.Join(dir, file)
		}
		want[name] = req
		requests = append(requests, ldso.Dlopen{By: "libibverbs", Name: req})
	}
	objs := ldso.LoadDlopen(imageFS{g}, env, nil, []string{im.Verbs.Path}, requests)
	var out []facts.VerbsProvider
	for _, name := range names {
		p := facts.VerbsProvider{Name: name, Library: facts.LoadedLibrary{Name: "lib" + name + "-rdmav*.so"}}
		if req, ok := want[name]; ok {
			p.Library = library(objs, req)
		}
		out = append(out, p)
	}
	return out
}

// library is the object the loader found for name, with the libraries of
// its dependency closure it did not find.
func library(objs []ldso.Object, name string) facts.LoadedLibrary {
	l := facts.LoadedLibrary{Name: name}
	i := slices.IndexFunc(objs, func(o ldso.Object) bool { return o.Name == name })
	if i < 0 || objs[i].Path == "" {
		return l
	}
	l.Path = objs[i].Path
	closure := []string{l.Path}
	for j := 0; j < len(closure); j++ {
		for _, o := range objs {
			if o.NeededBy != closure[j] {
				continue
			}
			if o.Path == "" {
				l.Missing = append(l.Missing, o.Name+" (needed by "+path.Base(o.NeededBy)+")")
			} else if !slices.Contains(closure, o.Path) {
				closure = append(closure, o.Path)
			}
		}
	}
	return l
}

// loaderEnv is ld.so's configuration in the image: LD_LIBRARY_PATH, the
// image's /etc/ld.so.cache, and its glibc's system directories.
func (g *gatherer) loaderEnv() ldso.Env {
	var env ldso.Env
	if v, ok := g.o.Env("LD_LIBRARY_PATH"); ok {
		env.LibraryPath = strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ';' })
	}
	// Read in place: the entries kept bound the memory, not the file.
	if f, err := g.image.Open("/etc/ld.so.cache"); err == nil {
		if fi, err := f.Stat(); err == nil {
			env.Cache, err = ldso.ReadCache(f, min(fi.Size(), ldso.MaxCacheSize))
			g.warn(err)
		}
		f.Close()
	} else {
		g.warn(err)
	}
	env.SystemDirs, env.LibDir = []string{"/lib64", "/usr/lib64"}, "lib64"
	for _, triplet := range []string{"x86_64-linux-gnu", "aarch64-linux-gnu"} {
		if fi, err := g.image.Stat("/usr/lib/" + triplet); err == nil && fi.IsDir() {
			env.SystemDirs, env.LibDir = ldso.DebianSystemDirs(triplet), "lib/"+triplet
			break
		}
	}
	return env
}

// imageFS is the image as the loader model reads it.
type imageFS struct{ g *gatherer }

func (f imageFS) IsFile(p string) bool {
	fi, err := f.g.image.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func (f imageFS) Dynamic(p string) (ldso.Dynamic, error) {
	return ldso.RootFS{Root: f.g.image}.Dynamic(p)
}
