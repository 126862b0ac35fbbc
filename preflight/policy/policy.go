// Package policy turns findings into a decision.Decision; the blocking rule
// (Policy.Blocks) is here and nowhere else.
package policy

import (
	"fmt"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
)

// Policy is how strict the decision is.
type Policy string

// Policies, from lenient to strict.
const (
	Warn   Policy = "warn"   // never abort
	Fail   Policy = "fail"   // abort on error findings
	Strict Policy = "strict" // abort on warnings too
)

// Policies are what PREFLIGHT_POLICY accepts, from lenient to strict.
var Policies = []Policy{Warn, Fail, Strict}

// Names are Policies as words.
func Names() []string {
	names := make([]string, len(Policies))
	for i, p := range Policies {
		names[i] = string(p)
	}
	return names
}

// Parse reads a policy name in any case, as every enumerated setting is read.
func Parse(s string) (Policy, error) {
	for _, p := range Policies {
		if strings.EqualFold(s, string(p)) {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown policy %q: accepted values are %s", s, strings.Join(Names(), ", "))
}

// ExitCodes are the codes an abort exits with.
type ExitCodes struct {
	// Mismatch (PREFLIGHT_EXIT_CODE): every node like this one fails alike, so a retry is vain.
	Mismatch int
	// NodeFault (PREFLIGHT_NODE_FAULT_EXIT_CODE) is for a sick node: the job may run elsewhere.
	NodeFault int
}

// Default exit codes: sysexits.h's EX_CONFIG and EX_TEMPFAIL.
const (
	DefaultMismatchExitCode  = 78
	DefaultNodeFaultExitCode = 75
)

// Ignore downgrades the findings of the check ids in ignore to info, saying
// so: PREFLIGHT_IGNORE is the narrow override, rather than disabling checks.
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

// Blocks reports whether f stops the job under p: never under warn, errors
// under fail (and any value that is no policy), warnings too under strict.
func (p Policy) Blocks(f check.Finding) bool {
	switch p {
	case Warn:
		return false
	case Strict:
		return f.Status.Severity() >= check.Warn.Severity()
	}
	return f.Status.Severity() >= check.Error.Severity()
}

// Decide applies policy p to findings (after Ignore). A node fault wins over
// a mismatch blocking with it: the mismatch was judged from a sick node, and
// one bounded retry elsewhere meets it again if it is real.
func Decide(p Policy, findings []check.Finding, codes ExitCodes) decision.Decision {
	d := decision.Decision{Policy: string(p), Action: decision.Exec, Blocking: []string{}}
	for _, f := range findings {
		if p.Blocks(f) {
			d.Blocking = append(d.Blocking, f.ID)
			d.NodeFault = d.NodeFault || f.NodeFault
		}
	}
	if len(d.Blocking) > 0 {
		d.Action = decision.Abort
		d.ExitCode = codes.Mismatch
		if d.NodeFault {
			d.ExitCode = codes.NodeFault
		}
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
