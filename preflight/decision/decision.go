// Package decision holds what gpu-preflight does after its checks: the one
// Decision that package policy makes from the findings, and that the log,
// the provenance record and the termination message carry as it is.
//
// It sits below both policy (which decides) and report (which writes the
// decision down), so that report never needs the policy's rules to tell
// what blocked: the decision says so.
package decision

import "slices"

// Actions a decision can take.
const (
	Exec  = "exec"  // start the command
	Abort = "abort" // exit with ExitCode before it starts
)

// Decision is what gpu-preflight does after its checks. Its JSON form is the
// record's "decision" object (docs/schema/provenance.v1.schema.json).
type Decision struct {
	// Policy is the policy it was decided under: "warn", "fail" or "strict".
	Policy string `json:"policy"`
	// Action is Exec or Abort.
	Action string `json:"action"`
	// ExitCode is the code gpu-preflight exits with on Abort
	// (PREFLIGHT_EXIT_CODE, or PREFLIGHT_NODE_FAULT_EXIT_CODE for a node
	// fault); 0 on Exec.
	ExitCode int `json:"exitCode"`
	// NodeFault is true when the abort is for a node fault: a blocking
	// finding has check.Finding.NodeFault set.
	NodeFault bool `json:"nodeFault"`
	// Blocking are the ids of the findings that caused the abort, in the
	// order the checks ran; empty (never nil in a record) on Exec.
	Blocking []string `json:"blocking"`
}

// Blocks reports whether the finding with check id id is one the decision
// aborted on.
func (d Decision) Blocks(id string) bool { return slices.Contains(d.Blocking, id) }
