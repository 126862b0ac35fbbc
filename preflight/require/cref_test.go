package require

import "math"

// This file is an independent reference for the fuzz and table tests: a
// line-by-line transliteration of libnvidia-container's dsl_evaluate,
// evaluate_rule and dsl_compare_version (src/cli/dsl.c) and of the check
// functions of src/cli/configure.c, over C-style string primitives
// (strsep, strcspn, strspn, strncmp, strtoumax, strcasecmp) written here.
// Inputs must not contain NUL bytes, which C strings cannot hold.

// cstr is a char pointer that may be NULL.
type cstr struct {
	s    string
	null bool
}

// strsep returns the token before the first delimiter and advances p past
// it; at the last token it sets p to NULL.
func strsep(p *cstr, delim byte) cstr {
	if p.null {
		return cstr{null: true}
	}
	for i := 0; i < len(p.s); i++ {
		if p.s[i] == delim {
			tok := cstr{s: p.s[:i]}
			p.s = p.s[i+1:]
			return tok
		}
	}
	tok := cstr{s: p.s}
	*p = cstr{null: true}
	return tok
}

func strspn(s, accept string) int {
	n := 0
	for n < len(s) && contains(accept, s[n]) {
		n++
	}
	return n
}

func strcspn(s, reject string) int {
	n := 0
	for n < len(s) && !contains(reject, s[n]) {
		n++
	}
	return n
}

func contains(set string, c byte) bool {
	for i := 0; i < len(set); i++ {
		if set[i] == c {
			return true
		}
	}
	return false
}

func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func strncmp(a, b string, n int) int {
	for i := 0; i < n; i++ {
		ca, cb := at(a, i), at(b, i)
		if ca != cb {
			return int(ca) - int(cb)
		}
		if ca == 0 {
			return 0
		}
	}
	return 0
}

func strcasecmpEqual(a, b string) bool {
	for i := 0; ; i++ {
		ca, cb := at(a, i), at(b, i)
		if 'A' <= ca && ca <= 'Z' {
			ca += 'a' - 'A'
		}
		if 'A' <= cb && cb <= 'Z' {
			cb += 'a' - 'A'
		}
		if ca != cb {
			return false
		}
		if ca == 0 {
			return true
		}
	}
}

// strtoumax parses decimal digits at the start of s (the callers have
// already excluded signs and spaces), saturating at UINTMAX_MAX; it returns
// the number and the index after it (0 when there are no digits).
func strtoumax(s string) (uint64, int) {
	var n uint64
	i := 0
	overflow := false
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		d := uint64(s[i] - '0')
		if n > (math.MaxUint64-d)/10 {
			overflow = true
		} else {
			n = n*10 + d
		}
		i++
	}
	if overflow {
		n = math.MaxUint64
	}
	return n, i
}

type cmpOp int

const (
	cEQUAL cmpOp = iota
	cNOT_EQUAL
	cLESS
	cLESS_EQUAL
	cGREATER
	cGREATER_EQUAL
)

var cOperators = []struct {
	str string
	cmp cmpOp
}{{"=", cEQUAL}, {"!=", cNOT_EQUAL}, {"<", cLESS}, {"<=", cLESS_EQUAL}, {">", cGREATER}, {">=", cGREATER_EQUAL}}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cCompareVersion(v1 string, cmp cmpOp, v2 string) int {
	if strspn(v1, "0123456789.") != len(v1) || strspn(v2, "0123456789.") != len(v2) {
		return -1
	}
	for v1 != "" && v2 != "" {
		n1, p1 := strtoumax(v1)
		if n1 == math.MaxUint64 || p1 == 0 {
			return -1
		}
		n2, p2 := strtoumax(v2)
		if n2 == math.MaxUint64 || p2 == 0 {
			return -1
		}
		if n1 != n2 {
			switch cmp {
			case cEQUAL:
				return 0
			case cNOT_EQUAL:
				return 1
			case cLESS, cLESS_EQUAL:
				return b2i(n1 < n2)
			default:
				return b2i(n1 > n2)
			}
		}
		v1 = v1[p1:]
		v1 = v1[strspn(v1, "."):]
		v2 = v2[p2:]
		v2 = v2[strspn(v2, "."):]
	}
	v1 = v1[strspn(v1, ".0"):]
	v2 = v2[strspn(v2, ".0"):]
	if cmp == cNOT_EQUAL {
		return b2i(v1 != "" || v2 != "")
	}
	if cmp == cEQUAL || cmp == cLESS_EQUAL || cmp == cGREATER_EQUAL {
		if v1 == "" && v2 == "" {
			return 1
		}
		if cmp == cEQUAL {
			return 0
		}
	}
	if cmp == cLESS || cmp == cLESS_EQUAL {
		return b2i(v1 == "" && v2 != "")
	}
	return b2i(v1 != "" && v2 == "")
}

func cCompareString(s1 string, cmp cmpOp, s2 string) int {
	switch cmp {
	case cEQUAL:
		return b2i(strcasecmpEqual(s1, s2))
	case cNOT_EQUAL:
		return b2i(!strcasecmpEqual(s1, s2))
	}
	return -1
}

// cRule is evaluate_rule with configure.c's rules table. "" host values are
// NULL; a nil d is no device.
func cRule(expr string, h Host, d *Device) int {
	n := strcspn(expr, "<>=!")
	if n == 0 {
		return -1
	}
	name, ptr := expr[:n], expr[n:]
	n = strspn(ptr, "<>=!")
	if n == 0 {
		return -1
	}
	i := 0
	var val string
	for ; i < len(cOperators); i++ {
		if strncmp(ptr, cOperators[i].str, n) == 0 {
			val = ptr[n:]
			break
		}
	}
	if i == len(cOperators) || val == "" {
		return -1
	}
	op := cOperators[i]
	var ret int
	switch {
	case strcasecmpEqual(name, "cuda"):
		ret = 1
		if h.CUDA != "" {
			ret = cCompareVersion(h.CUDA, op.cmp, val)
		}
	case strcasecmpEqual(name, "driver"):
		ret = 1
		if h.Driver != "" {
			ret = cCompareVersion(h.Driver, op.cmp, val)
		}
	case strcasecmpEqual(name, "arch"):
		ret = 1
		if d != nil && d.Arch != "" {
			ret = cCompareVersion(d.Arch, op.cmp, val)
		}
	case strcasecmpEqual(name, "brand"):
		ret = 1
		if d != nil && d.Brand != "" {
			ret = cCompareString(d.Brand, op.cmp, val)
		}
	default:
		return -1
	}
	if ret == 0 && len(name)+1+len(op.str)+1+len(val) >= 128 {
		return -1
	}
	return ret
}

// cEvaluate is dsl_evaluate: 0 satisfied, 1 unsatisfied, -1 invalid.
func cEvaluate(predicate string, h Host, d *Device) int {
	ret := 1
	ptr := cstr{s: predicate}
	for {
		or := strsep(&ptr, ' ')
		if or.null {
			break
		}
		if or.s == "" {
			continue
		}
		var and cstr
		for {
			and = strsep(&or, ',')
			if and.null {
				break
			}
			if and.s == "" {
				continue
			}
			if ret = cRule(and.s, h, d); ret < 0 {
				return -1
			}
			if ret == 0 {
				break
			}
		}
		if and.null {
			break
		}
	}
	if ret == 0 {
		return 1
	}
	return 0
}

// goVerdict maps a Result to cEvaluate's codes.
func goVerdict(r Result) int {
	switch {
	case r.Err != nil:
		return -1
	case r.Satisfied:
		return 0
	}
	return 1
}
