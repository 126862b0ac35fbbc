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
			d := Decide(tt.policy, tt.findings, 78)
			if d.Action != tt.action || d.ExitCode != tt.code {
				t.Errorf("Decide = %s/%d, want %s/%d", d.Action, d.ExitCode, tt.action, tt.code)
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
	if d := Decide(Fail, out, 78); d.Action != Exec {
		t.Errorf("ignored error still aborts: %+v", d)
	}
}

func TestParse(t *testing.T) {
	for _, s := range []string{"warn", "fail", "strict"} {
		if _, err := Parse(s); err != nil {
			t.Errorf("Parse(%q): %v", s, err)
		}
	}
	for _, s := range []string{"", "bogus", "Fail"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}
