package report

import (
	"fmt"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/report/redact"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// MaxTerminationBytes is Kubernetes' cap on a container's termination
// message (4096 bytes per container; docs/sources.md, "Kubernetes, Kubeflow and Slurm").
const MaxTerminationBytes = 4096

// TerminationMessage is what an aborted run leaves in the Kubernetes
// termination log, redacted and within MaxTerminationBytes: a header, then
// "id: message; remedy: remedy" per blocking finding, and how many did not
// fit. It is empty when no finding blocks.
func TerminationMessage(findings []check.Finding, d decision.Decision) string {
	var lines []string
	for _, f := range findings {
		if !d.Blocks(f.ID) {
			continue
		}
		line := f.ID + ": " + shown(f.Message)
		if f.Remedy != "" {
			line += "; remedy: " + shown(f.Remedy)
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return ""
	}
	header := fmt.Sprintf("gpu-preflight: %s (exit %d, policy %s): %d blocking finding(s)", d.Action, d.ExitCode, d.Policy, len(lines))
	var b strings.Builder
	b.WriteString(header)
	more := func(n int) string {
		return fmt.Sprintf("\n... and %d more blocking finding(s); see the log lines with \"check\" fields", n)
	}
	for i, line := range lines {
		rest := len(lines) - i
		reserve := 0
		if rest > 1 {
			reserve = len(more(rest)) // room to say what could not be shown
		}
		avail := MaxTerminationBytes - b.Len() - reserve
		// An equal share, so one long message cannot crowd out the others.
		room := avail / rest
		if room < 200 {
			room = min(avail, 512)
		}
		if room < 80 {
			b.WriteString(more(rest))
			break
		}
		b.WriteString(truncate.String("\n"+line, room))
	}
	return b.String()
}

// shown is s redacted, on one line, escaped for kubectl's terminal before the budget cuts it.
func shown(s string) string {
	return termsafe.String(oneLine(redact.Value(s)))
}

// oneLine folds line breaks so each finding stays on its own line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
