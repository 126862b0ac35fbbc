package examples

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// The repository stands on its own: no tracked file points at notes
// outside it, and every pointer into docs/sources.md names one of its
// sections.
func TestReferencesStayInTheRepository(t *testing.T) {
	out, err := exec.Command("git", "-C", harness.Root(t), "ls-files").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	// Spelt in pieces so this file does not match itself; the spec as a
	// word, so AF_UNSPEC is no match.
	outside := regexp.MustCompile(`\bSP` + `EC\b|research` + `/|\.\./` + `shared|/work/` + `shared`)
	sources := readRepoFile(t, "docs/sources.md")
	headings := map[string]bool{}
	for _, l := range strings.Split(sources, "\n") {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			headings[h] = true
		}
	}
	// A pointer may break across comment lines: join them first.
	pointer := regexp.MustCompile(`docs/sources\.md, "([^"]+)"`)
	joiner := regexp.MustCompile(`\n\s*(//|#)?\s*`)
	for _, f := range strings.Fields(string(out)) {
		text := readRepoFile(t, f)
		for _, s := range outside.FindAllString(text, -1) {
			t.Errorf("%s refers to %q, which is not in the repository", f, s)
		}
		for _, m := range pointer.FindAllStringSubmatch(joiner.ReplaceAllString(text, " "), -1) {
			if !headings[m[1]] {
				t.Errorf("%s points at docs/sources.md section %q, which does not exist", f, m[1])
			}
		}
	}
}
