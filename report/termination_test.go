package report_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
)

// abortOn is the decision to abort, under policy p, on the findings with
// these ids.
func abortOn(p string, ids ...string) decision.Decision {
	return decision.Decision{Policy: p, Action: decision.Abort, ExitCode: 78, Blocking: ids}
}

// abortOnAll is abortOn with every finding of fs blocking.
func abortOnAll(fs []check.Finding) decision.Decision {
	d := abortOn("fail")
	for _, f := range fs {
		d.Blocking = append(d.Blocking, f.ID)
	}
	return d
}

func TestTerminationMessageNamesEachBlockingFinding(t *testing.T) {
	d := abortOn("strict", "cuda-requirement", "shm")
	msg := report.TerminationMessage(reporttest.Findings, d)
	lines := strings.Split(msg, "\n")
	want := []string{
		"gpu-preflight: abort (exit 78, policy strict): 2 blocking finding(s)",
		"cuda-requirement: driver 515.65.01 supports CUDA <= 11.7; this image needs CUDA 12.2 (NVIDIA_REQUIRE_CUDA); remedy: upgrade the driver to >= 535.54.03, or use an image built for CUDA <= 11.7",
		"shm: /dev/shm is 64 MiB, the container default; mirror https://[redacted]@mirror.example/x; remedy: run with --ipc=host or --shm-size=16g",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("message =\n%s\nwant\n%s", msg, strings.Join(want, "\n"))
	}
	if got := report.TerminationMessage(reporttest.Findings[:1], d); got != "" {
		t.Errorf("no blocking finding gave %q, want empty", got)
	}
}

func TestTerminationMessageFitsKubernetesCap(t *testing.T) {
	long := strings.Repeat("word ", 2000)
	tests := []struct {
		name     string
		findings []check.Finding
		wantMore bool
	}{
		{"one huge finding", []check.Finding{{ID: "gpu-arch", Status: check.Error, Message: long, Remedy: long}}, false},
		{"three huge findings share the space", []check.Finding{
			{ID: "a", Status: check.Error, Message: long}, {ID: "b", Status: check.Error, Message: long}, {ID: "c", Status: check.Error, Message: long}}, false},
		{"hundreds of findings", manyFindings(300), true},
		{"multi-line message folds", []check.Finding{{ID: "x", Status: check.Error, Message: "a\nb\r\nc", Remedy: "d\ne"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := report.TerminationMessage(tt.findings, abortOnAll(tt.findings))
			if len(msg) > report.MaxTerminationBytes {
				t.Errorf("message is %d bytes, over %d", len(msg), report.MaxTerminationBytes)
			}
			lines := strings.Split(msg, "\n")
			if strings.Contains(msg, "... and") != tt.wantMore {
				t.Errorf("'... and N more' line present = %v, want %v", !tt.wantMore, tt.wantMore)
			}
			shown := 0
			for _, f := range tt.findings {
				for _, l := range lines {
					if strings.HasPrefix(l, f.ID+": ") {
						shown++
						break
					}
				}
			}
			if shown == 0 {
				t.Error("no finding shown")
			}
			if !tt.wantMore && shown != len(tt.findings) {
				t.Errorf("%d of %d findings shown", shown, len(tt.findings))
			}
		})
	}
}

func manyFindings(n int) []check.Finding {
	var out []check.Finding
	for i := 0; i < n; i++ {
		out = append(out, check.Finding{ID: fmt.Sprintf("check-%03d", i), Status: check.Error, Message: strings.Repeat("m", 60), Remedy: "r"})
	}
	return out
}

// A finding's text reaches the message escaped (termsafe), the escapes
// counted in the budget.
func TestTerminationMessageEscapesForTheTerminal(t *testing.T) {
	probe := "NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e\u200b\u0085"
	fs := []check.Finding{{ID: "a", Status: check.Error, Message: "on " + probe, Remedy: probe},
		{ID: "b", Status: check.Error, Message: strings.Repeat("\u202e", 3000)}}
	msg := report.TerminationMessage(fs, abortOnAll(fs))
	if want := `a: on NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e\u200b; remedy: NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e\u200b`; !strings.Contains(msg, want) {
		t.Errorf("message does not hold %s:\n%s", want, msg)
	}
	if len(msg) > report.MaxTerminationBytes {
		t.Errorf("message is %d bytes, over %d", len(msg), report.MaxTerminationBytes)
	}
	for _, r := range msg {
		if r == 0x1b || r == 0x07 || r == 0x85 || r == 0x202e || r == 0x200b {
			t.Fatalf("message holds %U raw:\n%q", r, msg)
		}
	}
}
