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
	Stack         facts.Stack         `json:"stack"`
	Frameworks    []facts.Framework   `json:"frameworks"`
	CUDALibraries []facts.CUDALibrary `json:"cudaLibraries,omitempty"`
	// SitePackages are the sys.path directories found, in search order.
	SitePackages []string            `json:"sitePackages"`
	Environments []pyenv.Environment `json:"environments,omitempty"`
	// CUDASources are the image-wide sources of its CUDA the scan reads (the
	// toolkit and CUDA_VERSION are preflight/container's).
	CUDASources []facts.CUDASource `json:"cudaSources,omitempty"`
	// Inputs are what the scan listed and read, so that a manifest can tell
	// whether a rescan would see anything new.
	Inputs []inputStamp `json:"inputs"`
}

// inputStamp identifies one version of a file or directory without reading
// it. Missing marks a place looked at and found empty; Names is a
// directory's listingDigest, which holds when only its time changed (a GPU
// node's runtime injects driver files).
type inputStamp struct {
	Path    string `json:"path"`
	Dir     bool   `json:"dir,omitempty"`
	Missing bool   `json:"missing,omitempty"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"modTime"` // Unix nanoseconds
	Names   string `json:"names,omitempty"`
}

// scanKeys are the variables a scan reads (envvars' Scan rows); a manifest
// records their values.
var scanKeys = envvars.Scanned()

// scanFileFunc reads a library's fatbins; fatbin.ScanFile outside tests.
type scanFileFunc func(path string) (fatbin.Result, error)

// Bounds on a pathological image; past one the scan stops that part and
// warns.
const (
	// RuntimeScanBudget is how long a run-time scan may take: the
	// preflight's deadline also covers the NVML probe, and a slower image
	// should bake its manifest, which scans without a budget.
	RuntimeScanBudget = 5 * time.Second
	// maxSearchPathEntries bounds PYTHONPATH and LD_LIBRARY_PATH: each entry
	// costs a listing per framework and library.
	maxSearchPathEntries = 256
	maxSourceFile        = 4 << 20 // a version file or header; real ones are a few KiB
	maxEntriesListed     = 1 << 16 // directory entries held over the whole scan
)

// scan scans the image under root, reading only env's scanKeys. It never
// fails: what cannot be read is missing, and the warnings say why. A
// budget above zero stops it once that much time has passed.
func scan(root fsroot.Root, env map[string]string, scanFile scanFileFunc, budget time.Duration) (Result, []string) {
	return scanKnown(root, env, nil, scanFile, budget, nil)
}

// scanKnown is scan reusing the kernel scans in known for the libraries
// whose identity is unchanged.
func scanKnown(root fsroot.Root, env map[string]string, command []string, scanFile scanFileFunc, budget time.Duration, known map[libraryKey]facts.KernelLibrary) (Result, []string) {
	env = envSubset(env) // what a manifest records, so it goes stale on any change
	s := &scanner{root: root, env: env, command: command, scanFile: scanFile, seen: map[string]bool{}, views: map[string]*view{}, budget: budget, known: known}
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
	command  []string
	scanFile scanFileFunc
	res      Result
	warnings []string
	seen     map[string]bool // paths stamped
	// listings, dists and dynamics cache what every framework asks again.
	listings      map[string][]string
	entriesListed int
	listingsFull  bool
	dists         map[string]map[string]distInfo // by site-packages directory
	dynamics      map[string]dynamicRead
	views         map[string]*view // each framework's environment, by its Location
	budget        time.Duration
	deadline      time.Time
	stopped       bool
	listed        int
	// known are kernel scans by file identity, this scan's and those of the
	// manifest it replaces.
	known  map[libraryKey]facts.KernelLibrary
	loader *ldso.Env
	roots  map[string][]string // each framework's closure roots, by its Location
}

// outOfTime reports whether the scan's budget is spent, warning once.
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

// stamp records p among the inputs.
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

// list returns the names in directory dir, nil when it is missing, and
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
			// Most places searched do not exist: no second stat.
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
// key, at most maxSearchPathEntries, and a warning when there were more.
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
