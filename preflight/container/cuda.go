package container

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonbound"
	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// Where the CUDA toolkit says its version, in the order they are tried
// (docs/sources.md, "CUDA stack versions on disk").
const (
	cudaDir         = "/usr/local/cuda"
	cudaVersionJSON = cudaDir + "/version.json" // 11.1-11.4 and later
	cudaVersionTxt  = cudaDir + "/version.txt"  // up to 11.0
	envCUDAVersion  = "CUDA_VERSION"            // set by the nvidia/cuda images
)

// cudartGlobs hold libcudart.so.X.Y.Z; the SONAME has two components
// (libcudart.so.11.0 for every 11.x), so only three count.
var cudartGlobs = []string{
	cudaDir + "/lib64/libcudart.so.*",
	cudaDir + "/targets/*/lib/libcudart.so.*",
}

// maxVersionFile bounds a version.json read; real ones are a few KiB.
const maxVersionFile = 1 << 20

// ParseVersionJSON reads /usr/local/cuda/version.json, {"cuda":{"version":
// "11.8.20220929"}, ...}: ver is "11.8", full cuda.version as written.
func ParseVersionJSON(data []byte) (ver, full string, err error) {
	var doc struct {
		CUDA *struct {
			Version string `json:"version"`
		} `json:"cuda"`
	}
	// NVIDIA's lists some forty components of a few values each.
	if err := jsonbound.Unmarshal(data, &doc, jsonbound.Limits{Bytes: maxVersionFile, Depth: 16, Values: 10_000}); err != nil {
		return "", "", fmt.Errorf("version.json: %w", err)
	}
	if doc.CUDA == nil {
		return "", "", errors.New(`version.json: no "cuda" entry`)
	}
	full = strings.TrimSpace(doc.CUDA.Version)
	ver, ok := majorMinor(full)
	if !ok {
		return "", "", fmt.Errorf("version.json: cuda.version (%d bytes) is not X.Y[.Z]", len(full)) // image text: not quoted
	}
	return ver, full, nil
}

// ParseVersionTxt reads /usr/local/cuda/version.txt, "CUDA Version 11.0.207"
// (a "CUDA Patch Version" line after it does not change it).
func ParseVersionTxt(data []byte) (ver, full string, err error) {
	for line := range strings.SplitSeq(string(data), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "CUDA Version ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) > 0 {
			full = f[0]
		}
		ver, ok := majorMinor(full)
		if !ok {
			return "", "", fmt.Errorf("version.txt: the CUDA Version (%d bytes) is not X.Y[.Z]", len(full))
		}
		return ver, full, nil
	}
	return "", "", errors.New(`version.txt: no "CUDA Version" line`)
}

// majorMinor returns "X.Y" of a version of two or more numeric components
// ("12.2.2.009" -> "12.2"); every component must fit version.Compare.
func majorMinor(s string) (string, bool) {
	if !version.Valid(s) {
		return "", false
	}
	if _, err := version.Compare(s, s); err != nil { // Compare(s, s) walks every component
		return "", false
	}
	f := strings.Split(s, ".")
	if len(f) < 2 {
		return "", false
	}
	major, err1 := strconv.ParseUint(f[0], 10, 32)
	minor, err2 := strconv.ParseUint(f[1], 10, 32)
	if err1 != nil || err2 != nil {
		return "", false
	}
	return fmt.Sprintf("%d.%d", major, minor), true
}

// cudaLinkVersion returns X.Y of a versioned toolkit's directory, "cuda-X.Y",
// by hand: a regexp compiled at start-up costs more than the CUDA lookup.
func cudaLinkVersion(name string) (string, bool) {
	v, ok := strings.CutPrefix(name, "cuda-")
	major, minor, two := strings.Cut(v, ".")
	if !ok || !two || !allDigits(major) || !allDigits(minor) {
		return "", false
	}
	return v, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// gatherCUDA finds the toolkit's version, from the most authoritative source down.
func gatherCUDA(root fsroot.Root, env map[string]string) (facts.CUDAToolkit, []string) {
	var warns []string
	for _, f := range []struct {
		path  string
		parse func([]byte) (string, string, error)
	}{
		{cudaVersionJSON, ParseVersionJSON},
		{cudaVersionTxt, ParseVersionTxt},
	} {
		data, err := root.ReadFileMax(f.path, maxVersionFile)
		if err == nil {
			var ver, full string
			ver, full, err = f.parse(data)
			if err == nil {
				return facts.CUDAToolkit{Version: ver, Full: full, Source: f.path, Kind: facts.CUDAFromToolkit}, warns
			}
			err = fmt.Errorf("%s: %w", f.path, err)
		}
		if !fsroot.Missing(err) {
			warns = append(warns, fmt.Sprintf("cuda toolkit: %v", err))
		}
	}

	// /usr/local/cuda -> /etc/alternatives/cuda -> /usr/local/cuda-12.2,
	// counted only where its target is there.
	if target, w := followLinks(root, cudaDir); target != "" && exists(root, cudaDir) {
		if v, ok := cudaLinkVersion(path.Base(target)); ok {
			if ver, ok := majorMinor(v); ok {
				return facts.CUDAToolkit{Version: ver, Source: cudaDir + " -> " + target, Kind: facts.CUDAFromToolkit}, append(warns, w...)
			}
		}
	} else {
		warns = append(warns, w...)
	}

	var best, bestPath string
	for _, g := range cudartGlobs {
		libs, _ := root.Glob(g)
		for _, lib := range libs {
			v := strings.TrimPrefix(path.Base(lib), "libcudart.so.")
			if _, ok := majorMinor(v); !ok || strings.Count(v, ".") < 2 {
				continue
			}
			if c, err := version.Compare(v, best); err == nil && (best == "" || c > 0) {
				best, bestPath = v, lib
			}
		}
	}
	if ver, ok := majorMinor(best); ok {
		return facts.CUDAToolkit{Version: ver, Full: best, Source: bestPath, Kind: facts.CUDAFromToolkit}, warns
	}

	if v, ok := env[envCUDAVersion]; ok {
		if ver, ok := majorMinor(strings.TrimSpace(v)); ok {
			return facts.CUDAToolkit{Version: ver, Full: strings.TrimSpace(v), Source: facts.CUDAFromEnvSource, Kind: facts.CUDAFromEnv}, warns
		}
		if v != "" {
			warns = append(warns, fmt.Sprintf("cuda toolkit: %s=%s is not X.Y[.Z]", envCUDAVersion, truncate.Quote(v, truncate.MessageBytes)))
		}
	}
	return facts.CUDAToolkit{}, warns
}

// followLinks returns the end of the link chain from p, or "" when p is no link.
func followLinks(root fsroot.Root, p string) (string, []string) {
	const maxHops = 8
	last := ""
	for range maxHops {
		target, err := root.Readlink(p)
		if err != nil {
			// EINVAL: p is not a link, the chain ends here.
			if fsroot.Missing(err) || errors.Is(err, syscall.EINVAL) {
				return last, nil
			}
			return last, []string{fmt.Sprintf("cuda toolkit: %v", err)}
		}
		if !strings.HasPrefix(target, "/") {
			target = path.Join(path.Dir(p), target)
		}
		p = path.Clean(target)
		last = p
	}
	return last, nil
}

// compatDirs: cuda-compat-X-Y installs to /usr/local/cuda-X.Y/compat, and NGC
// images load from /usr/local/cuda/compat/lib (docs/sources.md).
var compatDirs = []string{cudaDir + "/compat", cudaDir + "/compat/lib"}

// gatherCompat lists the compat directories' libcuda.so.<driver version>;
// the libcuda.so.1 link only when it is all there is (its target names it).
func gatherCompat(root fsroot.Root) ([]facts.CompatLib, []string) {
	var libs []facts.CompatLib
	var warns []string
	seen := map[string]bool{}
	add := func(p, ver string) {
		host, err := root.Resolve(p)
		if err != nil {
			warns = append(warns, fmt.Sprintf("compat: %v", err))
			return
		}
		if !seen[host] {
			seen[host] = true
			libs = append(libs, facts.CompatLib{Path: p, DriverVersion: ver})
		}
	}
	for _, dir := range compatDirs {
		names, _ := root.Glob(dir + "/libcuda.so.*")
		found := false
		for _, p := range names {
			if v := compatVersion(path.Base(p)); v != "" {
				add(p, v)
				found = true
			}
		}
		if found {
			continue
		}
		link := dir + "/libcuda.so.1"
		target, w := followLinks(root, link)
		warns = append(warns, w...)
		if target == "" {
			if exists(root, link) {
				warns = append(warns, fmt.Sprintf("compat: %s is not a link to a libcuda.so.<driver version>; its driver version is unknown", link))
			}
			continue
		}
		if v := compatVersion(path.Base(target)); v != "" {
			if exists(root, target) {
				add(target, v)
				continue
			}
		}
		warns = append(warns, fmt.Sprintf("compat: %s -> %s names no existing libcuda.so.<driver version>", link, target))
	}
	return libs, warns
}

// compatVersion returns the driver version in "libcuda.so.535.129.03", else "".
func compatVersion(name string) string {
	v, ok := strings.CutPrefix(name, "libcuda.so.")
	if !ok || !version.Valid(v) || !strings.Contains(v, ".") || strings.HasSuffix(v, ".") || strings.Contains(v, "..") {
		return ""
	}
	if _, err := version.Compare(v, v); err != nil { // Compare(v, v) walks every component
		return ""
	}
	return v
}

func exists(root fsroot.Root, p string) bool {
	_, err := root.Stat(p)
	return err == nil
}
