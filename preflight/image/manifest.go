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

// defaultManifestPath is where bake writes the manifest inside the image.
const defaultManifestPath = "/etc/gpu-preflight/image.json"

// manifestSchemaVersion changes when an older shim's manifest can no longer
// be read as it was meant; LoadWithin then rescans.
const manifestSchemaVersion = 4

// Manifest is a scan's result recorded at image build time, with what tells
// at run time whether it still holds.
type Manifest struct {
	SchemaVersion int       `json:"schemaVersion"`
	BuiltAt       string    `json:"builtAt"`
	Tool          BuildInfo `json:"tool"`
	Result
	Archs []string `json:"archs"`
	// Libraries' SHA-256 is taken at bake; a load compares size and time.
	Libraries []bakedLibrary `json:"libraries"`
	// Env holds the scanKeys set; an absent key was unset.
	Env      map[string]string `json:"env"`
	Warnings []string          `json:"warnings,omitempty"`
}

// BuildInfo names the tool that baked a manifest and when.
type BuildInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	// Time is when the bake ran (zero: now), written as Manifest.BuiltAt.
	Time time.Time `json:"-"`
}

// bakedLibrary is one scanned kernel library as baked.
type bakedLibrary struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"modTime"` // Unix nanoseconds
	SHA256  string `json:"sha256"`
}

// Bake scans the image under root and returns its manifest. It fails only
// when a kernel library cannot be hashed: a manifest describes exactly the
// files it names.
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

// WriteManifest writes m to path on this machine, not under a root,
// replacing the file atomically.
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

// maxManifestBytes bounds the manifest read: bake writes a few hundred KiB
// at most.
const maxManifestBytes = 4 << 20

// manifestLimits bound its shape too: 4 MiB of one-letter members would
// decode into ten times that.
var manifestLimits = jsonbound.Limits{Bytes: maxManifestBytes, Depth: 32, Values: 200_000}

// loadManifest reads the manifest at path inside root.
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
// manifestPath inside root while its variables, site-packages and stamps
// are unchanged (no library is opened), else a scan that stops after
// budget (at once for zero or less), its warnings starting with why. source
// is facts.ScanFromManifest or facts.ScanFromImage.
func LoadWithin(root fsroot.Root, env map[string]string, manifestPath string, budget time.Duration, command ...string) (res Result, source string, warnings []string) {
	return load(root, env, manifestPath, fatbin.ScanFile, max(budget, time.Nanosecond), command...)
}

func load(root fsroot.Root, env map[string]string, manifestPath string, scanFile scanFileFunc, budget time.Duration, command ...string) (Result, string, []string) {
	m, err := loadManifest(root, manifestPath)
	var why string
	var known map[libraryKey]facts.KernelLibrary
	switch {
	case fsroot.Missing(err):
		why = fmt.Sprintf("no image manifest at %s: scanned the image (run `gpu-preflight bake` in the Dockerfile to skip the scan)", manifestPath)
	case err != nil:
		why = fmt.Sprintf("image manifest unusable, scanned the image instead: %v", err)
	default:
		if stale := m.stale(root, env, command); stale != nil {
			why = fmt.Sprintf("image manifest %s is out of date (%v): scanned the image instead", manifestPath, stale)
			// Its kernel libraries are reused where still the same files.
			known = knownLibraries(m)
		}
	}
	if why == "" {
		return m.Result, facts.ScanFromManifest, nil
	}
	res, warnings := scanKnown(root, env, command, scanFile, budget, known)
	return res, facts.ScanFromImage, append([]string{why}, warnings...)
}

// errStale is wrapped by every reason stale gives.
var errStale = errors.New("changed since bake")

// stale returns why m no longer describes the image, or nil.
func (m Manifest) stale(root fsroot.Root, env map[string]string, command []string) error {
	now := envSubset(env)
	for _, k := range scanKeys {
		// A shell exports PWD and an exec-form start does not: what the
		// working directory changes, the environments found, is compared.
		if k == "PWD" {
			continue
		}
		if now[k] != m.Env[k] {
			return fmt.Errorf("%w: %s is %q, was %q", errStale, k, now[k], m.Env[k])
		}
	}
	if sp := sitePackageDirs(root, env, command); !slices.Equal(sp, m.SitePackages) {
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

// unixSeconds floors Unix nanoseconds to seconds: image layers keep whole
// seconds (moby's and containerd's tar writers truncate hdr.ModTime).
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
