package trace

import (
	"fmt"
	"io"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/report/diff"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// Width is the terminal width the human output keeps within.
const Width = 80

// MaxShown is how many jobs, histories and nodes the human output shows.
const MaxShown = 20

// Lines bound the human output per section.
const (
	maxHoldersShown = 4
	maxNamesShown   = 8
	maxChangesShown = 8
)

// Render writes res for a person at a terminal: every line within Width
// columns, every value from a record escaped (termsafe) and cut.
func Render(w io.Writer, res Result) error {
	p := &printer{}
	p.totals(res)
	p.jobs(res)
	p.regressions(res)
	p.nodes(res)
	_, err := io.WriteString(w, p.b.String())
	return err
}

type printer struct{ b strings.Builder }

// line writes one line, indented, cut to Width.
func (p *printer) line(indent int, format string, args ...any) {
	s := strings.Repeat(" ", indent) + fmt.Sprintf(format, args...)
	if n := len([]rune(s)); n > Width {
		s = string([]rune(s)[:Width-1]) + "…"
	}
	p.b.WriteString(s)
	p.b.WriteByte('\n')
}

// v makes a record's value safe and short for a line.
func v(s string, limit int) string {
	if s == "" {
		return "(none)"
	}
	s = termsafe.String(s)
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit-1]) + "…"
	}
	return s
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func (p *printer) totals(res Result) {
	c := res.Totals
	p.line(0, "read %s from %s", plural(c.Records, "run", "runs"), plural(int64(len(res.Sources)), "source", "sources"))
	var notes []string
	for _, n := range []struct {
		n    int64
		what string
	}{
		{c.Outcomes, "ends of supervised runs joined"},
		{c.Duplicates, "delivered again"},
		{c.Filtered, "filtered out"},
		{c.Conflicts, "conflicting run ids"},
		{c.Stdout, "on stdout, not believed"},
		{c.NotJobRuns, "not job runs (check)"},
		{c.Future, "dated in the future"},
		{c.Truncated, "truncated"},
		{c.Malformed, "malformed"},
		{c.OtherSchema, "of another schema version"},
		{c.LateOutcomes, "ends too late to place"},
		{c.UnjoinedOutcomes, "ends without their run"},
	} {
		if n.n > 0 {
			notes = append(notes, fmt.Sprintf("%d %s", n.n, n.what))
		}
	}
	if c.Skipped > 0 {
		notes = append(notes, plural(c.Skipped, "line", "lines")+" not records")
	}
	for i := 0; i < len(notes); i += 3 {
		p.line(2, "%s", strings.Join(notes[i:min(i+3, len(notes))], ", "))
	}
	for _, s := range res.Sources {
		if s.Error != "" {
			p.line(2, "%s", v(s.Error, Width))
		}
	}
	if c.Records == 0 {
		p.line(0, "")
		p.line(0, "No run was found: this input is no fleet's record, not a healthy one.")
		for _, s := range res.Sources {
			p.line(2, "%s: read as %s", v(s.Name, 30), v(s.Form, 40))
		}
	}
}

func (p *printer) jobs(res Result) {
	p.line(0, "")
	total := len(res.Jobs) + res.moreJobs
	switch {
	case total == 0:
		p.line(0, "Jobs: the ranks of all %s agree", plural(int64(res.MultiRankJobs), "multi-rank job", "multi-rank jobs"))
		return
	case res.DriftMatters:
		p.line(0, "Jobs: %d of %d multi-rank jobs have ranks that differ (drift that matters)", total, res.MultiRankJobs)
	default:
		p.line(0, "Jobs: %d of %d multi-rank jobs have ranks that differ (none that matters)", total, res.MultiRankJobs)
	}
	defer func() {
		if shown := min(len(res.Jobs), MaxShown); total > shown {
			p.line(2, "and %d more jobs (--json lists them all)", total-shown)
		}
	}()
	for i, j := range res.Jobs {
		if i == MaxShown {
			break
		}
		p.line(2, "job %s: %d ranks, %s", v(j.JobID, 50), j.Ranks, plural(j.Records, "record", "records"))
		for _, f := range j.Facts {
			tag := ""
			if !f.Matters {
				tag = " (minor)"
			}
			p.line(4, "%s%s:", f.Fact, tag)
			for k, h := range f.Values {
				if k == maxHoldersShown {
					p.line(6, "and %d more values", len(f.Values)-k)
					break
				}
				p.line(6, "%s: %s", v(h.Value, 40), holders(h))
			}
		}
	}
}

// holders is "3 ranks (3, 7, 11) on node-03, node-07, node-11".
func holders(h Holders) string {
	n := fmt.Sprintf("%d", len(h.Ranks))
	if h.MoreRanks {
		n += "+"
	}
	unit := " ranks"
	if len(h.Ranks) == 1 && !h.MoreRanks {
		unit = " rank"
	}
	return n + unit + " (" + names(h.Ranks) + ") on " + names(h.Nodes)
}

func names(xs []string) string {
	var parts []string
	for i, x := range xs {
		if i == maxNamesShown {
			parts = append(parts, fmt.Sprintf("%d more", len(xs)-i))
			break
		}
		parts = append(parts, v(x, 24))
	}
	return strings.Join(parts, ", ")
}

func (p *printer) regressions(res Result) {
	p.line(0, "")
	total := len(res.Regressions) + res.moreRegressions
	if total == 0 {
		p.line(0, "Regressions: no image or job name went from a good run to a failed one")
		return
	}
	defer func() {
		if shown := min(len(res.Regressions), MaxShown); total > shown {
			p.line(2, "and %d more (--json lists them all)", total-shown)
		}
	}()
	p.line(0, "Regressions: %d images or job names went from good runs to failed ones", total)
	for i, h := range res.Regressions {
		if i == MaxShown {
			break
		}
		state := "recovered"
		if h.Failing {
			state = "failing"
		}
		p.line(2, "%s %s", h.Kind, v(h.Key, Width-8))
		p.line(4, "%d runs, %d good, %d failed; %s", h.Runs, h.Good, h.Bad, state)
		if h.Misplaced > 0 {
			p.line(4, "%d runs out of time order were not placed: give sources in time order", h.Misplaced)
		}
		if h.Older > 0 {
			p.line(4, "%d older runs before these boundaries", h.Older)
		}
		for _, b := range h.Boundaries {
			p.run("last good", b.LastGood)
			p.run("first bad", b.FirstBad)
			p.line(6, "%d good runs up to it, %d failed from it", b.GoodRuns, b.BadRuns)
			p.changes(b.Changes)
		}
	}
}

// run is two lines: "last good: run ID at TIME" and where and how it ended.
func (p *printer) run(what string, r Run) {
	p.line(4, "%s: run %s at %s", what, v(r.RunID, 40), r.StartedAt[:19]+"Z")
	p.line(15, "on %s, %s", v(r.Node, 30), v(r.Outcome, 40))
}

func (p *printer) changes(cs []diff.Change) {
	shown := 0
	for _, c := range cs {
		if !c.Matters {
			continue
		}
		if shown == maxChangesShown {
			p.line(6, "and %d more changes (--json lists them)", countMatters(cs)-shown)
			break
		}
		p.change(c)
		shown++
	}
	if shown == 0 {
		p.line(6, "nothing that matters changed")
	}
	for _, c := range cs {
		if !c.Matters && c.Field == nodeField {
			c.Field = "node"
			p.change(c)
		}
	}
}

// nodeField is where Tracer.rebuild puts the node, for diff.
const nodeField = "orchestrator.kubernetes.nodeName"

// change is "field: old -> new" on one line when it fits, else the values
// on lines of their own.
func (p *printer) change(c diff.Change) {
	if s := fmt.Sprintf("%s: %s -> %s", v(c.Field, 30), v(c.Old, 60), v(c.New, 60)); len([]rune(s)) <= Width-6 {
		p.line(6, "%s", s)
		return
	}
	p.line(6, "%s:", v(c.Field, 60))
	p.line(8, "%s", v(c.Old, Width-8))
	p.line(5, "-> %s", v(c.New, Width-8))
}

func countMatters(cs []diff.Change) int {
	n := 0
	for _, c := range cs {
		if c.Matters {
			n++
		}
	}
	return n
}

func (p *printer) nodes(res Result) {
	p.line(0, "")
	if len(res.Nodes) == 0 {
		p.line(0, "Nodes: none")
		return
	}
	if len(res.Drain) > 0 {
		p.line(0, "Nodes: %d; drain first: %s", len(res.Nodes), names(res.Drain))
	} else {
		p.line(0, "Nodes: %d; none had a node-fault abort", len(res.Nodes))
	}
	for i, n := range res.Nodes {
		if i == MaxShown {
			p.line(2, "and %d more nodes (--json lists them all)", len(res.Nodes)-i)
			break
		}
		p.line(2, "%s: %s, last driver %s", v(n.Name, 30), plural(n.Runs, "run", "runs"), v(n.LastDriver, 16))
		if n.NodeFaultAborts > 0 {
			p.line(4, "node fault (75): %d: %s", n.NodeFaultAborts, findings(n.NodeFaultFindings))
		}
		if n.MismatchAborts > 0 {
			p.line(4, "mismatch (78): %d: %s", n.MismatchAborts, findings(n.MismatchFindings))
		}
	}
}

func findings(fs []FindingCount) string {
	var parts []string
	for i, f := range fs {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("%d more", len(fs)-i))
			break
		}
		id := f.ID
		if id == "" {
			id = "(no finding named)"
		}
		parts = append(parts, fmt.Sprintf("%s %d", v(id, 24), f.Count))
	}
	return strings.Join(parts, ", ")
}
