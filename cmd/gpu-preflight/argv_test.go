package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// 1.9 MB of arguments (issue 24: an 11.8 MB record, 102 MiB RSS) make a
// record, a ledger line and a provenance line of under 100 KiB each, within
// the memory bar, and the command still runs with all of them.
func TestHugeArgvMakesASmallRecord(t *testing.T) {
	dir := t.TempDir()
	prov, ledger := filepath.Join(dir, "prov"), filepath.Join(dir, "runs.jsonl")
	args := append([]string{"--", "sh", "-c", `test $# -eq 9500`, "sh"}, slices.Repeat([]string{"--x=" + strings.Repeat("a", 196)}, 9500)...)
	m := runMeasured(t, []string{"PREFLIGHT_PROVENANCE_DIR=" + prov, "PREFLIGHT_LEDGER=" + ledger, "PREFLIGHT_SUPERVISE=true"}, args...)
	wantBounded(t, m, 0)
	files, _ := filepath.Glob(filepath.Join(prov, "*.json"))
	if len(files) != 1 {
		t.Fatalf("%d records", len(files))
	}
	for _, p := range append(files, ledger) {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if limit := int64(200 << 10); st.Size() > limit {
			t.Errorf("%s is %d bytes, over %d", filepath.Base(p), st.Size(), limit)
		}
	}
	for _, line := range strings.Split(m.stderr, "\n") {
		if len(line) > 100<<10 {
			t.Errorf("a log line of %d bytes: %.200s", len(line), line)
		}
	}
	if !strings.Contains(m.stderr, `"argvDropped":`) {
		t.Errorf("the provenance line does not say how much of argv it left out:\n%.2000s", m.stderr)
	}
}
