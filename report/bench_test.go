package report_test

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
)

// Building the record, redaction and bounds included.
func BenchmarkNew(b *testing.B) {
	in := reporttest.Inputs()
	for i := 0; i < b.N; i++ {
		report.New(in)
	}
}
