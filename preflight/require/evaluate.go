package require

import (
	"fmt"
	"iter"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// Host is what the driver says, as libnvidia-container reads it: CUDA
// "12.4" (nvmlSystemGetCudaDriverVersion), Driver "550.54.15". "" is
// unknown and makes every cuda or driver factor true.
type Host struct{ CUDA, Driver string }

// Device is one visible GPU: Arch "9.0", Brand "Tesla" ("" is unknown: true).
type Device struct {
	Index       int
	Arch, Brand string
}

// Outcome is what became of one factor.
type Outcome string

// Outcomes of a factor.
const (
	True         Outcome = "true"
	False        Outcome = "false"
	Missing      Outcome = "missing"       // the host does not know the property: true
	NotEvaluated Outcome = "not-evaluated" // the evaluation stopped before it
	Invalid      Outcome = "invalid"
)

// FactorResult is one AND factor and its outcome.
type FactorResult struct {
	Text string // as written, "driver>=470"
	// Name is the property, or NAME as written when unknown; Op is the
	// operator as libnvidia-container reads it ("!=" for a lone "!").
	Name, Op, Value string
	HostValue       string
	Outcome         Outcome
	Reason          string
}

// TermResult is one OR term (an alternative) and its factors.
type TermResult struct {
	Text      string
	Factors   []FactorResult
	Evaluated bool
	// Held: every factor held and the term ended the evaluation; for a term
	// without factors (",") the value the evaluation ended with.
	Held bool
}

// Result is one requirement evaluated against the host and one device.
type Result struct {
	Requirement facts.Requirement
	Device      *Device // nil when evaluated with no device
	Host        Host
	Satisfied   bool
	Err         error        // an *ExprError (invalid expression) or a *LengthError
	Terms       []TermResult // Evaluate's trace; Decide keeps none
	held        string
}

// Evaluate evaluates one requirement as libnvidia-container's dsl_evaluate
// does, against the host and device d (nil: none). Factors after the first
// false one of a term, or after a term that held, are never looked at, so
// an invalid one there is no error. A term with no factors (",") ends with
// the last factor's value: "cuda>=99 ," is unsatisfied, "," satisfied.
func Evaluate(r facts.Requirement, h Host, d *Device) Result { return evaluate(r, h, d, true) }

// Decide is Evaluate without the trace: its memory does not grow with the value.
func Decide(r facts.Requirement, h Host, d *Device) Result { return evaluate(r, h, d, false) }

func evaluate(r facts.Requirement, h Host, d *Device, trace bool) Result {
	res := Result{Requirement: r, Host: h}
	if d != nil {
		dev := *d
		res.Device = &dev
	}
	if res.Err = checkLength(r.Var, r.Value); res.Err != nil {
		return res
	}
	ret := true    // dsl_evaluate's ret: the last evaluated factor's value
	ended := false // a term completed, or a factor was invalid
	if trace {
		res.Terms = make([]TermResult, 0, count(r.Value, ' '))
	}
	for text := range tokens(r.Value, ' ') {
		if ended && !trace {
			break
		}
		evaluating := !ended
		var term TermResult
		if trace {
			term = TermResult{Text: text, Evaluated: evaluating, Factors: make([]FactorResult, 0, count(text, ','))}
		}
		for ft := range tokens(text, ',') {
			if !evaluating {
				if !trace {
					break
				}
				term.Factors = append(term.Factors, describe(parseFactor(ft), h, d, NotEvaluated))
				continue
			}
			fr := evalFactor(parseFactor(ft), h, d)
			if trace {
				term.Factors = append(term.Factors, fr)
			}
			switch fr.Outcome {
			case Invalid:
				res.Err = &ExprError{Var: r.Var, Factor: ft, Reason: fr.Reason}
				ended, evaluating = true, false
			case False:
				ret, evaluating = false, false
			default:
				ret = true
			}
		}
		if evaluating {
			term.Held = ret
			if ret {
				res.held = text
			}
			ended = true
		}
		if trace {
			res.Terms = append(res.Terms, term)
		}
	}
	res.Satisfied = res.Err == nil && ret
	return res
}

// EvaluateAll yields Evaluate of every requirement per device, as
// configure_command does (with no device when there is none), going on after
// a failure; each result is made when asked for, so one trace is held at a time.
func EvaluateAll(reqs []facts.Requirement, h Host, devs []Device) iter.Seq2[int, Result] {
	return func(yield func(int, Result) bool) {
		n := 0
		each := func(d *Device) bool {
			for _, r := range reqs {
				if !yield(n, Evaluate(r, h, d)) {
					return false
				}
				n++
			}
			return true
		}
		if len(devs) == 0 {
			each(nil)
			return
		}
		for i := range devs {
			if !each(&devs[i]) {
				return
			}
		}
	}
}

// DecideAll is Decide of every requirement per device, in EvaluateAll's order.
func DecideAll(reqs []facts.Requirement, h Host, devs []Device) []Result {
	var out []Result
	if len(devs) == 0 {
		for _, r := range reqs {
			out = append(out, Decide(r, h, nil))
		}
		return out
	}
	// GPUs of one model give the same result: decide once per (arch, brand).
	type kind struct {
		arch, brand string
		req         int
	}
	seen := map[kind]Result{}
	for i := range devs {
		for j, r := range reqs {
			k := kind{devs[i].Arch, devs[i].Brand, j}
			res, ok := seen[k]
			if !ok {
				res = Decide(r, h, &devs[i])
				seen[k] = res
			}
			dev := devs[i]
			res.Device = &dev
			out = append(out, res)
		}
	}
	return out
}

// HeldTerm returns the term that satisfied the requirement, or "".
func (r Result) HeldTerm() string { return r.held }

// ToolkitError is what nvidia-container-cli prints after "nvidia-container-cli: "
// when this result fails, or "". It names the requirement's first token,
// not the failing factor (dsl.c dsl_evaluate).
func (r Result) ToolkitError() string {
	if r.Err != nil {
		return "requirement error: invalid expression"
	}
	if r.Satisfied {
		return ""
	}
	first, _, _ := strings.Cut(r.Requirement.Value, " ")
	if strings.HasPrefix(first, "cuda>=") {
		return "requirement error: unsatisfied condition: " + first +
			", please update your driver to a newer version, or use an earlier cuda container"
	}
	return "requirement error: unsatisfied condition: " + first
}

func hostValue(prop string, h Host, d *Device) string {
	switch prop {
	case propCUDA:
		return h.CUDA
	case propDriver:
		return h.Driver
	case propArch:
		if d != nil {
			return d.Arch
		}
	case propBrand:
		if d != nil {
			return d.Brand
		}
	}
	return ""
}

func describe(f factor, h Host, d *Device, o Outcome) FactorResult {
	fr := FactorResult{Text: f.text, Name: f.name, Op: f.run, Value: f.value, Outcome: o}
	if f.prop != "" {
		fr.Name = f.prop
		fr.HostValue = hostValue(f.prop, h, d)
	}
	if f.op != "" {
		fr.Op = f.op
	}
	return fr
}

// evalFactor is evaluate_rule, then configure.c's check_* for the property.
func evalFactor(f factor, h Host, d *Device) FactorResult {
	fr := describe(f, h, d, "")
	invalid := func(reason string) FactorResult {
		fr.Outcome, fr.Reason = Invalid, reason
		return fr
	}
	if f.problem != "" {
		return invalid(f.problem)
	}
	// Missing data is true before the value is looked at.
	if fr.HostValue == "" {
		fr.Outcome = Missing
		return fr
	}
	var holds bool
	if f.prop == propBrand {
		switch f.op {
		case "=":
			holds = asciiEqualFold(fr.HostValue, f.value)
		case "!=":
			holds = !asciiEqualFold(fr.HostValue, f.value)
		default:
			return invalid(fmt.Sprintf("brand takes only = or !=, not %q", f.run))
		}
	} else {
		c, err := version.Compare(fr.HostValue, f.value)
		if err != nil {
			return invalid(fmt.Sprintf("comparing the host's %s %q with %q: %v", f.prop, fr.HostValue, f.value, err))
		}
		holds = opHolds(f.op, c)
	}
	if !holds && f.tooLong() {
		p, _ := f.valueProblem()
		return invalid(p)
	}
	fr.Outcome = False
	if holds {
		fr.Outcome = True
	}
	return fr
}

func opHolds(op string, c int) bool {
	switch op {
	case "=":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	panic("require: operator outside the table: " + op)
}
