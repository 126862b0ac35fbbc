// Command suitetimes holds what make test measured to the suite times
// README.md quotes, and make test to its 10 minutes. make test runs it as
// its last step:
//
//	go run ./test/figures/suitetimes TIMES
//
// TIMES is the file scripts/test-steps.sh wrote: per step its wall and CPU
// seconds, the load average at its end and what it downloaded. The quoted
// times live in README.md between <!-- suite-times --> and
// <!-- /suite-times -->, one row a step:
//
//	| step | CPU seconds | noise | idle wall seconds |
//	| `lint` | 90 | 3x ±10 s | 52 |
//
// A step is held by its CPU time, which is its own work whatever else the
// machine runs; its wall time stretches with the load and is only
// reported. A measurement m of a quoted CPU time q with noise "Fx ±S s"
// holds when q/F - S <= m <= q*F + S. The 10 minutes are held on an
// estimate of the run on an idle machine: each step's idle wall seconds
// scaled by its CPU time against the quote. A step that downloaded is
// excused: the quoted times are for a warm download cache, and a
// download's time is the network's. It prints every step's verdict and
// exits 1 when one fails.
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

// quote is one step's quoted CPU time, its noise, and its wall time on an
// idle machine.
type quote struct {
	step    string
	seconds float64 // CPU
	factor  float64 // F of "Fx ±S s"
	slack   float64 // S, in seconds
	wall    float64
}

// band is the range of measurements the quote allows.
func (q quote) band() (lo, hi float64) {
	return max(0, q.seconds/q.factor-q.slack), q.seconds*q.factor + q.slack
}

// run is one step as make test measured it.
type run struct {
	step       string
	wall       float64
	seconds    float64 // CPU
	load       float64 // the 1-minute load average at its end
	downloaded string  // what it downloaded, "" for nothing
}

// parseQuotes reads the suite-times table of a Markdown document, in its
// order.
func parseQuotes(doc string) ([]quote, error) {
	rows, err := figures.Rows(doc, table, "step", 4)
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
			return nil, fmt.Errorf("step %s: CPU seconds %q is not a positive number", step, cells[1])
		}
		if q.wall, err = strconv.ParseFloat(cells[3], 64); err != nil || !(q.wall > 0) || q.wall > 1e6 {
			return nil, fmt.Errorf("step %s: idle wall seconds %q is not a positive number", step, cells[3])
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
		if len(f) != 5 || f[0] == "" || f[4] == "" {
			return nil, nil, fmt.Errorf("line %d, %q: want step, wall seconds, CPU seconds, load and downloads, tab-separated", i+1, line)
		}
		r := run{step: f[0]}
		var err1, err2, err3 error
		r.wall, err1 = strconv.ParseFloat(f[1], 64)
		r.seconds, err2 = strconv.ParseFloat(f[2], 64)
		r.load, err3 = strconv.ParseFloat(f[3], 64)
		if err1 != nil || err2 != nil || err3 != nil || !(r.wall >= 0) || !(r.seconds >= 0) || !(r.load >= 0) || r.wall > 1e6 || r.seconds > 1e6 {
			return nil, nil, fmt.Errorf("line %d, %q: seconds and load must be numbers, at least 0", i+1, line)
		}
		if f[4] != "-" {
			r.downloaded = f[4]
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
// failures: a step whose CPU time is over or under what its quote allows, a
// step measured and not quoted or quoted and not measured, an idle
// estimate of the total over limit. A step that downloaded is excused, and
// the estimate then counts its quoted wall time, as the warm-cache run it
// stands for.
func check(w io.Writer, quotes []quote, runs []run) (failures []string) {
	quoted := map[string]quote{}
	for _, q := range quotes {
		quoted[q.step] = q
	}
	measured := map[string]bool{}
	var wall, cpu, estimate float64
	excused := 0
	fmt.Fprintf(w, "  %-16s %9s %7s %12s %9s %7s %5s\n", "step", "CPU", "quoted", "allowed", "wall", "idle", "load")
	for _, r := range runs {
		measured[r.step] = true
		wall += r.wall
		cpu += r.seconds
		q, ok := quoted[r.step]
		if !ok {
			estimate += r.wall
			fmt.Fprintf(w, "  %-16s %7.1f s %7s %12s %7.1f s %7s %5.2f  FAIL: not quoted\n", r.step, r.seconds, "-", "-", r.wall, "-", r.load)
			failures = append(failures, fmt.Sprintf("make test ran %s, for which README.md's suite-times table has no row: add one (%.0f CPU s, %.0f s wall in this run)", r.step, r.seconds, r.wall))
			continue
		}
		lo, hi := q.band()
		allowed := fmt.Sprintf("%.0f-%.0f s", lo, hi)
		prefix := fmt.Sprintf("  %-16s %7.1f s %5g s %12s %7.1f s %5g s %5.2f", r.step, r.seconds, q.seconds, allowed, r.wall, q.wall, r.load)
		if r.downloaded != "" {
			excused++
			estimate += q.wall
			fmt.Fprintf(w, "%s  EXCUSED: it downloaded (%s); the quoted time is for a warm download cache\n", prefix, r.downloaded)
			continue
		}
		estimate += q.wall * r.seconds / q.seconds
		switch {
		case r.seconds > hi:
			fmt.Fprintf(w, "%s  FAIL: more work\n", prefix)
			failures = append(failures, fmt.Sprintf("%s took %.1f CPU s, more than README.md's %g s allows (%s, noise %gx ±%g s)", r.step, r.seconds, q.seconds, allowed, q.factor, q.slack))
		case r.seconds < lo:
			fmt.Fprintf(w, "%s  FAIL: less work\n", prefix)
			failures = append(failures, fmt.Sprintf("%s took %.1f CPU s, less than README.md's %g s allows (%s, noise %gx ±%g s): did it skip work it used to do?", r.step, r.seconds, q.seconds, allowed, q.factor, q.slack))
		default:
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
		failures = append(failures, fmt.Sprintf("make test would take %.0f s on an idle machine (each step's idle wall time scaled by its CPU time), more than its limit of %d s", estimate, limit))
	}
	fmt.Fprintf(w, "  %-16s %7.1f s %7s %12s %7.1f s\n", "total", cpu, "", "", wall)
	note := ""
	if excused > 0 {
		note = fmt.Sprintf(", counting the quoted time of the %d excused step(s)", excused)
	}
	fmt.Fprintf(w, "  idle estimate    %.0f s <= %d s%s: %s\n", estimate, limit, note, verdict)
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
	fmt.Fprintf(w, "make test: every step passed; its CPU times against README.md's suite times (Testing), wall times as measured:\n")
	for _, n := range notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	failures := check(w, quotes, runs)
	if len(failures) == 0 {
		return nil
	}
	return fmt.Errorf("%d suite time(s) off README.md's table:\n  %s\n"+
		"The table is for a clean-clone bash .ci/run with the download cache warm. "+
		"If a step really changed, update its row from this run's table (its idle wall seconds from a run on an idle machine)",
		len(failures), strings.Join(failures, "\n  "))
}
