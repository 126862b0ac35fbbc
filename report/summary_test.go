package report_test

import (
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/report"
)

func gpus(names ...string) []facts.GPU {
	var out []facts.GPU
	for i, n := range names {
		out = append(out, facts.GPU{Index: i, Name: n})
	}
	return out
}

func TestSummaryLine(t *testing.T) {
	h100 := "NVIDIA H100 80GB HBM3"
	ok := decision.Decision{Policy: "fail", Action: decision.Exec}
	tests := []struct {
		rule    string
		r       report.Record
		visible int
		want    string
	}{
		{"eight GPUs of one model, a framework with its CUDA and kernels",
			report.Record{Host: facts.Host{GPUs: gpus(h100, h100, h100, h100, h100, h100, h100, h100), Driver: facts.Driver{Version: "550.54.15", CUDAVersion: "12.4"}},
				Image:    report.Image{CUDAVersion: "12.8", Frameworks: []facts.Framework{{Name: "torch", Version: "2.7.0", CUDAVersion: "12.8", Archs: []string{"sm_90", "sm_80"}}}},
				Decision: ok}, 8,
			"8x NVIDIA H100 80GB HBM3, driver 550.54.15 (CUDA 12.4), image CUDA 12.8, torch 2.7.0 (CUDA 12.8, sm_80 sm_90): ok (9.2 ms)"},
		{"mixed models, some hidden",
			report.Record{Host: facts.Host{GPUs: gpus("A100", "A100", "V100"), Driver: facts.Driver{Version: "535.129.03", CUDAVersion: "12.2"}}, Decision: ok}, 1,
			"1 of 3 GPUs visible (2x A100 + 1x V100), driver 535.129.03 (CUDA 12.2), image CUDA none: ok (9.2 ms)"},
		{"no driver, a CPU build",
			report.Record{Image: report.Image{Frameworks: []facts.Framework{{Name: "paddle", Version: "3.0.0"}}},
				Checks: []report.Check{{ID: "driver", Status: "warn"}}, Decision: ok}, 0,
			"no GPU, no NVIDIA driver, image CUDA none, paddle 3.0.0 (CPU build): ok with 1 warning (9.2 ms)"},
		{"errors under warn",
			report.Record{Checks: []report.Check{{ID: "a", Status: "error"}, {ID: "b", Status: "warn"}, {ID: "c", Status: "warn"}},
				Decision: decision.Decision{Policy: "warn", Action: decision.Exec}}, 0,
			"no GPU, no NVIDIA driver, image CUDA none: ok with 1 error (policy warn) and 2 warnings (9.2 ms)"},
		{"a mismatch abort",
			report.Record{Decision: decision.Decision{Policy: "fail", Action: decision.Abort, ExitCode: 78}}, 0,
			"no GPU, no NVIDIA driver, image CUDA none: abort, exit 78 (9.2 ms)"},
		{"a node-fault abort",
			report.Record{Decision: decision.Decision{Policy: "fail", Action: decision.Abort, ExitCode: 75, NodeFault: true}}, 0,
			"no GPU, no NVIDIA driver, image CUDA none: abort for a node fault, exit 75 (9.2 ms)"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			if got := (report.Summary{Record: tt.r, Visible: tt.visible, Elapsed: 9200 * time.Microsecond}).Line(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestAbortReasonIsTheFirstBlockingFindingAndItsFix(t *testing.T) {
	r := report.Record{
		Checks: []report.Check{
			{ID: "shm", Status: "warn", Message: "small", Remedy: "mount more"},
			{ID: "cuda-requirement", Status: "error", Message: "needs 11.8\nnow.", Remedy: "upgrade the driver."},
			{ID: "gpu-count", Status: "error", Message: "0 GPUs", Remedy: "request GPUs"},
		},
		Decision: decision.Decision{Policy: "fail", Action: decision.Abort, ExitCode: 78, Blocking: []string{"cuda-requirement", "gpu-count"}},
	}
	want := "gpu-preflight stopped the job (exit 78): cuda-requirement: needs 11.8 now; fix: upgrade the driver (and 1 more finding blocking above)."
	if got := report.AbortReason(r); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	r.Decision = decision.Decision{Policy: "warn", Action: decision.Exec, Blocking: []string{}}
	if got := report.AbortReason(r); got != "" {
		t.Errorf("nothing blocks, yet: %s", got)
	}
}
