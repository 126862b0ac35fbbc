// Package advise answers "what does this driver run, and what should I
// install?" and its converse for an image. Every verdict is the checks'
// applied to the node and to one build of preflight/releases, so advise and
// check cannot disagree.
package advise

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/releases"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// Node is the host advice is for.
type Node struct {
	Driver string `json:"driver"`          // "525.60.13"
	CUDA   string `json:"cuda"`            // "" takes it from the driver-branch table
	GPU    string `json:"gpu,omitempty"`   // a compute capability, "8.0"; "" when not known
	Brand  string `json:"brand,omitempty"` // the NVML brand; "" when not known
}

// Route is how a CUDA version or a build runs on the node, best first.
type Route int

// Routes.
const (
	Native       Route = iota // the driver supports its CUDA
	MinorVersion              // CUDA minor-version compatibility, with limits
	Forward                   // CUDA forward compatibility (cuda-compat package)
	Fails                     // it does not run
)

func (r Route) String() string {
	return [...]string{"native", "minor-version compatibility", "forward compatibility", "fails"}[r]
}

// MarshalText writes the route's name in JSON.
func (r Route) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// CUDARoute is one CUDA toolkit version and how it runs.
type CUDARoute struct {
	CUDA  string `json:"cuda"`
	Route Route  `json:"route"`
	Why   string `json:"why"`
}

// ForwardCompat says whether CUDA forward compatibility can carry newer CUDA
// versions on this node today, and why.
type ForwardCompat struct {
	Possible bool   `json:"possible"`
	Why      string `json:"why"`
}

// Verdict is one build on the node.
type Verdict struct {
	Build releases.Build `json:"build"`
	Route Route          `json:"route"`
	// Findings behind the verdict: framework-cuda (cuda-driver for images), gpu-arch when the GPU is known.
	Findings []check.Finding `json:"findings"`
}

// Why is the messages of the findings that are not a pass.
func (v Verdict) Why() string {
	var out []string
	for _, f := range v.Findings {
		if f.Status.Severity() > 0 {
			out = append(out, f.Message)
		}
	}
	return strings.Join(out, "; ")
}

// Advice is what ForDriver found.
type Advice struct {
	Node Node `json:"node"`
	// Branch is the driver's lifecycle row, when BranchKnown.
	Branch      compat.Branch `json:"branch"`
	BranchKnown bool          `json:"branchKnown"`
	// CUDA is each known toolkit version, newest first.
	CUDA    []CUDARoute   `json:"cudaVersions"`
	Forward ForwardCompat `json:"forwardCompatibility"`
	// Builds are every build of the release tables, per framework, best first.
	Builds []Verdict `json:"builds"`
}

// ForDriver returns the advice for node n on the day on.
func ForDriver(n Node, on time.Time) (Advice, error) {
	if !version.Valid(n.Driver) || strings.Count(n.Driver, ".") > 2 {
		return Advice{}, fmt.Errorf("driver version %q: want MAJOR.MINOR[.PATCH], e.g. 525.60.13", n.Driver)
	}
	if n.CUDA == "" {
		c, ok := compat.DriverCUDA(n.Driver)
		if !ok {
			return Advice{}, fmt.Errorf("driver %s: its CUDA version is not in the branch table; give it with --cuda (nvidia-smi prints it as \"CUDA Version\")", n.Driver)
		}
		n.CUDA = c
	} else if !version.Valid(n.CUDA) {
		return Advice{}, fmt.Errorf("CUDA version %q: want MAJOR.MINOR, e.g. 12.0", n.CUDA)
	}
	if n.GPU != "" && (!version.Valid(n.GPU) || !strings.Contains(n.GPU, ".")) {
		return Advice{}, fmt.Errorf("compute capability %q: want MAJOR.MINOR, e.g. 8.0", n.GPU)
	}
	a := Advice{Node: n}
	a.Branch, a.BranchKnown = compat.DriverLifecycle(n.Driver)
	a.Forward = forwardCompat(n, a.Branch, a.BranchKnown, on)

	toolkits := compat.Toolkits()
	for i := len(toolkits) - 1; i >= 0; i-- {
		a.CUDA = append(a.CUDA, cudaRoute(n, toolkits[i], a.Forward.Possible))
	}
	for _, fw := range releases.Frameworks {
		var vs []Verdict
		for _, b := range releases.For(fw) {
			vs = append(vs, judge(n, b, a.Forward.Possible))
		}
		sort.SliceStable(vs, func(i, j int) bool { return vs[i].Route < vs[j].Route })
		a.Builds = append(a.Builds, vs...)
	}
	return a, nil
}

// forwardCompat: a data-center GPU on a branch that is a forward
// compatibility target today can take a cuda-compat package.
func forwardCompat(n Node, br compat.Branch, known bool, on time.Time) ForwardCompat {
	var why []string
	ok := true
	switch compat.ForwardCompat(n.Brand) {
	case compat.Supported:
	case compat.Maybe:
		ok = false
		if n.Brand == "" {
			why = append(why, "it needs a data-center GPU, and the brand is not known (give --brand, the NVML brand: tesla, nvidia, ...)")
		} else {
			why = append(why, fmt.Sprintf("brand %s: only select professional SKUs support it", n.Brand))
		}
	default:
		ok = false
		why = append(why, fmt.Sprintf("brand %s: forward compatibility works on data-center GPUs only (CUDA error 803 elsewhere)", n.Brand))
	}
	target, tknown := compat.ForwardCompatTarget(version.Major(n.Driver), on)
	switch {
	case !known || !tknown:
		ok = false
		why = append(why, fmt.Sprintf("branch R%d is not in the driver lifecycle table, so whether it is a forward-compatibility target is unknown", version.Major(n.Driver)))
	case !target && br.Kind == compat.NewFeature:
		ok = false
		why = append(why, fmt.Sprintf("%s is a %s, which NVIDIA does not support as a forward-compatibility target", br.Name(), br.Kind))
	case !target:
		ok = false
		why = append(why, fmt.Sprintf("%s (%s) reached end of life %s, and NVIDIA supports forward compatibility only on Long Term Support and Production Branches within their support window", br.Name(), br.Kind.Short(), br.EndOfLifeText()))
	}
	if ok {
		return ForwardCompat{Possible: true, Why: fmt.Sprintf("%s is a %s in its support window and the GPU is a data-center GPU: install the cuda-compat package of the CUDA version the image needs (official CUDA images ship it in /usr/local/cuda/compat)", br.Name(), br.Kind)}
	}
	var names []string
	for _, b := range compat.SupportedBranches(on) {
		names = append(names, fmt.Sprintf("%s (%s, to %s)", b.Name(), b.Kind.Short(), b.EndOfLifeText()))
	}
	msg := "no: " + strings.Join(why, "; ")
	if len(names) > 0 {
		msg += "; supported branches today: " + strings.Join(names, ", ")
	}
	return ForwardCompat{Why: msg}
}

// input is the checks' view of node n running the given CUDA, frameworks and compat libraries.
func input(n Node, toolkit string, fws []facts.Framework, libs []facts.CompatLib) check.Input {
	var gpus []facts.GPU
	if n.GPU != "" || n.Brand != "" {
		gpus = []facts.GPU{{Index: 0, Brand: n.Brand, ComputeCapability: n.GPU}}
	}
	return check.Input{
		Facts: facts.Facts{
			Host: facts.Host{Driver: facts.Driver{Version: n.Driver, CUDAVersion: n.CUDA, Source: facts.DriverFromAdvise}, GPUs: gpus},
			Container: facts.Container{Env: map[string]string{}, CUDA: facts.CUDAToolkit{Version: toolkit},
				Frameworks: fws, Compat: libs},
		},
		Visible: gpus,
	}
}

// compatLib is the libcuda a cuda-compat package for cuda brings (compat.MinDriver).
func compatLib(cuda string) ([]facts.CompatLib, bool) {
	d, ok := compat.MinDriver(cuda)
	if !ok {
		return nil, false
	}
	return []facts.CompatLib{{Path: "/usr/local/cuda/compat/libcuda.so." + d, DriverVersion: d}}, true
}

// routeOf: error fails, warning is minor-version compatibility, else native.
func routeOf(fs []check.Finding) Route {
	worst := check.Pass
	for _, f := range fs {
		if f.Status.Severity() > worst.Severity() {
			worst = f.Status
		}
	}
	switch worst {
	case check.Error:
		return Fails
	case check.Warn:
		return MinorVersion
	}
	return Native
}

func cudaRoute(n Node, cuda string, forward bool) CUDARoute {
	f := check.CUDADriver.Run(input(n, cuda, nil, nil))
	r := CUDARoute{CUDA: cuda, Route: routeOf([]check.Finding{f}), Why: f.Message}
	if r.Route == Fails && forward {
		if libs, ok := compatLib(cuda); ok {
			if g := check.CUDADriver.Run(input(n, cuda, nil, libs)); g.Status != check.Error {
				r.Route, r.Why = Forward, g.Message
			}
		}
	}
	return r
}

func judge(n Node, b releases.Build, forward bool) Verdict {
	run := func(libs []facts.CompatLib) []check.Finding {
		fw := facts.Framework{Name: b.Framework, Version: b.Version, CUDAVersion: b.CUDA, Archs: slices.Clone(b.Archs)}
		toolkit := ""
		if b.Kind == releases.Image {
			toolkit = b.CUDA
		}
		in := input(n, toolkit, []facts.Framework{fw}, libs)
		fs := []check.Finding{check.FrameworkCUDA.Run(in)}
		if b.Kind == releases.Image {
			fs = append(fs, check.CUDADriver.Run(in))
		}
		return fs
	}
	v := Verdict{Build: b, Findings: run(nil)}
	v.Route = routeOf(v.Findings)
	if v.Route == Fails && forward {
		if libs, ok := compatLib(b.CUDA); ok {
			if fs := run(libs); routeOf(fs) != Fails {
				v.Route, v.Findings = Forward, fs
			}
		}
	}
	if n.GPU != "" {
		fw := facts.Framework{Name: b.Framework, Version: b.Version, CUDAVersion: b.CUDA, Archs: slices.Clone(b.Archs)}
		arch := check.GPUArch.Run(input(n, "", []facts.Framework{fw}, nil))
		v.Findings = append(v.Findings, arch)
		if arch.Status == check.Error {
			v.Route = Fails
		}
	}
	return v
}
