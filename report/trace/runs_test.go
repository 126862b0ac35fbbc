package trace

import (
	"math/rand/v2"
	"testing"
)

// The run set holds every run apart, in any order of arrival, across the
// blocks of a bucket, and a run's value is the one put last.
func TestRunSetKeepsEveryRunApart(t *testing.T) {
	var s runSet
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]uint64, 20000)
	for i := range keys {
		keys[i] = rng.Uint64() >> 4 // 16 buckets, over a hundred blocks each
		if _, seen := s.get(keys[i]); seen {
			t.Fatalf("key %d seen before it was put", i)
		}
		s.put(keys[i], uint16(i))
	}
	for i, k := range keys {
		if i%3 == 0 {
			s.put(k, uint16(i)^0xffff)
		}
	}
	for i, k := range keys {
		want := uint16(i)
		if i%3 == 0 {
			want ^= 0xffff
		}
		if v, seen := s.get(k); !seen || v != want {
			t.Fatalf("key %d: got %d, %v; want %d", i, v, seen, want)
		}
	}
	for b := range s.buckets {
		bk := &s.buckets[b]
		for i := 1; i < bk.n; i++ {
			if getEntry(bk.entry(i-1))>>16 >= getEntry(bk.entry(i))>>16 {
				t.Fatalf("bucket %d is out of order at %d", b, i)
			}
		}
	}
}

// A run's id reads back as it was given, packed (gpu-preflight's own) or
// not (upper-case, another length, not hex), without allocating when packed.
func TestARunIDReadsBackAsGiven(t *testing.T) {
	for _, id := range []string{
		"350ca8af00000000350ca8af00000000", "0123456789abcdef0123456789abcdef", "00000000000000000000000000000000",
		"350CA8AF00000000350CA8AF00000000", "350ca8af00000000350ca8af0000000", "350ca8af00000000350ca8af000000000",
		"350ca8af00000000350ca8af0000000g", "ab", "run-1", "\xff\xfe",
	} {
		if got := makeRunID(id).String(); got != id {
			t.Errorf("makeRunID(%q).String() = %q", id, got)
		}
	}
	own := "0123456789abcdef0123456789abcdef"
	if n := testing.AllocsPerRun(10, func() { _ = makeRunID(own) }); n != 0 {
		t.Errorf("packing gpu-preflight's own run id allocates %v times", n)
	}
}
