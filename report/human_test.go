package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
)

func TestHumanReportShowsFactsChecksAndDecision(t *testing.T) {
	var buf bytes.Buffer
	if err := report.Human(&buf, report.New(reporttest.Inputs())); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"driver         515.65.01 (from procfs)",
		"driver's CUDA  11.7 (from branch-table)",
		"GPUs (2)",
		"NVIDIA A100-SXM4-80GB  GPU-6e0bc4a1-7c7f-2b1a-9d3e-0a1b2c3d4e5f  00000000:07:00.0  8.0  80 GiB",
		"CUDA                 12.2 (12.2.2)",
		"NVIDIA_REQUIRE_CUDA  cuda>=12.2 brand=tesla",
		"torch         2.1.2+cu121  12.1  compute_90 sm_50 sm_80 sm_90",
		"paddlepaddle  2.6.1        12.0  -",
		"error   cuda-requirement  driver 515.65.01 supports CUDA <= 11.7",
		"                          remedy: upgrade the driver to >= 535.54.03",
		"Verdict: would abort with exit 78 (policy fail)\n  cuda-requirement: driver 515.65.01 supports CUDA <= 11.7",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour codes in a report that is not on a terminal")
	}
}

func TestHumanReportWithNothingKnown(t *testing.T) {
	var buf bytes.Buffer
	r := report.New(report.Inputs{Now: reporttest.Time, Decision: decision.Decision{Policy: "warn", Action: decision.Exec}})
	if err := report.Human(&buf, r); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"driver         none found", "none: no NVIDIA driver on this host", "CUDA      none found", "none run", "Verdict: would exec the command (policy warn): ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestHumanShowsTheCUDACheck(t *testing.T) {
	r := report.New(report.Inputs{Now: time.Now(), Facts: facts.Facts{Host: facts.Host{CUDA: facts.CUDACheck{
		Mode: facts.CUDAModeKernel, Outcome: facts.CUDAFailed, DriverAPIVersion: 12040,
		Init: &facts.CUDAStep{Step: facts.CUDAStepInit},
		Devices: []facts.CUDADevice{{Ordinal: 0, Result: "ok"}, {Ordinal: 1, Result: "context: CUDA_ERROR_DEVICE_UNAVAILABLE",
			Steps: []facts.CUDAStep{{Step: facts.CUDAStepContext, Code: 46, Error: "CUDA_ERROR_DEVICE_UNAVAILABLE"}}}},
	}}}})
	var b strings.Builder
	if err := report.Human(&b, r); err != nil {
		t.Fatal(err)
	}
	if want := "kernel: failed, driver API 12.4, 2 device(s); device 1 context: CUDA_ERROR_DEVICE_UNAVAILABLE"; !strings.Contains(b.String(), want) {
		t.Errorf("the human report does not say %q:\n%s", want, b.String())
	}
}

func TestHumanReportNamesThePythonTheCommandRuns(t *testing.T) {
	for _, c := range []struct {
		py   facts.Python
		want string
	}{
		{facts.Python{Interpreter: "/opt/venv/bin/python", How: "python on PATH", Environment: "/opt/venv", Version: "3.11"},
			"Python    /opt/venv/bin/python (3.11): python on PATH"},
		{facts.Python{How: "the command names no interpreter", Candidates: []string{"/opt/conda", "/usr"}},
			"Python    one of /opt/conda, /usr, each judged: the command names no interpreter"},
		{facts.Python{}, "Python    -"},
	} {
		r := report.New(report.Inputs{Now: reporttest.Time})
		r.Image.Python = c.py
		var b strings.Builder
		if err := report.Human(&b, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("the report does not say %q:\n%s", c.want, b.String())
		}
	}
}
