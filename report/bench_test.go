package report

import (
	"io"
	"testing"
	"time"
)

// The cost of the provenance part of a run (docs/sources.md, "What gpu-preflight is held to" asks for the
// durable write's cost to be measured): building the record, logging it as
// one line, and writing it with its two fsyncs.
func BenchmarkNew(b *testing.B) {
	in := sampleInputs()
	for i := 0; i < b.N; i++ {
		New(in)
	}
}

func BenchmarkLogRecord(b *testing.B) {
	r := New(sampleInputs())
	l, _ := NewLogger(io.Discard, FormatJSON, "info")
	for i := 0; i < b.N; i++ {
		if err := LogRecord(l, r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWrite(b *testing.B) {
	dir := b.TempDir()
	in := sampleInputs()
	for i := 0; i < b.N; i++ {
		in.Now = time.Now()
		if _, err := Write(dir, New(in)); err != nil {
			b.Fatal(err)
		}
	}
}
