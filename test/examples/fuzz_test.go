package examples

import (
	"os"
	"path/filepath"
	"testing"
)

// seeds adds the repository's real files to a fuzz corpus.
func seeds(f *testing.F, rels ...string) {
	for _, rel := range rels {
		data, err := os.ReadFile(filepath.Join("..", "..", rel))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
}

func FuzzParseFluentBit(f *testing.F) {
	seeds(f, "examples/logging/fluent-bit.conf", "examples/logging/parsers.conf")
	f.Add("[A]\n  k v\n\tk v\n[")
	f.Fuzz(func(t *testing.T, src string) {
		secs, err := ParseFluentBit(src)
		if err != nil {
			return
		}
		for _, s := range secs {
			if s.Name == "" {
				t.Fatal("a section without a name")
			}
			for _, e := range s.Entries {
				if e[1] == "" {
					t.Fatalf("entry %q without a value", e[0])
				}
			}
		}
	})
}

func FuzzBetween(f *testing.F) {
	seeds(f, "README.md")
	f.Add("a <!-- x --> b <!-- /x --> c")
	f.Fuzz(func(t *testing.T, doc string) {
		if s, err := Between(doc, "<!-- x -->", "<!-- /x -->"); err == nil && len(s) > len(doc) {
			t.Fatal("longer than the document")
		}
		for _, b := range CodeBlocks(doc) {
			_ = Commands(b)
		}
	})
}
