// Package affinity turns an image's requirements into a Kubernetes
// nodeAffinity over NVIDIA GPU Feature Discovery's labels, so the scheduler
// keeps a job off nodes gpu-preflight would stop. It restates no rule: it
// runs the checks once per driver class and compute capability
// (nodeclass) and admits what no check fails.
package affinity

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/nodeclass"
	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
)

// Labels names the GFD labels a driver version is matched on.
type Labels struct {
	DriverMajor, DriverMinor, DriverRevision string
}

// GFD's labels (NVIDIA/k8s-device-plugin docs/gpu-feature-discovery/README.md,
// internal/lm/nvml.go): the "-version" names since v0.15.0, the older ones
// still published beside them. Values are the version's own components
// ("03" stays "03"; a two-part version has an empty revision).
var (
	CurrentLabels    = Labels{"nvidia.com/cuda.driver-version.major", "nvidia.com/cuda.driver-version.minor", "nvidia.com/cuda.driver-version.revision"}
	DeprecatedLabels = Labels{"nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev"}
)

// Compute-capability labels, the same in every GFD version.
const (
	LabelComputeMajor = "nvidia.com/gpu.compute.major"
	LabelComputeMinor = "nvidia.com/gpu.compute.minor"
)

// Expr is one matchExpressions entry.
type Expr struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

// Term is one nodeSelectorTerm: its expressions are ANDed.
type Term struct {
	Exprs   []Expr
	Comment string // which nodes the term admits, for the YAML
}

// Affinity is the generated node affinity: its terms are ORed.
type Affinity struct {
	Terms         []Term
	Unconstrained bool     // every node passes: no affinity is needed
	LeftOut       []string // the factors no label carries, each a sentence
}

// Input is what the affinity is computed from: the image's facts, the
// user's extra requirement, and the labels to match.
type Input struct {
	Container facts.Container
	Options   check.Options
	// Policy and Ignore: the affinity refuses the nodes where they would stop the job.
	Policy policy.Policy
	Ignore map[string]bool
	Labels Labels
}

type version3 = nodeclass.Version

// span is a run of admitted driver classes: [lo, hi), or open.
type span struct {
	lo, hi version3
	open   bool // no upper bound
}

// For computes the affinity of in. A class is admitted when the checks pass
// it whatever the brand (nodeclass.Admits): no label carries the brand.
func For(in Input) (Affinity, error) {
	if in.Labels == (Labels{}) {
		in.Labels = CurrentLabels
	}
	img := nodeclass.Image{Container: in.Container, Options: in.Options, Policy: in.Policy, Ignore: in.Ignore}
	ps := nodeclass.Points(img)
	judge := nodeclass.NewClassifier(img)
	ccs := compat.ComputeCapabilities()
	admitted := map[string][]span{}
	// brandFails[i]: the brands some admitted capability fails on in class i.
	brandFails := make([][]string, len(ps))
	for _, cc := range ccs {
		var spans []span
		for i, p := range ps {
			ok, failing := judge.Admits(p, cc)
			if !ok {
				continue
			}
			for _, b := range failing {
				if !slices.Contains(brandFails[i], b) {
					brandFails[i] = append(brandFails[i], b)
				}
			}
			s := span{lo: p, open: i == len(ps)-1}
			if !s.open {
				s.hi = ps[i+1]
			}
			if n := len(spans); n > 0 && !spans[n-1].open && spans[n-1].hi == s.lo {
				spans[n-1].hi, spans[n-1].open = s.hi, s.open
				continue
			}
			spans = append(spans, s)
		}
		if len(spans) > 0 {
			admitted[cc] = spans
		}
	}
	if len(admitted) == 0 {
		return Affinity{}, fmt.Errorf("no node can run this image: every driver branch and GPU fails a check (run gpu-preflight advise --root to see why)")
	}
	var a Affinity
	var notes []string
	for i := 0; i < len(ps); i++ {
		if len(brandFails[i]) == 0 {
			continue
		}
		j := i
		for j+1 < len(ps) && slices.Equal(brandFails[j+1], brandFails[i]) {
			j++
		}
		s := span{lo: ps[i], open: j == len(ps)-1}
		if !s.open {
			s.hi = ps[j+1]
		}
		notes = append(notes, fmt.Sprintf("%s fails on brand %s", spanText(s), strings.Join(brandFails[i], ", ")))
		i = j
	}
	if len(notes) > 0 {
		a.LeftOut = append(a.LeftOut, "brand is left out: no GFD label carries the NVML brand (gpu.product names the model), so these terms also admit nodes whose brand the image's requirement or forward compatibility refuses, and gpu-preflight stops the job there: "+strings.Join(notes, "; "))
	}

	type group struct {
		spans []span
		ccs   []string
	}
	var groups []group
	for _, cc := range ccs {
		sp, ok := admitted[cc]
		if !ok {
			continue
		}
		found := false
		for i := range groups {
			if slices.Equal(groups[i].spans, sp) {
				groups[i].ccs = append(groups[i].ccs, cc)
				found = true
				break
			}
		}
		if !found {
			groups = append(groups, group{spans: sp, ccs: []string{cc}})
		}
	}
	if len(groups) == 1 && len(groups[0].ccs) == len(ccs) && len(groups[0].spans) == 1 && groups[0].spans[0].lo == ps[0] && groups[0].spans[0].open {
		a.Unconstrained = true
		return a, nil
	}
	for _, g := range groups {
		ccExprs, ccTexts := computeExprs(g.ccs, len(g.ccs) == len(ccs))
		for _, s := range g.spans {
			for _, dx := range driverExprs(in.Labels, s) {
				for i, cx := range ccExprs {
					exprs := append(append([]Expr(nil), dx...), cx...)
					a.Terms = append(a.Terms, Term{Exprs: exprs, Comment: spanText(s) + ccTexts[i]})
				}
			}
		}
	}
	return a, nil
}

// spanText is "driver 470.x", "driver >= 525.60.13, < 526" or "driver >= 570".
func spanText(s span) string {
	if s.open {
		return "driver >= " + short(s.lo)
	}
	if s.lo[1] == 0 && s.lo[2] == 0 && s.hi == (version3{s.lo[0] + 1, 0, 0}) {
		return fmt.Sprintf("driver %d.x", s.lo[0])
	}
	return "driver >= " + short(s.lo) + ", < " + short(s.hi)
}

func short(v version3) string {
	switch {
	case v[1] == 0 && v[2] == 0:
		return strconv.FormatInt(v[0], 10)
	case v[2] == 0:
		return fmt.Sprintf("%d.%d", v[0], v[1])
	}
	return v.String()
}

// computeExprs writes compute capabilities as expression sets, one per term,
// with what each covers: a major with every known minor is matched alone.
func computeExprs(ccs []string, all bool) ([][]Expr, []string) {
	if all {
		return [][]Expr{nil}, []string{""}
	}
	known := map[string][]string{}
	var majors []string
	for _, cc := range compat.ComputeCapabilities() {
		maj, min, _ := strings.Cut(cc, ".")
		if _, ok := known[maj]; !ok {
			majors = append(majors, maj)
		}
		known[maj] = append(known[maj], min)
	}
	have := map[string][]string{}
	for _, cc := range ccs {
		maj, min, _ := strings.Cut(cc, ".")
		have[maj] = append(have[maj], min)
	}
	// signature -> majors sharing it ("" = every minor).
	var sigs []string
	bySig := map[string][]string{}
	for _, maj := range majors {
		mins, ok := have[maj]
		if !ok {
			continue
		}
		sig := strings.Join(mins, ",")
		if slices.Equal(mins, known[maj]) {
			sig = ""
		}
		if _, ok := bySig[sig]; !ok {
			sigs = append(sigs, sig)
		}
		bySig[sig] = append(bySig[sig], maj)
	}
	var out [][]Expr
	var texts []string
	for _, sig := range sigs {
		exprs := []Expr{{Key: LabelComputeMajor, Operator: "In", Values: bySig[sig]}}
		var covered []string
		for _, maj := range bySig[sig] {
			for _, min := range have[maj] {
				covered = append(covered, maj+"."+min)
			}
		}
		if sig != "" {
			exprs = append(exprs, Expr{Key: LabelComputeMinor, Operator: "In", Values: strings.Split(sig, ",")})
		}
		out = append(out, exprs)
		texts = append(texts, "; compute capability "+strings.Join(covered, ", "))
	}
	return out, texts
}

// box is a block of driver versions: the components before len(fixed) equal
// fixed, the next lies in [lo, hi] (hi < 0: unbounded), the rest are free.
type box struct {
	fixed  []int64
	lo, hi int64
	ranged bool
}

// boxes splits [lo, hi) (hi ignored when open) into boxes.
func boxes(k int, prefix []int64, lo, hi version3, loFree, hiFree bool) []box {
	if k == 3 {
		// Every component fixed: in [lo, hi) only without an upper bound.
		if hiFree {
			return []box{{fixed: slices.Clone(prefix)}}
		}
		return nil
	}
	zero := func(v version3, from int) bool {
		for i := from; i < 3; i++ {
			if v[i] != 0 {
				return false
			}
		}
		return true
	}
	if !loFree && zero(lo, k) {
		loFree = true
	}
	if loFree && hiFree {
		return []box{{fixed: slices.Clone(prefix), lo: 0, hi: -1}}
	}
	if !hiFree && zero(hi, k) {
		return nil
	}
	a := int64(0)
	if !loFree {
		a = lo[k]
	}
	if !hiFree && hi[k] == a {
		return boxes(k+1, append(prefix, a), lo, hi, loFree, false)
	}
	var out []box
	mStart := a
	if !loFree && !zero(lo, k+1) {
		out = append(out, boxes(k+1, append(slices.Clone(prefix), a), lo, hi, false, true)...)
		mStart = a + 1
	}
	mEnd := int64(-1)
	var upper []box
	if !hiFree {
		mEnd = hi[k] - 1
		if !zero(hi, k+1) {
			upper = boxes(k+1, append(slices.Clone(prefix), hi[k]), lo, hi, true, false)
		}
	}
	if mEnd < 0 || mStart <= mEnd {
		out = append(out, box{fixed: slices.Clone(prefix), lo: mStart, hi: mEnd, ranged: true})
	}
	return append(out, upper...)
}

// driverExprs writes a span of driver versions as expression sets, one per term.
func driverExprs(l Labels, s span) [][]Expr {
	keys := [3]string{l.DriverMajor, l.DriverMinor, l.DriverRevision}
	var out [][]Expr
	for _, b := range boxes(0, nil, s.lo, s.hi, false, s.open) {
		var exprs []Expr
		revZero := true // whether the box admits revision 0
		for i, v := range b.fixed {
			exprs = append(exprs, equal(keys[i], v, i == 0)...)
			if i == 2 {
				revZero = v == 0
			}
		}
		if k := len(b.fixed); k < 3 && b.ranged && b.lo == b.hi {
			exprs = append(exprs, equal(keys[k], b.lo, k == 0)...)
			if k == 2 {
				revZero = b.lo == 0
			}
		} else if k < 3 && (b.ranged || b.hi >= 0) {
			if b.lo > 0 {
				exprs = append(exprs, Expr{Key: keys[k], Operator: "Gt", Values: []string{strconv.FormatInt(b.lo-1, 10)}})
				if k == 2 {
					revZero = false
				}
			}
			if b.hi >= 0 {
				exprs = append(exprs, Expr{Key: keys[k], Operator: "Lt", Values: []string{strconv.FormatInt(b.hi+1, 10)}})
			}
		}
		out = append(out, exprs)
		// GFD leaves the revision empty for a two-part driver version
		// ("570.26"), which Gt and Lt never match; such a driver is X.Y.0.
		if revZero && constrains(exprs, keys[2]) {
			alt := []Expr{}
			for _, e := range exprs {
				if e.Key != keys[2] {
					alt = append(alt, e)
				}
			}
			out = append(out, append(alt, Expr{Key: keys[2], Operator: "In", Values: []string{""}}))
		}
	}
	return out
}

func constrains(exprs []Expr, key string) bool {
	return slices.ContainsFunc(exprs, func(e Expr) bool { return e.Key == key })
}

// equal matches a label equal to v: In for the major (no leading zeros),
// Gt and Lt for the others, which may carry them ("03").
func equal(key string, v int64, major bool) []Expr {
	if major {
		return []Expr{{Key: key, Operator: "In", Values: []string{strconv.FormatInt(v, 10)}}}
	}
	out := []Expr{{Key: key, Operator: "Lt", Values: []string{strconv.FormatInt(v+1, 10)}}}
	if v > 0 {
		out = append([]Expr{{Key: key, Operator: "Gt", Values: []string{strconv.FormatInt(v-1, 10)}}}, out...)
	}
	return out
}
