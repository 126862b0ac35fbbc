// Package policy turns findings into a decision: run the command, or stop
// before it starts.
package policy

import (
	"fmt"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
)

// Policy is how strict the decision is.
type Policy string

// Policies, from lenient to strict.
const (
	Warn   Policy = "warn"   // never abort
	Fail   Policy = "fail"   // abort on error findings
	Strict Policy = "strict" // abort on warnings too
)

// Parse reads a policy name.
func Parse(s string) (Policy, error) {
	switch p := Policy(s); p {
	case Warn, Fail, Strict:
		return p, nil
	}
	return "", fmt.Errorf("unknown policy %q: accepted values are warn, fail, strict", s)
}

// Actions a decision can take.
const (
	Exec  = "exec"
	Abort = "abort"
)

// Decision is what gpu-preflight does after its checks.
type Decision struct {
	Policy Policy
	// Action is Exec or Abort.
	Action string
	// ExitCode is the code gpu-preflight exits with on Abort, 0 otherwise.
	ExitCode int
	// Blocking are the findings that caused the abort.
	Blocking []check.Finding
}

// Ignore downgrades the findings whose check id is in ignore to info, saying
// so in the message; PREFLIGHT_IGNORE is the narrow override users ask for,
// rather than disabling every check.
func Ignore(findings []check.Finding, ignore map[string]bool) []check.Finding {
	out := make([]check.Finding, len(findings))
	for i, f := range findings {
		if ignore[f.ID] && f.Status.Severity() > check.Info.Severity() {
			f.Message = fmt.Sprintf("%s (%s, ignored by PREFLIGHT_IGNORE)", f.Message, f.Status)
			f.Status = check.Info
		}
		out[i] = f
	}
	return out
}

// Blocks reports whether f stops the job under p: never under warn,
// errors under fail (and any value that is not a policy), warnings too
// under strict.
func (p Policy) Blocks(f check.Finding) bool {
	switch p {
	case Warn:
		return false
	case Strict:
		return f.Status.Severity() >= check.Warn.Severity()
	}
	return f.Status.Severity() >= check.Error.Severity()
}

// Decide applies policy p to findings (after Ignore). abortCode is the exit
// code for an abort (PREFLIGHT_EXIT_CODE).
func Decide(p Policy, findings []check.Finding, abortCode int) Decision {
	d := Decision{Policy: p, Action: Exec}
	for _, f := range findings {
		if p.Blocks(f) {
			d.Blocking = append(d.Blocking, f)
		}
	}
	if len(d.Blocking) > 0 {
		d.Action = Abort
		d.ExitCode = abortCode
	}
	return d
}

// ParseList splits a comma-separated list of check ids, dropping blanks.
func ParseList(s string) map[string]bool {
	out := map[string]bool{}
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out[id] = true
		}
	}
	return out
}
