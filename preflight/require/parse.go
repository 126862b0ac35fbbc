// Package require implements the NVIDIA_REQUIRE_* requirement language
// exactly as the NVIDIA Container Toolkit applies it: the toolkit collects
// the variables (internal/config/image/cuda_image.go) and libnvidia-container
// evaluates each one (src/cli/dsl.c dsl_evaluate, src/cli/configure.c),
// quirks included (docs/sources.md, "Requirement grammar").
package require

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

const opChars = "<>=!"

// operators is dsl.c's table in its order: a run of operator characters
// matches with strncmp(run, op, len(run)), so a lone "!" is "!=".
var operators = [...]string{"=", "!=", "<", "<=", ">", ">="}

// Property names, the rules table of libnvidia-container's configure.c.
const (
	propCUDA   = "cuda"
	propDriver = "driver"
	propArch   = "arch"
	propBrand  = "brand"
)

var properties = [...]string{propCUDA, propDriver, propArch, propBrand}

// exprMax is dsl.c's EXPR_MAX: a false factor is formatted into a buffer of
// this size for the error, and one that does not fit is invalid.
const exprMax = 128

type factor struct {
	text  string
	name  string // as written
	prop  string // one of the prop* constants; "" when NAME is not known
	run   string // the operator as written
	op    string // the operators entry run matched; "" when none
	value string
	// problem is why evaluate_rule returns -1 before it looks at the host;
	// "" when the factor parses.
	problem string
}

// parseFactor checks in dsl.c's order, so problem is the first reason the C code fails on.
func parseFactor(text string) factor {
	f := factor{text: text}
	n := strings.IndexAny(text, opChars)
	switch {
	case n == 0:
		f.run, f.value = splitRun(text)
		f.problem = "no property name before the operator"
		return f
	case n < 0:
		f.name, f.prop = text, propertyOf(text)
		f.problem = "no operator (want one of = != < <= > >=)"
		return f
	}
	f.name = text[:n]
	f.run, f.value = splitRun(text[n:])
	// dsl.c looks the name up last, so an unknown name is the last problem.
	f.prop = propertyOf(f.name)
	for _, op := range operators {
		if strings.HasPrefix(op, f.run) {
			f.op = op
			break
		}
	}
	if f.op == "" {
		f.problem = fmt.Sprintf("operator %q is not one of = != < <= > >=", f.run)
		return f
	}
	if f.value == "" {
		f.problem = "no value after the operator"
		return f
	}
	if f.prop == "" {
		f.problem = fmt.Sprintf("unknown property %q (want cuda, driver, arch or brand)", f.name)
	}
	return f
}

func propertyOf(name string) string {
	for _, p := range properties {
		if asciiEqualFold(name, p) {
			return p
		}
	}
	return ""
}

func splitRun(s string) (run, rest string) {
	end := 0
	for end < len(s) && strings.IndexByte(opChars, s[end]) >= 0 {
		end++
	}
	return s[:end], s[end:]
}

// asciiEqualFold is strcasecmp in the C locale: unlike strings.EqualFold,
// the Kelvin sign does not equal "k".
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// tooLong: dsl.c's "%s %s %s" of the factor does not fit in EXPR_MAX.
func (f factor) tooLong() bool {
	return len(f.name)+1+len(f.op)+1+len(f.value) >= exprMax
}

// valueProblem is what is wrong with VALUE whatever the host says; lazy
// when libnvidia-container notices it only in some evaluations (a later
// component too large for strtoumax, a factor too long to format).
func (f factor) valueProblem() (problem string, lazy bool) {
	switch f.prop {
	case propCUDA, propDriver, propArch:
		// Comparing the value with itself reaches every component.
		if _, err := version.Compare(f.value, f.value); err != nil {
			// A later component is checked only if a comparison gets there.
			return err.Error(), version.Valid(f.value) && firstComponentFits(f.value)
		}
	case propBrand:
		if f.op != "=" && f.op != "!=" {
			return fmt.Sprintf("brand takes only = or !=, not %q", f.run), false
		}
	}
	if f.tooLong() {
		return fmt.Sprintf("%q is %d characters once formatted as %q; libnvidia-container's limit is %d, so the factor is an invalid expression whenever it is false",
			f.text, len(f.name)+len(f.op)+len(f.value)+2, f.name+" "+f.op+" "+f.value, exprMax-1), true
	}
	return "", false
}

// firstComponentFits: below 2^64-1, strtoumax's saturation value that
// dsl_compare_version rejects.
func firstComponentFits(v string) bool {
	end := 0
	for end < len(v) && '0' <= v[end] && v[end] <= '9' {
		end++
	}
	n, err := strconv.ParseUint(v[:end], 10, 64)
	return err == nil && n != math.MaxUint64
}

// tokens yields s split on sep, skipping empty tokens as dsl_evaluate's strsep loops do.
func tokens(s string, sep byte) iter.Seq[string] {
	return func(yield func(string) bool) {
		for s != "" {
			i := strings.IndexByte(s, sep)
			if i < 0 {
				yield(s)
				return
			}
			if i > 0 && !yield(s[:i]) {
				return
			}
			s = s[i+1:]
		}
	}
}

func count(s string, sep byte) int {
	n := 0
	for range tokens(s, sep) {
		n++
	}
	return n
}

// ExprError is an invalid expression: a factor libnvidia-container rejects
// with "requirement error: invalid expression".
type ExprError struct {
	Var    string // the variable, "NVIDIA_REQUIRE_CUDA"; "" when not known
	Factor string // the factor as written
	Reason string
}

func (e *ExprError) Error() string {
	// The message goes into a finding, a log line and the record: quote the start only.
	factor := truncate.Quote(e.Factor, maxQuoted)
	reason := truncate.String(e.Reason, 2*maxQuoted)
	if e.Var != "" {
		return fmt.Sprintf("%s: invalid expression %s: %s", e.Var, factor, reason)
	}
	return fmt.Sprintf("invalid expression %s: %s", factor, reason)
}

// maxQuoted is more than any factor libnvidia-container can report.
const maxQuoted = 2 * exprMax

// MaxValueBytes is the length from which a requirement is refused unparsed:
// execve's MAX_ARG_STRLEN, under which the toolkit hands each requirement
// to nvidia-container-cli, so a longer value cannot be real. A real
// NVIDIA_REQUIRE_CUDA is under 1 KiB.
const MaxValueBytes = facts.MaxEnvString

// LengthError is a requirement (or its CUDA_VERSION) of MaxValueBytes or more.
type LengthError struct {
	Var   string // "NVIDIA_REQUIRE_CUDA"; "" when not known
	Bytes int
}

func (e *LengthError) Error() string {
	name := e.Var
	if name == "" {
		name = "the requirement"
	}
	return fmt.Sprintf("%s is %d bytes, over the %d-byte limit of one environment string (MAX_ARG_STRLEN): no container process can be given it and the NVIDIA Container Toolkit cannot check it; shorten it",
		name, e.Bytes, MaxValueBytes)
}

func checkLength(name, value string) error {
	if len(value) >= MaxValueBytes {
		return &LengthError{Var: name, Bytes: len(value)}
	}
	return nil
}

// Validate checks the syntax of every factor of value, evaluated or not,
// stricter than an evaluation, which never reaches factors after the term
// that held. Every bad factor is an *ExprError, joined with errors.Join; a
// value of MaxValueBytes or more is one *LengthError.
func Validate(value string) error {
	if err := checkLength("", value); err != nil {
		return err
	}
	var errs []error
	for term := range tokens(value, ' ') {
		for text := range tokens(term, ',') {
			f := parseFactor(text)
			reason := f.problem
			if reason == "" {
				reason, _ = f.valueProblem()
			}
			if reason != "" {
				errs = append(errs, &ExprError{Factor: text, Reason: reason})
			}
		}
	}
	return errors.Join(errs...)
}
