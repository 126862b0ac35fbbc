package trace_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report/trace"
	"github.com/gpu-preflight/gpu-preflight/test/tracetest"
)

// perNodeLedgers: node A's runs of an image all succeed, at even minutes;
// node B's fail from minute 3 on, at odd minutes. Each ledger is in time
// order; read one after the other they are not.
func perNodeLedgers(t *testing.T) (a, b []byte) {
	var ra, rb []tracetest.Run
	for m := range 9 {
		r := tracetest.Run{RunID: tracetest.RunID(9000 + m), At: t0.Add(time.Duration(m) * time.Minute),
			Driver: oldDrv, DriverCUDA: "12.2", Digest: digestA, Exit: tracetest.Exit(0)}
		if m%2 == 0 {
			r.Node = node(0)
			ra = append(ra, r)
			continue
		}
		r.Node = node(1)
		if m >= 3 {
			r.Driver, r.DriverCUDA, r.Exit = newDrv, "12.4", tracetest.Exit(1)
		}
		rb = append(rb, r)
	}
	return ledger(t, ra), ledger(t, rb)
}

func source(name string, b []byte) trace.Source { return trace.Stream(name, bytes.NewReader(b)) }

func TestMergedSourcesGiveTheBoundariesOfOneSourceInTimeOrder(t *testing.T) {
	a, b := perNodeLedgers(t)
	tr := trace.New(trace.Options{})
	for _, err := range tr.Read([]trace.Source{source("a", a), source("b", b)}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	res := tr.Result()
	if len(res.Regressions) != 1 {
		t.Fatalf("regressions %+v", res.Regressions)
	}
	h := res.Regressions[0]
	if h.Misplaced != 0 || len(h.Boundaries) != 3 {
		t.Fatalf("history %+v: want 3 boundaries, none misplaced", h)
	}
	first := h.Boundaries[0]
	if first.LastGood.RunID != tracetest.RunID(9002) || first.FirstBad.RunID != tracetest.RunID(9003) ||
		first.Changes[0].Field != "driver" || first.GoodRuns != 3 || first.BadRuns != 1 {
		t.Errorf("first boundary %+v: want 9002 -> 9003, the driver first, 3 good and 1 bad", first)
	}
	if res.Sources[0].Records != 5 || res.Sources[1].Records != 4 || res.Totals.Records != 9 {
		t.Errorf("sources %+v", res.Sources)
	}

	// The same two read one after the other: B's failures land inside A's
	// stretch of good runs, and are counted as misplaced, not placed.
	seq := traceOf(t, trace.Options{}, a, b)
	if seq.Regressions[0].Misplaced == 0 {
		t.Errorf("sequential reading placed runs it cannot: %+v", seq.Regressions[0])
	}
}

// TestBoundariesKeepTheirRunIDsAfterTheReadersBuffersAreReused: the run ids
// a boundary names were read many batches before the end, in one source and
// in two merged ones.
func TestBoundariesKeepTheirRunIDsAfterTheReadersBuffersAreReused(t *testing.T) {
	const n = 2000 // far more records than the batches in flight hold
	var even, odd []tracetest.Run
	for i := range n {
		r := tracetest.Run{RunID: tracetest.RunID(i), At: t0.Add(time.Duration(i) * time.Minute), Node: node(i % 2),
			Driver: oldDrv, DriverCUDA: "12.2", Digest: digestA, Exit: tracetest.Exit(0)}
		if i >= 10 {
			r.Exit = tracetest.Exit(1)
		}
		if i%2 == 0 {
			even = append(even, r)
		} else {
			odd = append(odd, r)
		}
	}
	for name, sources := range map[string][]trace.Source{
		"one":    {source("all", ledger(t, append(append([]tracetest.Run{}, even...), odd...)))},
		"merged": {source("even", ledger(t, even)), source("odd", ledger(t, odd))},
	} {
		tr := trace.New(trace.Options{})
		for _, err := range tr.Read(sources) {
			if err != nil {
				t.Fatal(err)
			}
		}
		res := tr.Result()
		if len(res.Regressions) != 1 || len(res.Regressions[0].Boundaries) != 1 {
			t.Fatalf("%s: regressions %+v: want one boundary", name, res.Regressions)
		}
		b := res.Regressions[0].Boundaries[0]
		if b.LastGood.RunID != tracetest.RunID(9) || b.FirstBad.RunID != tracetest.RunID(10) {
			t.Errorf("%s: boundary %s -> %s, want %s -> %s", name, b.LastGood.RunID, b.FirstBad.RunID, tracetest.RunID(9), tracetest.RunID(10))
		}
	}
}
