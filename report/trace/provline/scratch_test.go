package provline

import (
	"strconv"
	"strings"
	"testing"
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
