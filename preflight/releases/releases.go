// Package releases holds the frameworks' GPU builds as data: which
// PaddlePaddle images and wheels, PyTorch wheels, TensorFlow and JAX
// packages exist for which CUDA version, with where each row was read.
//
// It only states facts; what a driver can run is decided by the checks
// (preflight/check) and the compatibility tables (preflight/compat).
package releases

import (
	"sort"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// Kind is how a build is installed.
type Kind string

// Kinds of builds.
const (
	Wheel Kind = "wheel" // a pip package
	Image Kind = "image" // a container image
)

// Build is one installable GPU build of a framework.
type Build struct {
	// Framework uses the names of facts.Framework: "paddlepaddle",
	// "torch", "tensorflow", "jax".
	Framework string
	// Version is the framework release ("2.6.1", "2.7" for every 2.7.x).
	Version string
	Kind    Kind
	// CUDA is the CUDA version the build is compiled against, "11.8".
	CUDA  string
	CuDNN string
	// Install is the pip command or the image reference.
	Install string
	// Archs are the compiled GPU targets ("sm_80", "compute_90") where the
	// source lists them; empty when it does not.
	Archs []string
	// Source names where the row was read.
	Source string
	// Verified is false for a row that could not be confirmed on the
	// framework's own install pages or release notes.
	Verified bool
}

// Name is "torch 2.7 (CUDA 12.8, wheel)".
func (b Build) Name() string {
	return b.Framework + " " + b.Version + " (CUDA " + b.CUDA + ", " + string(b.Kind) + ")"
}

// Frameworks are the frameworks the table covers, in the order advise
// reports them.
var Frameworks = []string{"paddlepaddle", "torch", "tensorflow", "jax"}

// For returns the builds of one framework (facts.Framework name), newest
// framework release first and, within a release, the newest CUDA first.
func For(framework string) []Build {
	var out []Build
	for _, b := range builds() {
		if b.Framework == framework {
			out = append(out, b)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return Better(out[i], out[j]) })
	return out
}

// Better orders two builds of a framework: the newer framework release
// first, then the newer CUDA, then images after wheels.
func Better(a, b Build) bool {
	if c, err := version.Compare(numeric(a.Version), numeric(b.Version)); err == nil && c != 0 {
		return c > 0
	}
	if c, err := version.Compare(a.CUDA, b.CUDA); err == nil && c != 0 {
		return c > 0
	}
	return a.Kind == Wheel && b.Kind == Image
}

// NativeFor returns the builds of framework whose CUDA version a driver
// supporting CUDA driverCUDA runs natively (build CUDA <= driver CUDA),
// best first. It is the table lookup behind "install this GPU package";
// whether a build also runs through minor-version or forward compatibility
// is the checks' business.
func NativeFor(framework, driverCUDA string) []Build {
	var out []Build
	for _, b := range For(framework) {
		if version.AtLeast(driverCUDA, b.CUDA) {
			out = append(out, b)
		}
	}
	return out
}

// numeric keeps the leading dotted numbers of a version ("3.0.0b2" ->
// "3.0.0"), for ordering; a pre-release sorts with its release.
func numeric(v string) string {
	end := 0
	for end < len(v) && (v[end] == '.' || '0' <= v[end] && v[end] <= '9') {
		end++
	}
	return strings.TrimRight(v[:end], ".")
}

// cuTag is the index name of a CUDA version: "11.8" -> "cu118".
func cuTag(cuda string) string {
	return "cu" + strings.ReplaceAll(version.Prefix(cuda, 2), ".", "")
}

// JAXPluginCUDA returns the CUDA the jax CUDA plugin of release version
// ("0.4.30", a local tag ignored) was built with, and where that was
// read; ok is false for a release the table does not list.
func JAXPluginCUDA(version string) (cuda, source string, ok bool) {
	base, _, _ := strings.Cut(version, "+")
	for _, r := range jaxPluginCUDA {
		if r.Version == base {
			return r.CUDA, r.Source, true
		}
	}
	return "", "", false
}
