package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/report/redact"
)

// Summary is what the first log line of a run says (logs.Summary).
type Summary struct {
	Record  Record
	Visible int           // GPUs this container may use
	Elapsed time.Duration // up to the decision
}

// Line is the summary as one sentence:
//
//	8x NVIDIA H100 80GB HBM3, driver 550.54.15 (CUDA 12.4), image CUDA 12.8, torch 2.7.0 (CUDA 12.8, sm_80 sm_90): ok (9.2 ms)
func (s Summary) Line() string {
	r := s.Record
	parts := []string{gpuSummary(r.Host.GPUs, s.Visible)}
	if d := r.Host.Driver; d.Version != "" {
		parts = append(parts, fmt.Sprintf("driver %s (CUDA %s)", d.Version, or(d.CUDAVersion, "unknown")))
	} else {
		parts = append(parts, "no NVIDIA driver")
	}
	parts = append(parts, "image CUDA "+or(r.Image.CUDAVersion, "none"))
	for _, f := range r.Image.Frameworks {
		if f.NotJudged == "" {
			parts = append(parts, frameworkSummary(f))
		}
	}
	return oneLine(strings.Join(parts, ", ")) + ": " + verdict(r) + " (" + millis(s.Elapsed) + " ms)"
}

// gpuSummary counts the host's GPUs by model: "8x NVIDIA H100 80GB HBM3",
// "2 of 8 GPUs visible: 8x NVIDIA A100-SXM4-40GB", "no GPU".
func gpuSummary(gpus []facts.GPU, visible int) string {
	if len(gpus) == 0 {
		if visible > 0 {
			return fmt.Sprintf("%d GPU(s)", visible)
		}
		return "no GPU"
	}
	var names []string
	count := map[string]int{}
	for _, g := range gpus {
		n := or(g.Name, "unnamed GPU")
		if count[n] == 0 {
			names = append(names, n)
		}
		count[n]++
	}
	var models []string
	for _, n := range names {
		models = append(models, fmt.Sprintf("%dx %s", count[n], n))
	}
	s := strings.Join(models, " + ")
	if visible != len(gpus) {
		s = fmt.Sprintf("%d of %d GPUs visible (%s)", visible, len(gpus), s)
	}
	return s
}

// frameworkSummary is "torch 2.7.0 (CUDA 12.8, sm_80 sm_90)" or
// "paddle 3.0.0 (CPU build)".
func frameworkSummary(f facts.Framework) string {
	s := f.Name
	if f.Version != "" {
		s += " " + f.Version
	}
	if f.CUDAVersion == "" {
		return s + " (" + buildLabel(f) + ")"
	}
	detail := "CUDA " + f.CUDAVersion
	if len(f.Archs) > 0 {
		archs := slices.Clone(f.Archs)
		slices.Sort(archs)
		detail += ", " + strings.Join(archs, " ")
	}
	return s + " (" + detail + ")"
}

// buildLabel says what a framework without a CUDA version was built for.
func buildLabel(f facts.Framework) string {
	switch f.Build {
	case "cpu":
		return "CPU build"
	case "rocm":
		return "ROCm build"
	case "cuda":
		return "CUDA build, version not recorded"
	}
	if f.CUDAVersion == "" && f.Build == "" {
		return "CPU build"
	}
	return "build not recorded"
}

// verdict is "ok", "ok with 2 warnings", "abort, exit 78" and the like.
func verdict(r Record) string {
	if r.Decision.Action == decision.Abort {
		kind := "abort"
		if r.Decision.NodeFault {
			kind = "abort for a node fault"
		}
		return fmt.Sprintf("%s, exit %d", kind, r.Decision.ExitCode)
	}
	var warns, errs int
	for _, c := range r.Checks {
		switch c.Status {
		case "warn":
			warns++
		case "error":
			errs++
		}
	}
	var notes []string
	if errs > 0 {
		notes = append(notes, plural(errs, "error")+" (policy "+r.Decision.Policy+")")
	}
	if warns > 0 {
		notes = append(notes, plural(warns, "warning"))
	}
	if len(notes) == 0 {
		return "ok"
	}
	return "ok with " + strings.Join(notes, " and ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func millis(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64)
}

// Frameworks are the judged frameworks as Line names them.
func (s Summary) Frameworks() []string {
	var fws []string
	for _, f := range s.Record.Image.Frameworks {
		if f.NotJudged == "" {
			fws = append(fws, frameworkSummary(f))
		}
	}
	return fws
}

// AbortReason is an aborted run's last line, redacted: the first blocking
// finding and its fix; "" when nothing blocks.
//
//	gpu-preflight stopped the job (exit 78): cuda-requirement: NVIDIA_REQUIRE_CUDA is not satisfied: ...; fix: upgrade the driver to >= 520.61.05
func AbortReason(r Record) string {
	cause := abortCause(r)
	if cause == "" {
		return ""
	}
	what := "gpu-preflight stopped the job"
	if r.Decision.NodeFault {
		what += " on a node fault"
	}
	return fmt.Sprintf("%s (exit %d): %s", what, r.Decision.ExitCode, cause)
}

// abortCause is the first blocking finding and its fix, "id: message;
// fix: remedy", with how many more blocked; "" when nothing blocks.
func abortCause(r Record) string {
	var blocking []Check
	for _, c := range r.Checks {
		if r.Decision.Blocks(c.ID) {
			blocking = append(blocking, c)
		}
	}
	if len(blocking) == 0 {
		return ""
	}
	first := blocking[0]
	s := first.ID + ": " + strings.TrimRight(first.Message, ". ")
	if first.Remedy != "" {
		s += "; fix: " + strings.TrimRight(first.Remedy, ". ")
	}
	if n := len(blocking) - 1; n > 0 {
		s += fmt.Sprintf(" (and %s blocking above)", plural(n, "more finding"))
	}
	return oneLine(redact.Value(s)) + "."
}
