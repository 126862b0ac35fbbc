package store

import (
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
)

// The durable write's cost (docs/sources.md, "What gpu-preflight is held
// to" asks for it to be measured): the record file with its two fsyncs.
func BenchmarkWrite(b *testing.B) {
	dir := b.TempDir()
	in := reporttest.Inputs()
	for i := 0; i < b.N; i++ {
		in.Now = time.Now()
		if _, err := Write(dir, report.New(in)); err != nil {
			b.Fatal(err)
		}
	}
}
