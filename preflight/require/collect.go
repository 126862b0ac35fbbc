package require

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// Variables the toolkit reads (NVIDIA Container Toolkit internal/config/image/cuda_image.go).
const (
	EnvRequirePrefix  = "NVIDIA_REQUIRE_"
	EnvRequireJetpack = "NVIDIA_REQUIRE_JETPACK" // a prefix: excluded
	EnvRequireCUDA    = "NVIDIA_REQUIRE_CUDA"
	EnvDisableRequire = "NVIDIA_DISABLE_REQUIRE"
	EnvCUDAVersion    = "CUDA_VERSION"
)

// MaxToolkitRequirements is nvidia-container-cli's limit (libnvidia-container
// src/cli/cli.h: char *reqs[32]); the toolkit's hook passes each requirement
// as a --require flag, and one more fails with "too many requirements".
const MaxToolkitRequirements = 32

// Collect returns the requirements in env sorted by Var, as the toolkit's
// GetRequirements does: every NVIDIA_REQUIRE_* but NVIDIA_REQUIRE_JETPACK*,
// non-empty, all ANDed. A legacy image (CUDA_VERSION set, NVIDIA_REQUIRE_CUDA
// not) gets "cuda>=MAJOR.MINOR" from CUDA_VERSION. disabled is
// NVIDIA_DISABLE_REQUIRE as strconv.ParseBool reads it: no requirements at all.
// As for the toolkit, an unparsable CUDA_VERSION or more than
// MaxToolkitRequirements (empty ones count) is an error; a value of
// MaxValueBytes or more is a *LengthError, and nothing is returned.
func Collect(env map[string]string) (reqs []facts.Requirement, disabled bool, err error) {
	if v, ok := env[EnvDisableRequire]; ok {
		if d, perr := strconv.ParseBool(v); perr == nil && d {
			return nil, true, nil
		}
	}
	var long []string
	var passed []string // what the toolkit's hook passes as --require flags, empty values included
	for name, value := range env {
		if strings.HasPrefix(name, EnvRequirePrefix) && !strings.HasPrefix(name, EnvRequireJetpack) {
			passed = append(passed, name)
			if value == "" {
				continue // always satisfied: nothing to evaluate
			}
			reqs = append(reqs, facts.Requirement{Var: name, Value: value})
			if checkLength(name, value) != nil {
				long = append(long, name)
			}
		}
	}
	cv := env[EnvCUDAVersion]
	legacy := cv != "" && env[EnvRequireCUDA] == ""
	if legacy && checkLength(EnvCUDAVersion, cv) != nil {
		long = append(long, EnvCUDAVersion)
	}
	if len(long) > 0 {
		sort.Strings(long) // the first by name, whatever the map order
		return nil, false, checkLength(long[0], env[long[0]])
	}
	if legacy {
		mm, perr := legacyMajorMinor(cv)
		if perr != nil {
			return nil, false, fmt.Errorf("%s=%q: %v; the NVIDIA Container Toolkit fails on this image too (\"failed to get version: invalid CUDA version\"): set it to MAJOR[.MINOR[.PATCH]], e.g. 12.2.2, or set %s", EnvCUDAVersion, cv, perr, EnvRequireCUDA)
		}
		reqs = append(reqs, facts.Requirement{Var: EnvCUDAVersion, Value: "cuda>=" + mm})
		passed = append(passed, EnvCUDAVersion)
	}
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].Var < reqs[j].Var })
	if len(passed) > MaxToolkitRequirements {
		sort.Strings(passed)
		// Refusing here also keeps thousands of variables out of the record.
		return nil, false, fmt.Errorf("%d requirements (%s, %s, ... %s): nvidia-container-cli takes at most %d, empty ones included (the toolkit passes them too), and the NVIDIA Container Toolkit fails this image with \"input error: too many requirements\"; declare at most %d NVIDIA_REQUIRE_* variables",
			len(passed), passed[0], passed[1], passed[len(passed)-1], MaxToolkitRequirements, MaxToolkitRequirements)
	}
	return reqs, false, nil
}

// legacyMajorMinor is the toolkit's parseMajorMinorVersion: "v" + the value
// (one "v" dropped) must be valid golang.org/x/mod/semver syntax, and MAJOR
// and MINOR must fit in 32 bits. "11.6.2" -> "11.6", "11" -> "11.0".
func legacyMajorMinor(v string) (string, error) {
	major, minor, ok := semverMajorMinor(strings.TrimPrefix(v, "v"))
	if !ok {
		return "", fmt.Errorf("not a semantic version")
	}
	if _, err := strconv.ParseUint(major, 10, 32); err != nil {
		return "", fmt.Errorf("invalid major version %s", major)
	}
	if _, err := strconv.ParseUint(minor, 10, 32); err != nil {
		return "", fmt.Errorf("invalid minor version %s", minor)
	}
	return major + "." + minor, nil
}

func semverMajorMinor(v string) (major, minor string, ok bool) {
	major, v, ok = semverNumber(v)
	if !ok {
		return "", "", false
	}
	if v == "" {
		return major, "0", true
	}
	if v[0] != '.' {
		return "", "", false
	}
	minor, v, ok = semverNumber(v[1:])
	if !ok {
		return "", "", false
	}
	if v == "" {
		return major, minor, true
	}
	if v[0] != '.' {
		return "", "", false
	}
	_, v, ok = semverNumber(v[1:])
	if !ok {
		return "", "", false
	}
	if v != "" && v[0] == '-' {
		if v, ok = semverIdentifiers(v[1:], true); !ok {
			return "", "", false
		}
	}
	if v != "" && v[0] == '+' {
		if v, ok = semverIdentifiers(v[1:], false); !ok {
			return "", "", false
		}
	}
	return major, minor, v == ""
}

func semverNumber(v string) (num, rest string, ok bool) {
	i := 0
	for i < len(v) && '0' <= v[i] && v[i] <= '9' {
		i++
	}
	if i == 0 || (v[0] == '0' && i > 1) {
		return "", "", false
	}
	return v[:i], v[i:], true
}

// semverIdentifiers takes dot-separated [0-9A-Za-z-] identifiers off v, up
// to a '+' when prerelease (no leading zeros then) or the end.
func semverIdentifiers(v string, prerelease bool) (rest string, ok bool) {
	end := len(v)
	if prerelease {
		if i := strings.IndexByte(v, '+'); i >= 0 {
			end = i
		}
	}
	for _, id := range strings.Split(v[:end], ".") {
		if id == "" {
			return "", false
		}
		numeric := true
		for i := 0; i < len(id); i++ {
			c := id[i]
			switch {
			case '0' <= c && c <= '9':
			case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '-':
				numeric = false
			default:
				return "", false
			}
		}
		if prerelease && numeric && len(id) > 1 && id[0] == '0' {
			return "", false
		}
	}
	return v[end:], true
}
