package policy

import (
	"slices"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
)

func findings(statuses ...check.Status) []check.Finding {
	var out []check.Finding
	for i, s := range statuses {
		out = append(out, check.Finding{ID: string(rune('a' + i)), Status: s, Message: "m"})
	}
	return out
}

var codes = ExitCodes{Mismatch: 78, NodeFault: 75}

func TestDecide(t *testing.T) {
	for _, tt := range []struct {
		name     string
		policy   Policy
		findings []check.Finding
		action   string
		code     int
	}{
		{"WarnNeverAborts", Warn, findings(check.Error, check.Warn), decision.Exec, 0},
		{"FailAbortsOnError", Fail, findings(check.Pass, check.Error), decision.Abort, 78},
		{"FailRunsOnWarning", Fail, findings(check.Warn, check.Info), decision.Exec, 0},
		{"StrictAbortsOnWarning", Strict, findings(check.Warn), decision.Abort, 78},
		{"StrictRunsOnInfo", Strict, findings(check.Info, check.Skip, check.Pass), decision.Exec, 0},
		{"NoFindingsRun", Fail, nil, decision.Exec, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.policy, tt.findings, codes)
			if d.Action != tt.action || d.ExitCode != tt.code {
				t.Errorf("Decide = %s/%d, want %s/%d", d.Action, d.ExitCode, tt.action, tt.code)
			}
		})
	}
}

func nodeFault(s check.Status) check.Finding {
	return check.Finding{ID: "nvml", Status: s, Message: "hung", NodeFault: true}
}

// A blocking node fault exits with the node-fault code; when it blocks
// together with a mismatch, the node fault wins (see Decide).
func TestDecideNodeFaultCode(t *testing.T) {
	for _, tt := range []struct {
		name      string
		policy    Policy
		findings  []check.Finding
		code      int
		nodeFault bool
	}{
		{"NodeFaultAlone", Fail, []check.Finding{nodeFault(check.Error)}, 75, true},
		{"MismatchAlone", Fail, findings(check.Error), 78, false},
		{"BothBlockNodeFaultWins", Fail, append(findings(check.Error), nodeFault(check.Error)), 75, true},
		{"NodeFaultWarningDoesNotBlockUnderFail", Fail, append(findings(check.Error), nodeFault(check.Warn)), 78, false},
		{"NodeFaultWarningBlocksUnderStrict", Strict, []check.Finding{nodeFault(check.Warn)}, 75, true},
		{"NodeFaultUnderWarnRuns", Warn, []check.Finding{nodeFault(check.Error)}, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.policy, tt.findings, codes)
			if d.ExitCode != tt.code || d.NodeFault != tt.nodeFault {
				t.Errorf("Decide = exit %d, node fault %v; want %d, %v", d.ExitCode, d.NodeFault, tt.code, tt.nodeFault)
			}
		})
	}
}

func TestIgnoreDowngradesToInfo(t *testing.T) {
	in := []check.Finding{
		{ID: "cuda-requirement", Status: check.Error, Message: "bad"},
		{ID: "shm", Status: check.Warn, Message: "small"},
		{ID: "driver", Status: check.Pass, Message: "ok"},
	}
	out := Ignore(in, ParseList(" cuda-requirement, driver ,,"))
	if out[0].Status != check.Info || out[0].Message != "bad (error, ignored by PREFLIGHT_IGNORE)" {
		t.Errorf("ignored error = %+v", out[0])
	}
	if out[1].Status != check.Warn {
		t.Errorf("not-ignored warning changed: %+v", out[1])
	}
	if out[2].Status != check.Pass || out[2].Message != "ok" {
		t.Errorf("a passing ignored check must stay as it is: %+v", out[2])
	}
	if in[0].Status != check.Error {
		t.Error("Ignore modified its input")
	}
	if d := Decide(Fail, out, codes); d.Action != decision.Exec {
		t.Errorf("ignored error still aborts: %+v", d)
	}
}

func TestParse(t *testing.T) {
	for s, want := range map[string]Policy{"warn": Warn, "fail": Fail, "strict": Strict, "Warn": Warn, "STRICT": Strict} {
		if p, err := Parse(s); err != nil || p != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", s, p, err, want)
		}
	}
	for _, s := range []string{"", "bogus", "wran"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}

// Blocks is the one blocking rule: never under warn, errors under fail
// (and under a value that is not a policy), warnings too under strict.
func TestBlockingFollowsThePolicy(t *testing.T) {
	tests := []struct {
		policy Policy
		status check.Status
		want   bool
	}{
		{Fail, check.Error, true},
		{Fail, check.Warn, false},
		{Fail, check.Info, false},
		{Strict, check.Error, true},
		{Strict, check.Warn, true},
		{Strict, check.Info, false},
		{Strict, check.Pass, false},
		{Warn, check.Error, false},
		{"", check.Error, true}, // unknown policy: treated as fail
	}
	for _, tt := range tests {
		if got := tt.policy.Blocks(check.Finding{Status: tt.status}); got != tt.want {
			t.Errorf("Policy(%q).Blocks(%s) = %v, want %v", tt.policy, tt.status, got, tt.want)
		}
	}
}

// The decision names what blocked, in check order, so nothing after policy
// applies the rule again.
func TestDecideNamesTheBlockingFindings(t *testing.T) {
	fs := findings(check.Warn, check.Error, check.Pass, check.Error)
	if d := Decide(Fail, fs, codes); !slices.Equal(d.Blocking, []string{"b", "d"}) || !d.Blocks("d") || d.Blocks("a") {
		t.Errorf("under fail: Blocking = %q", d.Blocking)
	}
	if d := Decide(Strict, fs, codes); !slices.Equal(d.Blocking, []string{"a", "b", "d"}) {
		t.Errorf("under strict: Blocking = %q", d.Blocking)
	}
	if d := Decide(Warn, fs, codes); d.Blocking == nil || len(d.Blocking) != 0 {
		t.Errorf("under warn: Blocking = %#v, want empty and not nil (the record's list is [])", d.Blocking)
	}
}
