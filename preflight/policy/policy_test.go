package policy

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
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
		{"WarnNeverAborts", Warn, findings(check.Error, check.Warn), Exec, 0},
		{"FailAbortsOnError", Fail, findings(check.Pass, check.Error), Abort, 78},
		{"FailRunsOnWarning", Fail, findings(check.Warn, check.Info), Exec, 0},
		{"StrictAbortsOnWarning", Strict, findings(check.Warn), Abort, 78},
		{"StrictRunsOnInfo", Strict, findings(check.Info, check.Skip, check.Pass), Exec, 0},
		{"NoFindingsRun", Fail, nil, Exec, 0},
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
	if d := Decide(Fail, out, codes); d.Action != Exec {
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
