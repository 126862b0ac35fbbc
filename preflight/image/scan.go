package image

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/ldso"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// Result is what a scan found.
type Result struct {
	Stack      facts.Stack       `json:"stack"`
	Frameworks []facts.Framework `json:"frameworks"`
	// CUDALibraries are the CUDA libraries the frameworks load.
	CUDALibraries []facts.CUDALibrary `json:"cudaLibraries,omitempty"`
	// sitePackageDirs are the Python package directories found, in search
	// order (paths inside the root).
	SitePackages []string `json:"sitePackages"`
	// Environments are the Python environments found, in search order,
	// each with its sys.path (preflight/pyenv).
	Environments []pyenv.Environment `json:"environments,omitempty"`
	// CUDASources are the image-wide sources of its CUDA the scan reads:
	// the distribution's libcudart (the framework's own runtime is on
	// each facts.Framework, the toolkit and CUDA_VERSION are read by
	// preflight/container).
	CUDASources []facts.CUDASource `json:"cudaSources,omitempty"`
	// Inputs are the directories the scan listed and the files it read
	// versions from, with their size and modification time, so that a
	// manifest can tell whether a rescan would see anything new.
	Inputs []inputStamp `json:"inputs"`
}

// inputStamp identifies one version of a file or directory without reading it.
type inputStamp struct {
	Path string `json:"path"`
	// Dir is true for a directory, whose size is not compared.
	Dir bool `json:"dir,omitempty"`
	// Missing is true for a place the scan looked at and found nothing:
	// a file appearing there later changes what a scan would find.
	Missing bool  `json:"missing,omitempty"`
	Size    int64 `json:"size"`
	ModTime int64 `json:"modTime"` // Unix nanoseconds
	// Names is a directory's listingDigest: the names it holds that the
	// container runtime does not inject. A directory whose modification
	// time changed still holds when its names did not (a GPU node's
	// bind-mounted driver libraries change the time, not the image).
	Names string `json:"names,omitempty"`
}

// scanKeys are the environment variables a scan reads (the Scan rows of
// envvars.Read). A manifest records their values; a change makes Load
// rescan.
var scanKeys = envvars.Scanned()

// scanFileFunc reads a library's fatbins; fatbin.ScanFile outside tests.
type scanFileFunc func(path string) (fatbin.Result, error)

// Limits that keep a scan of a pathological image bounded. A normal image
// scans in milliseconds (10 000 dist-info folders in one site-packages take
// about 20 ms warm: test/e2e TestBoundedSlowSitePackagesScan), far inside
// all of them; past one, the scan stops that part and a
// warning says what was left out.
const (
	// RuntimeScanBudget is how long Load lets a run-time scan take before it
	// stops listing and reading and says so: the preflight's whole deadline
	// (PREFLIGHT_TIMEOUT, default 30 s) also covers the NVML probe (10 s by
	// default), and an image that needs longer than this should bake its
	// manifest at build time, where Bake scans without a budget.
	RuntimeScanBudget = 5 * time.Second

	// maxSearchPathEntries is how many entries of PYTHONPATH and of
	// LD_LIBRARY_PATH the scan looks in. CUDA images set a handful (the
	// nvidia/cuda images' LD_LIBRARY_PATH has two); each entry costs a
	// directory listing or a stat per framework and library, so a variable
	// of a hundred thousand entries would otherwise cost seconds.
	maxSearchPathEntries = 256

	// maxSourceFile bounds a version file or header the scan reads: real
	// ones (torch/version.py, build_info.py, cudnn_version.h, nccl.h,
	// NvInferVersion.h) are a few kilobytes, so 4 MiB is wide room while a
	// planted multi-gigabyte file is refused rather than read.
	maxSourceFile = 4 << 20

	// maxEntriesListed bounds the directory entries a scan holds, over
	// every directory it lists (fsroot.MaxDirEntries bounds one): a few
	// MiB of names.
	maxEntriesListed = 1 << 16
)

// scan scans the image under root. env is the container's environment
// (only scanKeys are read). It never fails: what cannot be read is missing,
// and the returned warnings say what went wrong beyond "not there". A
// budget above zero stops listing and reading once that much time has
// passed (Bake scans without one; LoadWithin, at run time, with one).
func scan(root fsroot.Root, env map[string]string, scanFile scanFileFunc, budget time.Duration) (Result, []string) {
	return scanKnown(root, env, scanFile, budget, nil)
}

// scanKnown is scan reusing the kernel scans in known for the libraries
// whose identity is unchanged.
func scanKnown(root fsroot.Root, env map[string]string, scanFile scanFileFunc, budget time.Duration, known map[libraryKey]facts.KernelLibrary) (Result, []string) {
	// The scan sees only what a manifest records, so that nothing it reads
	// can change without making the manifest stale.
	env = envSubset(env)
	s := &scanner{root: root, env: env, scanFile: scanFile, seen: map[string]bool{}, views: map[string]*view{}, budget: budget, known: known}
	if budget > 0 {
		s.deadline = time.Now().Add(budget)
	}
	s.environments()
	s.sitePackages()
	s.stack()
	s.frameworks()
	s.cudaLibraries()
	s.frameworkRuntimes()
	s.distributionCUDA()
	slices.SortFunc(s.res.Inputs, func(a, b inputStamp) int { return strings.Compare(a.Path, b.Path) })
	s.res.Inputs = slices.CompactFunc(s.res.Inputs, func(a, b inputStamp) bool { return a.Path == b.Path })
	return s.res, s.warnings
}

type scanner struct {
	root     fsroot.Root
	env      map[string]string
	scanFile scanFileFunc
	res      Result
	warnings []string
	// listings caches directory listings by path: each site-packages
	// directory is read once for all frameworks.
	listings map[string][]string
	// entriesListed counts the entries in listings, up to
	// maxEntriesListed; listingsFull is set once a listing was refused.
	entriesListed int
	listingsFull  bool
	// dists caches distInfos by site-packages directory.
	dists map[string]map[string]distInfo
	// views are the environment each framework was found in, by its
	// Location: its dist-info and sys.path, for the CUDA libraries.
	views map[string]*view
	seen  map[string]bool
	// budget and deadline bound the scan (zero: unbounded); stopped is set
	// once the deadline passed and the warning was given.
	budget   time.Duration
	deadline time.Time
	stopped  bool
	listed   int // directories listed, for the warning
	// known caches kernel scans by file identity: this scan's, and those
	// of the manifest it replaces (knownLibraries).
	known map[libraryKey]facts.KernelLibrary
	// loader is the image's loader configuration once read (ldEnv);
	// roots are each framework's closure roots by its Location.
	loader *ldso.Env
	roots  map[string][]string
	// dynamics caches the dynamic sections read by path (scanFS).
	dynamics map[string]dynamicRead
}

// outOfTime reports whether the scan's budget is spent, warning once when
// it first is.
func (s *scanner) outOfTime() bool {
	if s.stopped {
		return true
	}
	if s.deadline.IsZero() || time.Now().Before(s.deadline) {
		return false
	}
	s.stopped = true
	s.warnf("image: the scan stopped after its %s budget, having listed %d directories: "+
		"libraries and frameworks it had not reached are missing from the facts; "+
		"run `gpu-preflight bake` in the Dockerfile so that run time reads the manifest instead of scanning",
		s.budget, s.listed)
	return true
}

func (s *scanner) warnf(format string, args ...any) {
	s.warnings = append(s.warnings, fmt.Sprintf(format, args...))
}

// stamp records p (a file the scan read, or a directory it listed) among
// the inputs.
func (s *scanner) stamp(p string) {
	if s.seen[p] {
		return
	}
	s.seen[p] = true
	fi, err := s.root.Stat(p)
	if err != nil {
		if fsroot.Missing(err) {
			s.res.Inputs = append(s.res.Inputs, inputStamp{Path: p, Missing: true})
		}
		return
	}
	st := inputStamp{Path: p, Dir: fi.IsDir(), ModTime: fi.ModTime().UnixNano()}
	if !st.Dir {
		st.Size = fi.Size()
	}
	s.res.Inputs = append(s.res.Inputs, st)
}

// stampListing records directory dir with the digest of its listing.
func (s *scanner) stampListing(dir string, entries []string) {
	s.stamp(dir)
	if n := len(s.res.Inputs); n > 0 && s.res.Inputs[n-1].Path == dir && s.res.Inputs[n-1].Dir {
		s.res.Inputs[n-1].Names = listingDigest(dir, entries)
	}
}

// list returns the names in directory dir (nil when it is missing) and
// stamps it.
func (s *scanner) list(dir string) []string {
	if s.listings == nil {
		s.listings = map[string][]string{}
	}
	entries, ok := s.listings[dir]
	if !ok {
		if s.outOfTime() {
			return nil
		}
		if s.entriesListed >= maxEntriesListed {
			if !s.listingsFull {
				s.listingsFull = true
				s.warnf("image: the scan holds %d directory entries, its bound: %s and every directory after it are not listed", s.entriesListed, dir)
			}
			return nil
		}
		s.listed++
		var err error
		entries, err = s.root.ReadDirNames(dir)
		if err != nil && !fsroot.Missing(err) {
			s.warnf("image: listing %s: %v", dir, err)
		}
		s.listings[dir] = entries
		s.entriesListed += len(entries)
		if errors.Is(err, fs.ErrNotExist) && !s.seen[dir] {
			// What stamp's stat would find, without asking again: most
			// of the places searched do not exist in a given image.
			s.seen[dir] = true
			s.res.Inputs = append(s.res.Inputs, inputStamp{Path: dir, Missing: true})
		} else if err == nil {
			s.stampListing(dir, entries)
		} else {
			s.stamp(dir)
		}
	}
	return entries
}

// read returns the contents of file p, stamping it; nil when missing.
func (s *scanner) read(p string) []byte { return s.readMax(p, maxSourceFile) }

// readMax is read with another size bound.
func (s *scanner) readMax(p string, max int64) []byte {
	if s.outOfTime() {
		return nil
	}
	s.stamp(p)
	b, err := s.root.ReadFileMax(p, max)
	if err != nil {
		if !fsroot.Missing(err) {
			s.warnf("image: reading %s: %v", p, err)
		}
		return nil
	}
	return b
}

// searchPath returns the absolute entries of the colon list in variable
// key, at most maxSearchPathEntries of them, and a warning when there were
// more.
func searchPath(env map[string]string, key string) ([]string, string) {
	var out []string
	n := 0
	for dir := range strings.SplitSeq(env[key], ":") {
		if !strings.HasPrefix(dir, "/") {
			continue
		}
		n++
		if len(out) < maxSearchPathEntries {
			out = append(out, path.Clean(dir))
		}
	}
	if n > maxSearchPathEntries {
		return out, fmt.Sprintf("image: %s has %d directories; the scan looked only in the first %d (MaxSearchPathEntries)",
			key, n, maxSearchPathEntries)
	}
	return out, ""
}

// envSubset returns the scanKeys set in env.
func envSubset(env map[string]string) map[string]string {
	out := map[string]string{}
	for _, k := range scanKeys {
		if v, ok := env[k]; ok {
			out[k] = v
		}
	}
	return out
}
