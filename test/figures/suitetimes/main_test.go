package main

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// sample is a suite-times table as README.md writes one.
const sample = `The times:

<!-- suite-times -->
| step | CPU seconds | noise | idle wall seconds |
|---|---:|---|---:|
| ` + "`deps`" + ` | 1 | 3x ±10 s | 1 |
| ` + "`lint`" + ` | 52 | 3x ±10 s | 40 |
| ` + "`test-fuzz`" + ` | 56 | 2x ±0 s | 30 |
<!-- /suite-times -->
`

func sampleQuotes(t *testing.T) []quote {
	t.Helper()
	q, err := parseQuotes(sample)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestParseQuotes(t *testing.T) {
	want := []quote{{"deps", 1, 3, 10, 1}, {"lint", 52, 3, 10, 40}, {"test-fuzz", 56, 2, 0, 30}}
	if got := sampleQuotes(t); !reflect.DeepEqual(got, want) {
		t.Errorf("parseQuotes = %+v, want %+v", got, want)
	}
	if lo, hi := want[1].band(); math.Abs(lo-22.0/3) > 1e-9 || hi != 166 {
		t.Errorf("lint's band = %g-%g, want 7.33-166", lo, hi)
	}
	if lo, _ := want[0].band(); lo != 0 {
		t.Errorf("deps's band starts at %g, want 0 (never below no time)", lo)
	}
}

func TestParseQuotesRejectsAMalformedTable(t *testing.T) {
	open, close := "<!-- "+table+" -->", "<!-- /"+table+" -->"
	row := func(s string) string {
		return open + "\n| step | CPU seconds | noise | idle wall seconds |\n" + s + "\n" + close
	}
	for _, doc := range []string{
		"no table",
		open + "\n| `a` | 3 | 3x ±10 s | 2 |\n",
		row(""),
		row("| `a` | 3 | 3x ±10 s |"),
		row("| `a` | 3 | 3x ±10 s | 2 | extra |"),
		row("| `a` | many | 3x ±10 s | 2 |"),
		row("| `a` | 0 | 3x ±10 s | 2 |"),
		row("| `a` | -4 | 3x ±10 s | 2 |"),
		row("| `a` | 3 | 3x ±10 s | 0 |"),
		row("| `a` | 3 | 3x ±10 s | soon |"),
		row("| `a` | 3 | ±10% | 2 |"),
		row("| `a` | 3 | 0.5x ±10 s | 2 |"),
		row("| `a` | 3 | 3x ±-1 s | 2 |"),
		row("| `a` | 3 | 3x 10 s | 2 |"),
		row("| `` | 3 | 3x ±10 s | 2 |"),
		row("a line that is no row"),
		row("| `a` | 3 | 3x ±10 s | 2 |\n| `a` | 4 | 3x ±10 s | 2 |"),
	} {
		if _, err := parseQuotes(doc); err == nil {
			t.Errorf("parseQuotes(%q) accepted it", doc)
		}
	}
}

// README.md's table parses, and quotes exactly the steps make test runs
// (the Makefile's TEST_STEPS), in their order.
func TestREADMEQuotesEveryStepOfMakeTest(t *testing.T) {
	root := harness.Root(t)
	doc, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	quotes, err := parseQuotes(string(doc))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	var quoted []string
	for _, q := range quotes {
		quoted = append(quoted, q.step)
	}
	cmd := exec.Command("make", "-pnq", "-f", "Makefile")
	cmd.Dir = root
	out, _ := cmd.Output() // -q exits 1 when a target is out of date
	var steps []string
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "TEST_STEPS := "); ok {
			steps = strings.Fields(v)
		}
	}
	if len(steps) == 0 {
		t.Fatalf("make -pnq printed no TEST_STEPS:\n%.2000s", out)
	}
	if !reflect.DeepEqual(quoted, steps) {
		t.Errorf("README.md's suite-times table quotes %q; make test runs %q", quoted, steps)
	}
}

func TestParseRuns(t *testing.T) {
	runs, notes, err := parseRuns("# make test at noon\ndeps\t1.2\t0.3\t0.50\t-\nlint\t40.0\t71.5\t1.90\tsysroot: 6 bullseye amd64 packages; 3 new files\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []run{{"deps", 1.2, 0.3, 0.5, ""}, {"lint", 40, 71.5, 1.9, "sysroot: 6 bullseye amd64 packages; 3 new files"}}
	if !reflect.DeepEqual(runs, want) || !reflect.DeepEqual(notes, []string{"make test at noon"}) {
		t.Errorf("parseRuns = %+v, %q", runs, notes)
	}
	for _, text := range []string{
		"",
		"# only a note\n",
		"deps 1.2 0.3 0.5 -\n",
		"deps\t1.2\t0.5\t-\n",
		"deps\tfast\t0.3\t0.5\t-\n",
		"deps\t1.2\tlittle\t0.5\t-\n",
		"deps\t-1\t0.3\t0.5\t-\n",
		"deps\t1\t-0.3\t0.5\t-\n",
		"deps\t1\t0.3\t0.5\t\n",
		"deps\t1\t0.3\t0.5\t-\ndeps\t2\t0.3\t0.5\t-\n",
	} {
		if _, _, err := parseRuns(text); err == nil {
			t.Errorf("parseRuns(%q) accepted it", text)
		}
	}
}

// checkRuns runs check on the sample's quotes and returns its output and
// failures.
func checkRuns(t *testing.T, runs ...run) (string, []string) {
	t.Helper()
	var out bytes.Buffer
	failures := check(&out, sampleQuotes(t), runs)
	return out.String(), failures
}

// A loaded machine stretches the wall times as far as it likes: the CPU
// times decide.
func TestCheckPassesCPUTimesWithinTheNoiseAtAnyWallTime(t *testing.T) {
	out, failures := checkRuns(t, run{"deps", 30, 0, 20, ""}, run{"lint", 900, 150, 20, ""}, run{"test-fuzz", 700, 100, 20, ""})
	if len(failures) > 0 {
		t.Errorf("failures %q\n%s", failures, out)
	}
}

func TestCheckFailsAStepThatDidMoreWork(t *testing.T) {
	out, failures := checkRuns(t, run{"deps", 1, 1, 1, ""}, run{"lint", 60, 167, 1, ""}, run{"test-fuzz", 30, 56, 1, ""})
	if len(failures) != 1 || !strings.Contains(failures[0], "lint took 167.0 CPU s, more than README.md's 52 s allows (7-166 s") {
		t.Errorf("failures %q", failures)
	}
	if !strings.Contains(out, "FAIL: more work") {
		t.Errorf("output:\n%s", out)
	}
}

func TestCheckFailsAStepThatDidLessWork(t *testing.T) {
	_, failures := checkRuns(t, run{"deps", 1, 1, 1, ""}, run{"lint", 40, 52, 1, ""}, run{"test-fuzz", 30, 27.9, 1, ""})
	if len(failures) != 1 || !strings.Contains(failures[0], "test-fuzz took 27.9 CPU s, less than") || !strings.Contains(failures[0], "skip work") {
		t.Errorf("failures %q", failures)
	}
}

// A step that downloaded passes however much it took, the output says it
// was excused and why, and the estimate counts its quoted wall time.
func TestCheckExcusesADownloadingStep(t *testing.T) {
	out, failures := checkRuns(t, run{"deps", 1, 1, 1, ""}, run{"lint", 900, 600, 1, "sysroot: 6 bullseye amd64 packages"}, run{"test-fuzz", 30, 56, 1, ""})
	if len(failures) > 0 {
		t.Errorf("failures %q", failures)
	}
	for _, want := range []string{
		"EXCUSED: it downloaded (sysroot: 6 bullseye amd64 packages); the quoted time is for a warm download cache",
		"657.0 s", "931.0 s", "idle estimate    71 s <= 600 s, counting the quoted time of the 1 excused step(s): ok",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestCheckFailsAMissingOrUnquotedStep(t *testing.T) {
	_, failures := checkRuns(t, run{"deps", 1, 1, 1, ""}, run{"test-fuzz", 30, 56, 1, ""}, run{"test-new", 20, 35, 1, ""})
	want := []string{
		"make test ran test-new, for which README.md's suite-times table has no row: add one (35 CPU s, 20 s wall in this run)",
		"README.md's suite-times table quotes lint, which make test did not run: remove the row, or run the step again",
	}
	if !reflect.DeepEqual(failures, want) {
		t.Errorf("failures %q, want %q", failures, want)
	}
}

// The 10 minutes are held on the idle estimate: each step's idle wall time
// scaled by its CPU time against the quote, whatever the wall times were.
func TestCheckFailsAnIdleEstimateOverTheLimit(t *testing.T) {
	quotes := []quote{{"a", 200, 3, 10, 300}, {"b", 200, 3, 10, 290}}
	var out bytes.Buffer
	if failures := check(&out, quotes, []run{{"a", 2000, 200, 20, ""}, {"b", 2000, 200, 20, ""}}); len(failures) != 0 {
		t.Errorf("failures %q\n%s", failures, out.String())
	}
	out.Reset()
	failures := check(&out, quotes, []run{{"a", 300, 210, 1, ""}, {"b", 290, 200, 1, ""}})
	if len(failures) != 1 || failures[0] != "make test would take 605 s on an idle machine (each step's idle wall time scaled by its CPU time), more than its limit of 600 s" {
		t.Errorf("failures %q\n%s", failures, out.String())
	}
	// Excused, a step counts its quoted wall time: 300 + 290 is within.
	out.Reset()
	if failures := check(&out, quotes, []run{{"a", 300, 200, 1, ""}, {"b", 1000, 900, 1, "x"}}); len(failures) != 0 {
		t.Errorf("failures %q\n%s", failures, out.String())
	}
}

// scripts/test-steps.sh runs each step, notes what it downloaded (lines
// scripts/log-download.sh added to the download cache's log, files added
// to a Go module cache, this user's or one nested in the download cache)
// and writes what parseRuns reads; checkFile then judges that against
// README.md, which quotes other steps, and fails naming them.
func TestTestStepsNotesDownloads(t *testing.T) {
	root := harness.Root(t)
	dir := t.TempDir()
	cache, mod := filepath.Join(dir, "cache"), filepath.Join(dir, "mod")
	makefile := "quiet:\n\ttrue\n" +
		"work:\n\tsh -c \"awk 'BEGIN { for (i = 0; i < 1e7; i++) s += i }'\"\n" +
		"wait:\n\tsleep 0.5\n" +
		"fetch:\n\tbash " + filepath.Join(root, "scripts", "log-download.sh") + " 'debootstrap, a fresh root'\n" +
		"module:\n\tmkdir -p $(CACHE)/nobody/gomodcache/cache/download $(GOMODCACHE)/cache/download\n" +
		"\ttouch $(CACHE)/nobody/gomodcache/cache/download/a.zip $(GOMODCACHE)/cache/download/b.mod $(GOMODCACHE)/cache/download/c.zip\n"
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(makefile), 0o644); err != nil {
		t.Fatal(err)
	}
	times := filepath.Join(dir, "out", "times")
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "test-steps.sh"), times, "quiet", "fetch", "module", "work", "wait")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CACHE="+cache, "GOMODCACHE="+mod, "MAKE=make")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("test-steps.sh: %v\n%s", err, out)
	}
	text, err := os.ReadFile(times)
	if err != nil {
		t.Fatal(err)
	}
	runs, notes, err := parseRuns(string(text))
	if err != nil {
		t.Fatalf("%v:\n%s", err, text)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.step+": "+r.downloaded)
	}
	want := []string{
		"quiet: ",
		"fetch: debootstrap, a fresh root",
		"module: 1 new files in the Go module cache " + filepath.Join(cache, "nobody", "gomodcache") + "; 2 new files in the Go module cache " + mod,
		"work: ", "wait: ",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("test-steps.sh noted downloads %q, want %q\n%s", got, want, text)
	}
	// CPU time counts the step's whole process tree (awk under sh under
	// make), and not the time it waited.
	if len(runs) == 5 {
		if work, wait := runs[3], runs[4]; !(work.seconds >= 0.1) || !(wait.seconds < 0.1) || !(wait.wall >= 0.5) {
			t.Errorf("test-steps.sh measured %+v for a step that computes and %+v for one that sleeps 0.5 s", work, wait)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "load average") {
		t.Errorf("notes %q", notes)
	}

	var out bytes.Buffer
	err = checkFile(&out, times)
	if err == nil || !strings.Contains(err.Error(), "make test ran quiet, for which README.md's suite-times table has no row") ||
		!strings.Contains(err.Error(), "quotes lint, which make test did not run") {
		t.Errorf("checkFile: %v\n%s", err, out.String())
	}

	// A failing step stops the run, after the steps before it were written.
	cmd = exec.Command("bash", filepath.Join(root, "scripts", "test-steps.sh"), times, "quiet", "no-such-step", "fetch")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CACHE="+cache, "GOMODCACHE="+mod, "MAKE=make")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "make test: no-such-step failed") {
		t.Errorf("test-steps.sh with a failing step: %v\n%s", err, out)
	}
	if text, _ := os.ReadFile(times); strings.Count(string(text), "\n") != 2 || !strings.Contains(string(text), "quiet\t") {
		t.Errorf("after a failing step, the times file holds:\n%s", text)
	}
}
