package trace_test

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/report/trace"
	"github.com/gpu-preflight/gpu-preflight/test/tracetest"
)

// BenchmarkRead reads bench/trace.sh's fleet in each of its forms, plain
// and gzip'd, from memory: the reader's own cost (docs/PERFORMANCE.md).
func BenchmarkRead(b *testing.B) {
	shape := tracetest.BenchShape(5000)
	runs := make([]tracetest.Run, shape.Records)
	for i := range runs {
		runs[i] = shape.Run(i)
	}
	for _, form := range []string{"cri", "loki"} {
		plain := tracetest.BenchForms[form](runs)
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(plain)
		zw.Close()
		for _, in := range []struct {
			name string
			data []byte
		}{{form, plain}, {form + "-gz", gz.Bytes()}} {
			b.Run(in.name, func(b *testing.B) {
				b.SetBytes(int64(len(plain)))
				b.ReportAllocs()
				for b.Loop() {
					tr := trace.New(trace.Options{})
					for _, err := range tr.Read([]trace.Source{trace.Stream(in.name, bytes.NewReader(in.data))}) {
						if err != nil {
							b.Fatal(err)
						}
					}
					if got := tr.Result().Totals.Records; got != int64(shape.Records) {
						b.Fatalf("%d records read, want %d", got, shape.Records)
					}
				}
			})
		}
	}
}
