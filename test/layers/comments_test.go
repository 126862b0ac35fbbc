package layers

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Comments say why in a line or two; the history and the figures live in
// commit messages and docs. The share is the one docs/CONTRIBUTING.md's
// command prints: comment lines over non-blank lines of the tracked,
// non-test, non-generated Go files.
func TestCommentsStayUnderFifteenPercent(t *testing.T) {
	const most = 15.0
	out, err := exec.Command("git", "-C", "../..", "ls-files", "*.go").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v (the test reads the tracked files; run it in a git checkout)", err)
	}
	comments, lines := 0, 0
	for _, name := range strings.Fields(string(out)) {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile("../../" + name)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(src, []byte("\n// Code generated")) || bytes.HasPrefix(src, []byte("// Code generated")) {
			continue
		}
		for _, line := range bytes.Split(src, []byte("\n")) {
			line = bytes.TrimLeft(line, " \t")
			if len(line) > 0 {
				lines++
			}
			if bytes.HasPrefix(line, []byte("//")) {
				comments++
			}
		}
	}
	share := 100 * float64(comments) / float64(lines)
	t.Logf("%d comment lines of %d: %.1f%%", comments, lines, share)
	if share >= most {
		t.Errorf("comment lines are %.1f%% of the code, at or over %.0f%%: say why in fewer lines, move history to the commit message", share, most)
	}
}
