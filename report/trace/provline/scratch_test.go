package provline

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/report/trace/jsonstream"
)

// TestScratchStringsOutliveTheChunkTheyWereMadeIn: a full chunk is let go,
// not reused, so a string made in it holds its value until Recycle.
func TestScratchStringsOutliveTheChunkTheyWereMadeIn(t *testing.T) {
	var s Scratch
	var made []string
	for i := range 2 * scratchChunk / 8 {
		made = append(made, s.Bytes([]byte(strconv.Itoa(10_000_000+i))))
	}
	for i, v := range made {
		if want := strconv.Itoa(10_000_000 + i); v != want {
			t.Fatalf("string %d is %q, want %q", i, v, want)
		}
	}
	s.Recycle()
	if v := s.String(strings.Repeat("x", 3)); v != "xxx" || s.Bytes(nil) != "" {
		t.Errorf("after Recycle: %q", v)
	}
}

// TestAValueRepeatedAfterRecycleIsMadeAgain: a record's startedAt equal to
// the last record's, read after Recycle, is not the old string, whose
// bytes the next value overwrites.
func TestAValueRepeatedAfterRecycleIsMadeAgain(t *testing.T) {
	var s Scratch
	b := &Builder{Scratch: &s}
	read := func(runID, pod string) Run {
		d := jsonstream.NewBytesDecoder([]byte(`{"schemaVersion":"1","runId":"` + runID + `","startedAt":"2026-11-24T11:50:00.000000000Z","orchestrator":{"kubernetes":{"podName":"` + pod + `"}}}`))
		if k, err := d.Next(); k != jsonstream.ObjectStart || err != nil {
			t.Fatal(k, err)
		}
		if err := b.ReadObject(d); err != nil {
			t.Fatal(err)
		}
		r, _ := b.Run()
		return r
	}
	read(strings.Repeat("a", 32), "pod-a")
	s.Recycle()
	if r := read(strings.Repeat("b", 32), "typo-0-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"); r.StartedAt != "2026-11-24T11:50:00.000000000Z" || r.Orchestrator.PodName != "typo-0-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" {
		t.Errorf("startedAt %q, pod %q", r.StartedAt, r.Orchestrator.PodName)
	}
}
