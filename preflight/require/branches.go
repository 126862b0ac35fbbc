package require

import (
	"sort"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// Branch is a driver range accepted through the forward-compatibility terms
// of official images, "brand=B,driver>=N,driver<M" (docs/sources.md).
type Branch struct {
	Min, Max string
	// Brands of the terms for this range, as written, first appearance
	// first, without case-insensitive duplicates.
	Brands []string
	// AnyBrand: a term for this range has no brand factor.
	AnyBrand bool
}

// String names the range: "470.x" for driver>=470,driver<471, else ">=N,<M".
func (b Branch) String() string {
	lo, err1 := strconv.ParseUint(b.Min, 10, 32)
	hi, err2 := strconv.ParseUint(b.Max, 10, 32)
	if err1 == nil && err2 == nil && hi == lo+1 {
		return b.Min + ".x"
	}
	return ">=" + b.Min + ",<" + b.Max
}

// Accepts reports whether a valid driver falls in the range, whatever the brand.
func (b Branch) Accepts(driver string) bool {
	return version.AtLeast(driver, b.Min) && version.Less(driver, b.Max)
}

// Branches lists the distinct driver ranges value accepts through terms of
// one driver>=N, one driver<M and at most one brand=B factor, sorted, for
// messages such as "also accepts drivers 470.x, 535.x on data-center brands".
func Branches(value string) []Branch {
	var out []Branch
	index := map[[2]string]int{}
	brands := map[[3]string]bool{} // (lo, hi, lower-case brand) already listed
	for term := range tokens(value, ' ') {
		lo, hi, brand, ok := branchTerm(term)
		if !ok {
			continue
		}
		key := [2]string{lo, hi}
		i, seen := index[key]
		if !seen {
			i = len(out)
			index[key] = i
			out = append(out, Branch{Min: lo, Max: hi})
		}
		switch {
		case brand == "":
			out[i].AnyBrand = true
		case !brands[[3]string{lo, hi, strings.ToLower(brand)}]:
			brands[[3]string{lo, hi, strings.ToLower(brand)}] = true
			out[i].Brands = append(out[i].Brands, brand)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if c := version.MustCompare(out[i].Min, out[j].Min); c != 0 {
			return c < 0
		}
		return version.MustCompare(out[i].Max, out[j].Max) < 0
	})
	return out
}

// branchTerm recognises a forward-compatibility term; its versions are
// valid, which Branches' sort relies on.
func branchTerm(term string) (lo, hi, brand string, ok bool) {
	var nMin, nMax, nBrand int
	for text := range tokens(term, ',') {
		f := parseFactor(text)
		if f.problem != "" {
			return "", "", "", false
		}
		if p, _ := f.valueProblem(); p != "" {
			return "", "", "", false
		}
		switch {
		case f.prop == propDriver && f.op == ">=":
			lo = f.value
			nMin++
		case f.prop == propDriver && f.op == "<":
			hi = f.value
			nMax++
		case f.prop == propBrand && f.op == "=":
			brand = f.value
			nBrand++
		default:
			return "", "", "", false
		}
	}
	if nMin != 1 || nMax != 1 || nBrand > 1 {
		return "", "", "", false
	}
	return lo, hi, brand, true
}

// CUDAFloor returns the first cuda>=X.Y factor's value ("12.8"), or "". In
// official images it is the first term: the driver CUDA that satisfies
// the requirement whatever the GPU.
func CUDAFloor(value string) string {
	for term := range tokens(value, ' ') {
		for text := range tokens(term, ',') {
			f := parseFactor(text)
			if f.problem != "" || f.prop != propCUDA || f.op != ">=" {
				continue
			}
			if p, _ := f.valueProblem(); p == "" {
				return f.value
			}
		}
	}
	return ""
}
