// Package decision holds the one Decision policy makes from the findings,
// which the log, the record and the termination message carry as it is. It
// sits below policy and report, so report never needs the policy's rules to
// tell what blocked.
package decision

import "slices"

// Actions a decision can take.
const (
	Exec  = "exec"  // start the command
	Abort = "abort" // exit with ExitCode before it starts
)

// Decision is what gpu-preflight does after its checks; its JSON form is the
// record's "decision" (docs/schema/provenance.v1.schema.json).
type Decision struct {
	Policy string `json:"policy"` // "warn", "fail" or "strict"
	Action string `json:"action"` // Exec or Abort
	// ExitCode is PREFLIGHT_EXIT_CODE, or PREFLIGHT_NODE_FAULT_EXIT_CODE for
	// a node fault, on Abort; 0 on Exec.
	ExitCode  int  `json:"exitCode"`
	NodeFault bool `json:"nodeFault"` // a blocking finding is a node fault
	// Blocking are the ids of the findings that caused the abort, in check
	// order; empty, never nil in a record, on Exec.
	Blocking []string `json:"blocking"`
}

// Blocks reports whether the decision aborted on the finding of check id.
func (d Decision) Blocks(id string) bool { return slices.Contains(d.Blocking, id) }
