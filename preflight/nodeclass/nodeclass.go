// Package nodeclass describes the GPU nodes an image can meet by the facts
// that decide whether it runs there: a driver version, a compute capability
// and a brand. Driver versions fall into classes between the points where
// some rule can change its answer, so the checks run once per class.
package nodeclass

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
	"github.com/gpu-preflight/gpu-preflight/preflight/require"
)

// Version is a driver version's three components, as GPU Feature Discovery
// labels it ("570.26" is 570.26.0).
type Version [3]int64

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// Less orders versions.
func Less(a, b Version) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// Next is the version right after v.
func (v Version) Next() Version { v[2]++; return v }

// Parse reads a version of one to three numeric components.
func Parse(s string) (Version, bool) {
	var v Version
	parts := strings.Split(s, ".")
	if len(parts) > 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 || n > 1<<40 {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

// Image is what is judged: the image's facts, the user's options, and the
// policy under which a node is refused where it would stop the job.
type Image struct {
	Container facts.Container
	Options   check.Options
	Policy    policy.Policy   // under strict a warning refuses the node too
	Ignore    map[string]bool // PREFLIGHT_IGNORE
}

// Checks are the rules about the driver and the GPU a node brings.
var Checks = []check.Check{check.CUDARequirement, check.CUDADriver, check.FrameworkCUDA, check.GPUArch}

// Brands are the brands of training GPUs, data-center first.
var Brands = []string{facts.BrandTesla, facts.BrandNvidia, facts.BrandQuadro, facts.BrandQuadroRTX, facts.BrandNvidiaRTX,
	facts.BrandGeForce, facts.BrandGeForceRTX, facts.BrandTITAN, facts.BrandTitanRTX}

// Input is the checks' view of img on a node with driver d and one GPU of
// capability cc ("" when unknown) and brand.
func Input(img Image, d Version, cc, brand string) check.Input {
	drv := facts.Driver{Version: d.String(), Source: facts.DriverFromNodeClass}
	if c, ok := compat.DriverCUDA(drv.Version); ok {
		drv.CUDAVersion = c
	} else if bs := compat.Branches(); d[0] > int64(bs[len(bs)-1]) {
		// A driver past the table supports at least its newest CUDA: judge
		// it by that lower bound, not as unknown.
		drv.CUDAVersion, _ = compat.DriverCUDA(strconv.Itoa(bs[len(bs)-1]))
	}
	var gpus []facts.GPU
	if cc != "" || brand != "" {
		gpus = []facts.GPU{{Index: 0, ComputeCapability: cc, Brand: brand}}
	}
	return check.Input{Facts: facts.Facts{Host: facts.Host{Driver: drv, GPUs: gpus}, Container: img.Container},
		Visible: gpus, Options: img.Options}
}

// Judge runs Checks on img for one node.
func Judge(img Image, d Version, cc, brand string) []check.Finding {
	in := Input(img, d, cc, brand)
	out := make([]check.Finding, 0, len(Checks))
	for _, c := range Checks {
		out = append(out, c.Run(in))
	}
	return out
}

// Failed reports whether the findings stop the job under img's policy, as the shim decides.
func Failed(img Image, fs []check.Finding) bool {
	return slices.ContainsFunc(policy.Ignore(fs, img.Ignore), img.Policy.Blocks)
}

// A Classifier answers Admits for one image many times, keeping the costly
// requirement check's outcome per the facts its factors name.
type Classifier struct {
	img                   Image
	readsArch, readsBrand bool
	requirement           map[[3]string]check.Finding // by driver, cc, brand
}

// NewClassifier prepares a Classifier for img.
func NewClassifier(img Image) *Classifier {
	j := &Classifier{img: img, requirement: map[[3]string]check.Finding{}}
	for _, r := range check.Requirements(check.Input{Facts: facts.Facts{Container: img.Container}, Options: img.Options}) {
		for _, t := range require.Evaluate(r, require.Host{}, nil).Terms {
			for _, f := range t.Factors {
				j.readsArch = j.readsArch || f.Name == "arch"
				j.readsBrand = j.readsBrand || f.Name == "brand"
			}
		}
	}
	return j
}

func (j *Classifier) failed(d Version, cc, brand string) bool {
	in := Input(j.img, d, cc, brand)
	key := [3]string{d.String(), "", ""}
	if j.readsArch {
		key[1] = cc
	}
	if j.readsBrand {
		key[2] = brand
	}
	fs := make([]check.Finding, 0, len(Checks))
	for _, c := range Checks {
		if c.ID != check.CUDARequirement.ID {
			fs = append(fs, c.Run(in))
			continue
		}
		f, seen := j.requirement[key]
		if !seen {
			f = c.Run(in)
			j.requirement[key] = f
		}
		fs = append(fs, f)
	}
	return Failed(j.img, fs)
}

// Admits reports whether the image runs on some node of driver d and
// capability cc whatever its brand (an unknown brand is not the most
// lenient: forward compatibility needs a data-center one), and lists the
// brands on which it fails.
func (j *Classifier) Admits(d Version, cc string) (ok bool, failing []string) {
	ok = !j.failed(d, cc, "")
	for _, b := range Brands {
		if j.failed(d, cc, b) {
			failing = append(failing, b)
		}
	}
	return ok || len(failing) < len(Brands), failing
}

// Points returns the lower bounds of the driver classes, ascending: the
// tables' branches, the minor-version floors, the versions the image's
// requirements name, and the first version past the branch table.
func Points(img Image) []Version {
	var ps []Version
	add := func(s string) {
		if v, ok := Parse(s); ok {
			ps = append(ps, v)
		}
	}
	branches := compat.Branches()
	for _, b := range branches {
		add(strconv.Itoa(b))
	}
	add(strconv.Itoa(branches[len(branches)-1] + 10))
	for major := 10; major <= 20; major++ {
		if f, ok := compat.MVCFloor(major); ok {
			add(f)
		}
	}
	for _, r := range check.Requirements(check.Input{Facts: facts.Facts{Container: img.Container}, Options: img.Options}) {
		for _, t := range require.Evaluate(r, require.Host{}, nil).Terms {
			for _, f := range t.Factors {
				if f.Name != "driver" {
					continue
				}
				v, ok := Parse(f.Value)
				if !ok {
					continue
				}
				switch f.Op {
				case ">=", "<":
					ps = append(ps, v)
				case ">", "<=":
					ps = append(ps, v.Next())
				case "=", "!=":
					ps = append(ps, v, v.Next())
				}
			}
		}
	}
	sort.Slice(ps, func(i, j int) bool { return Less(ps[i], ps[j]) })
	return slices.Compact(ps)
}
