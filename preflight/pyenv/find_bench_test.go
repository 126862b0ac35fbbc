package pyenv

import (
	"fmt"
	"testing"
)

// BenchmarkFindInAnImageWithAFullUsrBin is Find over an image whose
// /usr/bin holds 2000 programs, as a CUDA devel image's does: every PATH
// directory is searched for python3.Y, on every start a manifest is
// checked.
//
//	go test ./preflight/pyenv/ -run '^$' -bench FullUsrBin -benchmem
func BenchmarkFindInAnImageWithAFullUsrBin(b *testing.B) {
	files := map[string]string{
		"usr/bin/python3.11":                      "",
		"usr/bin/python3":                         "->python3.11",
		"usr/lib/python3/dist-packages/":          "",
		"usr/local/lib/python3.11/dist-packages/": "",
		"usr/local/bin/":                          "",
	}
	for i := range 2000 {
		files[fmt.Sprintf("usr/bin/prog%04d", i)] = ""
	}
	r := root(b, files)
	env := map[string]string{"PATH": DefaultPATH}
	for b.Loop() {
		if len(Find(r, env).Environments) == 0 {
			b.Fatal("no environment")
		}
	}
}
