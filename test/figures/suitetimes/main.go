// Command suitetimes holds what make test measured to the suite times
// README.md quotes, and make test to its 10 minutes. make test runs it as
// its last step:
//
//	go run ./test/figures/suitetimes TIMES
//
// TIMES is the file scripts/test-steps.sh wrote: per step its wall
// seconds, the load average at its end and what it downloaded. The quoted
// times live in README.md between <!-- suite-times --> and
// <!-- /suite-times -->, one row a step:
//
//	| step | seconds | noise |
//	| `lint` | 52 | 3x ±10 s |
//
// A measurement m of a quoted time q with noise "Fx ±S s" holds when
// q/F - S <= m <= q*F + S. A step that downloaded is excused: the quoted
// times are for a warm download cache, and a download's time is the
// network's. It prints every step's verdict and exits 1 when one fails.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/test/figures"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// limit is the most make test may take on the 2-core development machine
// with the download cache warm, in seconds (issue 25: "make test under 10
// minutes").
const limit = 600

// table is the name of README.md's suite-times table (its markers).
const table = "suite-times"

// quote is one step's quoted wall time and its noise.
type quote struct {
	step    string
	seconds float64
	factor  float64 // F of "Fx ±S s"
	slack   float64 // S, in seconds
}

// band is the range of measurements the quote allows.
func (q quote) band() (lo, hi float64) {
	return max(0, q.seconds/q.factor-q.slack), q.seconds*q.factor + q.slack
}

// run is one step as make test measured it.
type run struct {
	step       string
	seconds    float64
	load       float64 // the 1-minute load average at its end
	downloaded string  // what it downloaded, "" for nothing
}

// parseQuotes reads the suite-times table of a Markdown document, in its
// order.
func parseQuotes(doc string) ([]quote, error) {
	rows, err := figures.Rows(doc, table, "step", 3)
	if err != nil {
		return nil, err
	}
	var out []quote
	seen := map[string]bool{}
	for _, cells := range rows {
		step := strings.Trim(cells[0], "`")
		if step == "" || strings.ContainsAny(step, " \t") {
			return nil, fmt.Errorf("%q names no step", cells)
		}
		q := quote{step: step}
		var err error
		if q.seconds, err = strconv.ParseFloat(cells[1], 64); err != nil || !(q.seconds > 0) || q.seconds > 1e6 {
			return nil, fmt.Errorf("step %s: seconds %q is not a positive number", step, cells[1])
		}
		if q.factor, q.slack, err = parseNoise(cells[2]); err != nil {
			return nil, fmt.Errorf("step %s: %v", step, err)
		}
		if seen[step] {
			return nil, fmt.Errorf("step %s quoted twice", step)
		}
		seen[step] = true
		out = append(out, q)
	}
	return out, nil
}

// parseNoise reads "Fx ±S s": F at least 1, S at least 0.
func parseNoise(cell string) (factor, slack float64, err error) {
	bad := fmt.Errorf("noise %q is not \"Fx ±S s\" (F >= 1, S >= 0 seconds)", cell)
	f := strings.Fields(cell)
	if len(f) != 3 || f[2] != "s" {
		return 0, 0, bad
	}
	fs, ok1 := strings.CutSuffix(f[0], "x")
	ss, ok2 := strings.CutPrefix(f[1], "±")
	if !ok1 || !ok2 {
		return 0, 0, bad
	}
	factor, err1 := strconv.ParseFloat(fs, 64)
	slack, err2 := strconv.ParseFloat(ss, 64)
	if err1 != nil || err2 != nil || !(factor >= 1) || !(slack >= 0) || factor > 1e3 || slack > 1e6 {
		return 0, 0, bad
	}
	return factor, slack, nil
}

// parseRuns reads what scripts/test-steps.sh wrote: the steps in their
// order, and the notes (lines starting with #, without it).
func parseRuns(text string) (runs []run, notes []string, err error) {
	seen := map[string]bool{}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if note, ok := strings.CutPrefix(line, "#"); ok {
			notes = append(notes, strings.TrimSpace(note))
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 || f[0] == "" || f[3] == "" {
			return nil, nil, fmt.Errorf("line %d, %q: want step, seconds, load and downloads, tab-separated", i+1, line)
		}
		r := run{step: f[0]}
		var err1, err2 error
		r.seconds, err1 = strconv.ParseFloat(f[1], 64)
		r.load, err2 = strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil || !(r.seconds >= 0) || !(r.load >= 0) || r.seconds > 1e6 {
			return nil, nil, fmt.Errorf("line %d, %q: seconds and load must be numbers, at least 0", i+1, line)
		}
		if f[3] != "-" {
			r.downloaded = f[3]
		}
		if seen[r.step] {
			return nil, nil, fmt.Errorf("line %d: step %s measured twice", i+1, r.step)
		}
		seen[r.step] = true
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return nil, nil, errors.New("no step was measured")
	}
	return runs, notes, nil
}

// check writes each step's verdict and the total's to w, and returns the
// failures: a step slower or faster than its quote allows, a step measured
// and not quoted or quoted and not measured, a total over limit. A step
// that downloaded is excused, and the total then counts its quoted time
// in place of its measured one, as the warm-cache run it stands for.
func check(w io.Writer, quotes []quote, runs []run) (failures []string) {
	quoted := map[string]quote{}
	for _, q := range quotes {
		quoted[q.step] = q
	}
	measured := map[string]bool{}
	var total, estimate float64
	excused := 0
	fmt.Fprintf(w, "  %-16s %9s %7s %12s %5s\n", "step", "measured", "quoted", "allowed", "load")
	for _, r := range runs {
		measured[r.step] = true
		total += r.seconds
		q, ok := quoted[r.step]
		if !ok {
			estimate += r.seconds
			fmt.Fprintf(w, "  %-16s %7.1f s %7s %12s %5.2f  FAIL: not quoted\n", r.step, r.seconds, "-", "-", r.load)
			failures = append(failures, fmt.Sprintf("make test ran %s, for which README.md's suite-times table has no row: add one (%.0f s in this run)", r.step, r.seconds))
			continue
		}
		lo, hi := q.band()
		allowed := fmt.Sprintf("%.0f-%.0f s", lo, hi)
		prefix := fmt.Sprintf("  %-16s %7.1f s %5g s %12s %5.2f", r.step, r.seconds, q.seconds, allowed, r.load)
		switch {
		case r.downloaded != "":
			excused++
			estimate += q.seconds
			fmt.Fprintf(w, "%s  EXCUSED: it downloaded (%s); the quoted time is for a warm download cache\n", prefix, r.downloaded)
		case r.seconds > hi:
			estimate += r.seconds
			fmt.Fprintf(w, "%s  FAIL: slower\n", prefix)
			failures = append(failures, fmt.Sprintf("%s took %.1f s, more than README.md's %g s allows (%s, noise %gx ±%g s), at a load average of %.2f", r.step, r.seconds, q.seconds, allowed, q.factor, q.slack, r.load))
		case r.seconds < lo:
			estimate += r.seconds
			fmt.Fprintf(w, "%s  FAIL: faster\n", prefix)
			failures = append(failures, fmt.Sprintf("%s took %.1f s, less than README.md's %g s allows (%s, noise %gx ±%g s): did it skip work it used to do?", r.step, r.seconds, q.seconds, allowed, q.factor, q.slack))
		default:
			estimate += r.seconds
			fmt.Fprintf(w, "%s  ok\n", prefix)
		}
	}
	for _, q := range quotes {
		if !measured[q.step] {
			failures = append(failures, fmt.Sprintf("README.md's suite-times table quotes %s, which make test did not run: remove the row, or run the step again", q.step))
		}
	}
	verdict := "ok"
	if estimate > limit {
		verdict = "FAIL: over the limit"
		failures = append(failures, fmt.Sprintf("make test took %.0f s, more than its limit of %d s", estimate, limit))
	}
	if excused == 0 {
		fmt.Fprintf(w, "  %-16s %7.1f s %7s %12s        %s\n", "total", total, "", fmt.Sprintf("<= %d s", limit), verdict)
	} else {
		fmt.Fprintf(w, "  %-16s %7.1f s %7s %12s        %s: %.0f s counting the quoted time of the %d excused step(s), as a warm cache would take\n",
			"total", total, "", fmt.Sprintf("<= %d s", limit), verdict, estimate, excused)
	}
	return failures
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: suitetimes TIMES (the file scripts/test-steps.sh writes; make test runs both)")
		os.Exit(2)
	}
	if err := checkFile(os.Stdout, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "suitetimes:", err)
		os.Exit(1)
	}
}

// checkFile checks the times file at path against README.md.
func checkFile(w io.Writer, path string) error {
	root, err := harness.RootDir()
	if err != nil {
		return err
	}
	readme := filepath.Join(root, "README.md")
	doc, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	quotes, err := parseQuotes(string(doc))
	if err != nil {
		return fmt.Errorf("%s: %v", readme, err)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%v (make test writes it with scripts/test-steps.sh)", err)
	}
	runs, notes, err := parseRuns(string(text))
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	fmt.Fprintf(w, "make test: every step passed; its wall times against README.md's suite times (Testing):\n")
	for _, n := range notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	failures := check(w, quotes, runs)
	if len(failures) == 0 {
		return nil
	}
	return fmt.Errorf("%d suite time(s) off README.md's table:\n  %s\n"+
		"The table is for a clean-clone bash .ci/run with the download cache warm and nothing else running on the machine. "+
		"Under another load, run it again alone; if a step really changed, update its row from this run's table",
		len(failures), strings.Join(failures, "\n  "))
}
