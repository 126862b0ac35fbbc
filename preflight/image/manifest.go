package image

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonbound"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// defaultManifestPath is where `gpu-preflight bake` writes the manifest
// and where the shim looks for it, inside the image.
const defaultManifestPath = "/etc/gpu-preflight/image.json"

// manifestSchemaVersion changes when a manifest written by an older shim can
// no longer be read as it was meant; Load then rescans. Version 2: kernel
// images are what the runtime loads (no __nv_relfatbin, no device-link
// stubs) and each library records its fatbins; directories are stamped by
// the names they hold (inputStamp.Names). Version 3: the Python environments
// and each framework's environment, sys.path entry and CUDA runtime.
const manifestSchemaVersion = 3

// Manifest is the image manifest: a scan's result recorded at image build
// time, with what is needed to tell at run time whether it still holds.
type Manifest struct {
	SchemaVersion int `json:"schemaVersion"`
	// BuiltAt is when the manifest was baked, RFC 3339 UTC.
	BuiltAt string    `json:"builtAt"`
	Tool    BuildInfo `json:"tool"`
	Result
	// Archs are all frameworks' targets together, in architecture order.
	Archs []string `json:"archs"`
	// Libraries are the scanned kernel libraries with their SHA-256, taken
	// at bake time only (Load compares size and modification time).
	Libraries []bakedLibrary `json:"libraries"`
	// Env holds the values the scan read of scanKeys; absent keys were unset.
	Env map[string]string `json:"env"`
	// Warnings are what the scan at bake time warned about.
	Warnings []string `json:"warnings,omitempty"`
}

// BuildInfo names the tool that baked a manifest and when.
type BuildInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	// Time is when the bake ran; zero means now. Not written as such:
	// Manifest.BuiltAt holds it.
	Time time.Time `json:"-"`
}

// Library is one scanned kernel library as baked.
type bakedLibrary struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"modTime"` // Unix nanoseconds
	SHA256  string `json:"sha256"`
}

// Bake scans the image under root and returns its manifest, hashing each
// kernel library. It fails only when a library found by the scan cannot be
// read for hashing: a manifest must describe exactly the files it names.
func Bake(root fsroot.Root, env map[string]string, bi BuildInfo) (Manifest, error) {
	return bake(root, env, bi, fatbin.ScanFile)
}

func bake(root fsroot.Root, env map[string]string, bi BuildInfo, scanFile scanFileFunc) (Manifest, error) {
	res, warnings := scan(root, env, scanFile, 0)
	built := bi.Time
	if built.IsZero() {
		built = time.Now()
	}
	m := Manifest{
		SchemaVersion: manifestSchemaVersion,
		BuiltAt:       built.UTC().Format(time.RFC3339Nano),
		Tool:          BuildInfo{Version: bi.Version, Commit: bi.Commit},
		Result:        res,
		Env:           envSubset(env),
		Warnings:      warnings,
	}
	for _, f := range res.Frameworks {
		m.Archs = append(m.Archs, f.Archs...)
		for _, k := range f.Kernels {
			sum, err := hashFile(root, k.Path)
			if err != nil {
				return Manifest{}, fmt.Errorf("bake: hashing %s: %w", k.Path, err)
			}
			m.Libraries = append(m.Libraries, bakedLibrary{Path: k.Path, Size: k.Size, ModTime: k.ModTime, SHA256: sum})
		}
	}
	if len(m.Archs) > 0 {
		sortArchs(m.Archs)
		m.Archs = slices.Compact(m.Archs)
	}
	return m, nil
}

func hashFile(root fsroot.Root, p string) (string, error) {
	f, err := root.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// WriteManifest writes m to path on this machine (not under a root: bake
// may write outside the tree it scans), creating the directory. The file
// is replaced atomically, so a reader never sees half a manifest.
func WriteManifest(path string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("bake: encoding the manifest: %w", err)
	}
	b = append(b, '\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bake: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".image-*.json")
	if err != nil {
		return fmt.Errorf("bake: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("bake: writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("bake: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("bake: syncing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("bake: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("bake: %w", err)
	}
	return nil
}

// maxManifestBytes bounds the manifest loadManifest reads: bake writes a
// few KiB to a few hundred (one line per file it read); a larger file was
// not written by bake, and reading it whole would cost its size in memory.
const maxManifestBytes = 4 << 20

// manifestLimits bound the manifest's shape as maxManifestBytes bounds its
// size: 4 MiB of one-letter map members would decode into 44 MiB. A bake
// of a root holding Debian trixie's CUDA torch, NCCL and cuBLAS writes
// about 1 300 values.
var manifestLimits = jsonbound.Limits{Bytes: maxManifestBytes, Depth: 32, Values: 200_000}

// loadManifest reads the manifest at path inside root, refusing one larger
// than maxManifestBytes.
func loadManifest(root fsroot.Root, path string) (Manifest, error) {
	b, err := root.ReadFileMax(path, maxManifestBytes)
	if err != nil {
		return Manifest{}, err
	}
	var m Manifest
	if err := jsonbound.Unmarshal(b, &m, manifestLimits); err != nil {
		return Manifest{}, fmt.Errorf("image manifest %s: %w", path, err)
	}
	if m.SchemaVersion != manifestSchemaVersion {
		return Manifest{}, fmt.Errorf("image manifest %s: schema version %d, this gpu-preflight reads %d",
			path, m.SchemaVersion, manifestSchemaVersion)
	}
	return m, nil
}

// LoadWithin returns the image facts for a run: the manifest at
// manifestPath (inside root) when it still describes the image, else a
// fresh scan. source is facts.ScanFromManifest or facts.ScanFromImage; when it is a scan
// the warnings start with why the manifest was not used. A manifest holds
// when the environment variables the scan reads, the set of site-packages
// directories, and the size and modification time of every library,
// version file and directory the bake scan looked at are unchanged; no
// library is opened.
//
// The scan, when there is one, stops after budget (RuntimeScanBudget by
// default, less when PREFLIGHT_TIMEOUT is short) and a warning says so. A
// budget of zero or less stops the scan at once.
func LoadWithin(root fsroot.Root, env map[string]string, manifestPath string, budget time.Duration) (res Result, source string, warnings []string) {
	return load(root, env, manifestPath, fatbin.ScanFile, max(budget, time.Nanosecond))
}

func load(root fsroot.Root, env map[string]string, manifestPath string, scanFile scanFileFunc, budget time.Duration) (Result, string, []string) {
	m, err := loadManifest(root, manifestPath)
	var why string
	var known map[libraryKey]facts.KernelLibrary
	switch {
	case fsroot.Missing(err):
		why = fmt.Sprintf("no image manifest at %s: scanned the image (run `gpu-preflight bake` in the Dockerfile to skip the scan)", manifestPath)
	case err != nil:
		why = fmt.Sprintf("image manifest unusable, scanned the image instead: %v", err)
	default:
		if stale := m.stale(root, env); stale != nil {
			why = fmt.Sprintf("image manifest %s is out of date (%v): scanned the image instead", manifestPath, stale)
			// The kernel libraries it recorded are reused where their
			// size and modification time still match.
			known = knownLibraries(m)
		}
	}
	if why == "" {
		return m.Result, facts.ScanFromManifest, nil
	}
	res, warnings := scanKnown(root, env, scanFile, budget, known)
	return res, facts.ScanFromImage, append([]string{why}, warnings...)
}

// errStale is wrapped by every reason stale gives.
var errStale = errors.New("changed since bake")

// stale returns why m no longer describes the image, or nil.
func (m Manifest) stale(root fsroot.Root, env map[string]string) error {
	now := envSubset(env)
	for _, k := range scanKeys {
		if now[k] != m.Env[k] {
			return fmt.Errorf("%w: %s is %q, was %q", errStale, k, now[k], m.Env[k])
		}
	}
	if sp := sitePackageDirs(root, env); !slices.Equal(sp, m.SitePackages) {
		return fmt.Errorf("%w: Python package directories are %q, were %q", errStale, sp, m.SitePackages)
	}
	for _, l := range m.Libraries {
		if err := checkStamp(root, inputStamp{Path: l.Path, Size: l.Size, ModTime: l.ModTime}); err != nil {
			return err
		}
	}
	for _, st := range m.Inputs {
		if err := checkStamp(root, st); err != nil {
			return err
		}
	}
	return nil
}

// unixSeconds floors Unix nanoseconds to seconds.
//
// Modification times are compared to the second because image layers do
// not keep more: the build container's files have nanosecond times when
// bake runs, but the layer tar writers truncate them to whole seconds
// (moby pkg/archive FileInfoHeader and containerd's archive changeWriter
// both set hdr.ModTime = hdr.ModTime.Truncate(time.Second)), so the pulled
// image would never match a nanosecond stamp. Truncation keeps the second,
// so the floor of the baked time equals the extracted time.
func unixSeconds(ns int64) int64 {
	s := ns / 1e9
	if ns < 0 && ns%1e9 != 0 {
		s--
	}
	return s
}

// checkStamp compares what is at st.Path now with the stamp.
func checkStamp(root fsroot.Root, st inputStamp) error {
	fi, err := root.Stat(st.Path)
	switch {
	case st.Missing && err == nil:
		return fmt.Errorf("%w: %s appeared", errStale, st.Path)
	case st.Missing && fsroot.Missing(err):
		return nil
	case err != nil:
		return fmt.Errorf("%w: %s: %v", errStale, st.Path, err)
	case fi.IsDir() != st.Dir:
		return fmt.Errorf("%w: %s changed type", errStale, st.Path)
	case !st.Dir && fi.Size() != st.Size:
		return fmt.Errorf("%w: %s size %d, was %d", errStale, st.Path, fi.Size(), st.Size)
	case st.Dir && st.Names != "" && fi.ModTime().Unix() != unixSeconds(st.ModTime):
		// The time moved; what counts is whether the image's names did.
		entries, err := root.ReadDirNames(st.Path)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", errStale, st.Path, err)
		}
		if listingDigest(st.Path, entries) != st.Names {
			return fmt.Errorf("%w: %s holds other files than at bake time", errStale, st.Path)
		}
	case fi.ModTime().Unix() != unixSeconds(st.ModTime):
		return fmt.Errorf("%w: %s modified %s, was %s", errStale, st.Path,
			fi.ModTime().UTC().Format(time.RFC3339Nano), time.Unix(0, st.ModTime).UTC().Format(time.RFC3339Nano))
	}
	return nil
}
