// Package releases holds the frameworks' GPU builds as data, with where each
// row was read. What a driver runs is decided by preflight/check and
// preflight/compat.
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
	Framework string // facts.Framework's name: "torch"
	Version   string // "2.6.1", or "2.7" for every 2.7.x
	Kind      Kind
	CUDA      string // compiled against, "11.8"
	CuDNN     string
	Install   string   // the pip command or the image reference
	Archs     []string // compiled targets, where the source lists them
	Source    string
	Verified  bool // confirmed on the framework's own install pages or release notes
}

// Name is "torch 2.7 (CUDA 12.8, wheel)".
func (b Build) Name() string {
	return b.Framework + " " + b.Version + " (CUDA " + b.CUDA + ", " + string(b.Kind) + ")"
}

// Frameworks are the frameworks the table covers, in advise's order.
var Frameworks = []string{"paddlepaddle", "torch", "tensorflow", "jax"}

// For returns the builds of one framework, best first (Better).
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

// NativeFor returns the builds of framework a driver supporting driverCUDA
// runs natively, best first; minor-version and forward compatibility are
// the checks' business.
func NativeFor(framework, driverCUDA string) []Build {
	var out []Build
	for _, b := range For(framework) {
		if version.AtLeast(driverCUDA, b.CUDA) {
			out = append(out, b)
		}
	}
	return out
}

// numeric keeps a version's leading dotted numbers ("3.0.0b2" -> "3.0.0"):
// a pre-release sorts with its release.
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

// JAXPluginCUDA returns the CUDA the jax CUDA plugin of version was built
// with and where that was read; ok is false for a release not listed.
func JAXPluginCUDA(version string) (cuda, source string, ok bool) {
	base, _, _ := strings.Cut(version, "+")
	for _, r := range jaxPluginCUDA {
		if r.Version == base {
			return r.CUDA, r.Source, true
		}
	}
	return "", "", false
}
