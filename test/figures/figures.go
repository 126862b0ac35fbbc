// Package figures reads the figures the documentation quotes, so that the
// suites that can measure them hold each to the measurement.
//
// A quoted figure lives in a Markdown table between the markers
// <!-- figures --> and <!-- /figures --> of README.md, one row a figure:
//
//	| id | figure | value | noise | measured by |
//	| `binary` | bin/gpu-preflight, the probe embedded | 8.4 MiB | ±5% | `stat -c %s bin/gpu-preflight` |
//
// value is a number and a unit: a size (B, KiB, MiB) or a ratio (x) of
// two times measured in one interleaved run, never an absolute time, which
// moves with the machine's load (those are docs/PERFORMANCE.md's, with
// their command). noise is how far a new measurement may stray from it, in
// percent of the value, before the figure counts as stale. A test measures
// the figure the way the last column says and calls Check.
package figures

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// Figure is one quoted figure.
type Figure struct {
	ID     string
	What   string
	Value  float64
	Unit   string
	Noise  float64 // a fraction of Value: 0.05 for ±5%
	Source string  // the file that quotes it
}

// table is the name of README.md's figures table (its markers).
const table = "figures"

// units are those a figure may have.
var units = map[string]bool{"B": true, "KiB": true, "MiB": true, "x": true}

// Rows returns the rows of the Markdown table between the markers
// <!-- name --> and <!-- /name --> of doc, each row's cells trimmed, in
// order: the header row (whose first cell is header) and the rule under
// it left out. A line that is not a row of n cells is an error, so a
// table edited out of shape fails rather than losing a row.
func Rows(doc, name, header string, n int) ([][]string, error) {
	open, close := "<!-- "+name+" -->", "<!-- /"+name+" -->"
	_, rest, ok := strings.Cut(doc, open)
	if !ok {
		return nil, fmt.Errorf("no %s table", open)
	}
	body, _, ok := strings.Cut(rest, close)
	if !ok {
		return nil, fmt.Errorf("%s without %s", open, close)
	}
	var rows [][]string
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if !strings.HasPrefix(line, "|") || len(cells) != n {
			return nil, fmt.Errorf("%q is not a row of %d cells", line, n)
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if first := strings.Trim(cells[0], "`"); first == header || strings.HasPrefix(first, "---") {
			continue
		}
		rows = append(rows, cells)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("the %s table has no rows", open)
	}
	return rows, nil
}

// Quoted returns the figures README.md quotes, by id.
func Quoted(t testing.TB) map[string]Figure {
	t.Helper()
	path := filepath.Join(harness.Root(t), "README.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Parse(string(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for id, f := range out {
		f.Source = "README.md"
		out[id] = f
	}
	return out
}

// Parse reads the figures table of a Markdown document.
func Parse(doc string) (map[string]Figure, error) {
	rows, err := Rows(doc, table, "id", 5)
	if err != nil {
		return nil, err
	}
	out := map[string]Figure{}
	for _, cells := range rows {
		id := strings.Trim(cells[0], "`")
		if id == "" {
			return nil, fmt.Errorf("a figure without an id: %q", cells)
		}
		f := Figure{ID: id, What: cells[1]}
		num, unit, _ := strings.Cut(cells[2], " ")
		if n, found := strings.CutSuffix(num, "x"); found {
			num, unit = n, "x"
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return nil, fmt.Errorf("figure %s: value %q is not a number and a unit", id, cells[2])
		}
		f.Value, f.Unit = v, unit
		if !units[unit] {
			return nil, fmt.Errorf("figure %s: unit %q is neither a size (B, KiB, MiB) nor a ratio (x): an absolute time moves with the machine's load, and belongs in docs/PERFORMANCE.md with its command", id, unit)
		}
		noise, found := strings.CutSuffix(strings.TrimPrefix(cells[3], "±"), "%")
		n, err := strconv.ParseFloat(noise, 64)
		if !found || err != nil || n <= 0 {
			return nil, fmt.Errorf("figure %s: noise %q is not ±N%%", id, cells[3])
		}
		f.Noise = n / 100
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("figure %s quoted twice", id)
		}
		out[id] = f
	}
	return out, nil
}

// Holds reports whether measured is within the figure's noise of it.
func (f Figure) Holds(measured float64) bool {
	return math.Abs(measured-f.Value) <= f.Noise*f.Value
}

// Check fails t when measured is off the quoted figure by more than its
// noise, saying what to write instead.
func (f Figure) Check(t testing.TB, measured float64) {
	t.Helper()
	if !f.Holds(measured) {
		t.Errorf("%s quotes %s (%s) as %g %s ±%g%%; measured now: %.2f %s. Update the figure (and the tables of docs/PERFORMANCE.md from the same run)",
			f.Source, f.ID, f.What, f.Value, f.Unit, f.Noise*100, measured, f.Unit)
	} else {
		t.Logf("%s: quoted %g %s, measured %.2f %s (within ±%g%%)", f.ID, f.Value, f.Unit, measured, f.Unit, f.Noise*100)
	}
}
