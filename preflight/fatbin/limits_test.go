package fatbin

import (
	"bytes"
	"debug/elf"
	"strings"
	"testing"

	ft "github.com/gpu-preflight/gpu-preflight/preflight/fatbin/fatbintest"
)

// Past maxEntries, entries are counted in Images but not listed.
func TestEntriesAreBounded(t *testing.T) {
	defer func(n int) { maxEntries = n }(maxEntries)
	maxEntries = 10
	var list []ft.Entry
	for range 25 {
		list = append(list, ft.Entry{Kind: ft.Cubin, SM: 80})
	}
	b, err := ft.SO{Fatbin: ft.Containers(list)}.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Scan(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 10 || len(r.Images) != 1 || r.Images[0].Count != 25 {
		t.Errorf("%d entries, images %+v; want 10 entries and sm_80 counted 25 times", len(r.Entries), r.Images)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "15 more entries were counted in Images but not listed in Entries") {
		t.Errorf("Warnings = %q", r.Warnings)
	}
}
