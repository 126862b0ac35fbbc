package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// FuzzParseQuotes: any document parses or is refused, never a panic; what
// parses is a table check can use: named steps, positive seconds, a band
// around them.
func FuzzParseQuotes(f *testing.F) {
	doc, err := os.ReadFile(filepath.Join(harness.Root(f), "README.md"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(doc))
	f.Add(sample)
	f.Fuzz(func(t *testing.T, doc string) {
		quotes, err := parseQuotes(doc)
		if err != nil {
			return
		}
		for _, q := range quotes {
			lo, hi := q.band()
			if q.step == "" || !(q.seconds > 0) || !(lo >= 0 && lo <= q.seconds && q.seconds <= hi) {
				t.Fatalf("parseQuotes gave %+v, band %g-%g", q, lo, hi)
			}
		}
	})
}

// FuzzParseRuns: any times file parses or is refused, never a panic; what
// parses has named steps with times, and check judges it against the
// sample's quotes without a panic.
func FuzzParseRuns(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "suite-times"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(seed))
	f.Add("# a note\ndeps\t1.2\t0.50\t-\nlint\t900\t1.90\tsysroot: 6 bullseye amd64 packages\n")
	quotes, err := parseQuotes(sample)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		runs, _, err := parseRuns(text)
		if err != nil {
			return
		}
		for _, r := range runs {
			if r.step == "" || strings.Contains(r.step, "\t") || !(r.seconds >= 0) {
				t.Fatalf("parseRuns gave %+v", r)
			}
		}
		check(io.Discard, quotes, runs)
	})
}
