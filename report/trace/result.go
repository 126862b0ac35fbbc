package trace

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/diff"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
	"github.com/gpu-preflight/gpu-preflight/report/trace/provline"
)

// SchemaVersion is the version of the Result's JSON form,
// docs/schema/trace.v<N>.schema.json.
const SchemaVersion = "2"

// Result is what a Tracer found; its JSON form is `gpu-preflight trace
// --json` (docs/schema/trace.v2.schema.json).
type Result struct {
	SchemaVersion string         `json:"schemaVersion"`
	Totals        Counts         `json:"totals"`
	Sources       []SourceCounts `json:"sources"`
	// DriftMatters is true when a job's ranks differ in a fact that
	// matters (Facts): the exit status of trace.
	DriftMatters bool `json:"driftMatters"`
	// MultiRankJobs counts the job ids seen with more than one rank.
	MultiRankJobs int    `json:"multiRankJobs"`
	Nodes         []Node `json:"nodes"`
	// Drain are the nodes to drain first, most urgent first (DrainOrder).
	Drain []string `json:"drain"`
	// Jobs are the multi-rank jobs whose ranks differ, drift that
	// matters first. Jobs and Regressions come last: WriteJSON streams
	// them, one at a time.
	Jobs        []JobDrift `json:"jobs"`
	Regressions []History  `json:"regressions"`
	// moreJobs and moreRegressions count those left out by a limit
	// (Summary).
	moreJobs, moreRegressions int
}

// JobDrift is one job whose ranks differ.
type JobDrift struct {
	JobID   string `json:"jobId"`
	Records int64  `json:"records"`
	// Ranks counts the distinct ranks seen; each is compared by its
	// latest run.
	Ranks   int         `json:"ranks"`
	Matters bool        `json:"matters"`
	Facts   []FactDrift `json:"facts"`
}

// FactDrift is one fact the ranks of a job differ in: each value held,
// the fewest records first.
type FactDrift struct {
	Fact    string    `json:"fact"`
	Matters bool      `json:"matters"`
	Values  []Holders `json:"values"`
}

// Holders are the ranks whose latest run held one value of a fact;
// Records counts all their records.
type Holders struct {
	Value   string   `json:"value"`
	Records int64    `json:"records"`
	Ranks   []string `json:"ranks"`
	Nodes   []string `json:"nodes"`
	// MoreRanks is true when ranks beyond MaxHolders were left out.
	MoreRanks bool `json:"moreRanks"`
}

// History is one image's or job name's runs and the boundaries where they
// started failing.
type History struct {
	// Kind is "image" (Key: its repository) or "job" (a job name).
	Kind    string `json:"kind"`
	Key     string `json:"key"`
	Runs    int64  `json:"runs"`
	Good    int64  `json:"good"`
	Bad     int64  `json:"bad"`
	Failing bool   `json:"failing"`
	// Boundaries are the good-to-bad changes, oldest first.
	Boundaries []Boundary `json:"boundaries"`
	// Older counts the runs before the kept stretches (MaxBoundaries).
	Older int64 `json:"older"`
	// Misplaced counts runs out of time order inside a stretch of the
	// other outcome (docs/trace.md).
	Misplaced int64 `json:"misplaced"`
}

// Boundary is a last good run, the first failed run after it, and diff's
// changes between them.
type Boundary struct {
	LastGood Run `json:"lastGood"`
	FirstBad Run `json:"firstBad"`
	// GoodRuns and BadRuns count the stretches either side.
	GoodRuns int64         `json:"goodRuns"`
	BadRuns  int64         `json:"badRuns"`
	Changes  []diff.Change `json:"changes"`
}

type Run struct {
	RunID     string `json:"runId"`
	StartedAt string `json:"startedAt"`
	Node      string `json:"node"`
	Outcome   string `json:"outcome"`
}

type Node struct {
	Name string `json:"name"`
	Runs int64  `json:"runs"`
	// NodeFaultAborts counts aborts for a node fault (exit 75 by default),
	// MismatchAborts the others (78); the By lists name the blocking
	// findings, most frequent first (a run blocked by two counts for each).
	NodeFaultAborts   int64          `json:"nodeFaultAborts"`
	NodeFaultFindings []FindingCount `json:"nodeFaultFindings"`
	MismatchAborts    int64          `json:"mismatchAborts"`
	MismatchFindings  []FindingCount `json:"mismatchFindings"`
	LastDriver        string         `json:"lastDriver"`
	LastSeen          string         `json:"lastSeen"`
	Drain             bool           `json:"drain"`
}

// FindingCount is how many aborts a finding blocked.
type FindingCount struct {
	ID    string `json:"id"`
	Count int64  `json:"count"`
}

// Result builds the answers from what was read so far, every history with
// its boundaries and their changes (WriteJSON streams them instead).
func (t *Tracer) Result() Result { return t.build(-1) }

// Summary is Result with at most limit histories, the first in order; the
// human output shows no more.
func (t *Tracer) Summary(limit int) Result { return t.build(limit) }

// WriteJSON writes Result as one line of JSON, computing each history's
// boundaries as it writes them, so that only one is held at a time.
func (t *Tracer) WriteJSON(w io.Writer) error {
	res := t.build(0)
	jobs := t.jobOrder(&Result{})
	res.Jobs, res.Regressions = []JobDrift{}, []History{}
	head, err := json.Marshal(res)
	if err != nil {
		return err
	}
	// head ends with "jobs":[],"regressions":[]}: write up to the first
	// [ and stream the two lists.
	tail := []byte(`[],"regressions":[]}`)
	if !bytes.HasSuffix(head, tail) {
		panic("trace: Result does not end with its jobs and regressions")
	}
	bw := bufio.NewWriter(w)
	bw.Write(termsafe.JSON(head[:len(head)-len(tail)+1]))
	for i, id := range jobs {
		d, _ := t.jobDrift(id, t.jobs[id])
		if err := writeElem(bw, i, d); err != nil {
			return err
		}
	}
	bw.WriteString(`],"regressions":[`)
	for i, ref := range t.historyOrder() {
		if err := writeElem(bw, i, t.historyOut(ref.key, ref.h)); err != nil {
			return err
		}
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}

func writeElem(w *bufio.Writer, i int, v any) error {
	if i > 0 {
		w.WriteByte(',')
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(termsafe.JSON(b))
	return err
}

// build makes the Result with the first limit histories (all when limit
// is negative).
func (t *Tracer) build(limit int) Result {
	res := Result{SchemaVersion: SchemaVersion, Sources: []SourceCounts{}, Jobs: []JobDrift{},
		Regressions: []History{}, Nodes: []Node{}, Drain: []string{}}
	t.settle()
	for _, s := range t.sources {
		sc := *s
		sc.Counts.plus(s.read)
		if sc.Problems == nil {
			sc.Problems = []Problem{}
		}
		res.Sources = append(res.Sources, sc)
		res.Totals.plus(sc.Counts)
	}
	jobs := t.jobOrder(&res)
	if limit >= 0 && len(jobs) > limit {
		jobs, res.moreJobs = jobs[:limit], len(jobs)-limit
	}
	for _, id := range jobs {
		d, _ := t.jobDrift(id, t.jobs[id])
		res.Jobs = append(res.Jobs, d)
	}
	order := t.historyOrder()
	if limit >= 0 && len(order) > limit {
		order, res.moreRegressions = order[:limit], len(order)-limit
	}
	for _, ref := range order {
		res.Regressions = append(res.Regressions, t.historyOut(ref.key, ref.h))
	}
	for name, n := range t.nodes {
		res.Nodes = append(res.Nodes, t.nodeResult(t.strs.str(name), n))
	}
	slices.SortFunc(res.Nodes, DrainOrder)
	for _, n := range res.Nodes {
		if n.Drain {
			res.Drain = append(res.Drain, n.Name)
		}
	}
	return res
}

// jobOrder lists the jobs whose ranks differ, drift that matters first,
// then by id, and counts into res the multi-rank jobs and whether any matters.
func (t *Tracer) jobOrder(res *Result) []string {
	type ref struct {
		id      string
		matters bool
	}
	var refs []ref
	for id, j := range t.jobs {
		d, multi := t.jobDrift(id, j)
		if !multi {
			continue
		}
		res.MultiRankJobs++
		if len(d.Facts) > 0 {
			refs = append(refs, ref{id, d.Matters})
			res.DriftMatters = res.DriftMatters || d.Matters
		}
	}
	slices.SortFunc(refs, func(a, b ref) int {
		if a.matters != b.matters {
			if a.matters {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.id, b.id)
	})
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.id
	}
	return ids
}

type historyRef struct {
	key     historyKey
	h       *history
	failing bool
	lastBad int64 // the start of the latest boundary's first failed run
}

// historyOrder lists the histories the answer holds (with a boundary, or
// runs it could not place): failing ones first, then the latest boundary
// first, then by kind and key, from the stretches alone.
func (t *Tracer) historyOrder() []historyRef {
	var refs []historyRef
	for k, h := range t.histories {
		ref := historyRef{key: k, h: h, lastBad: -1 << 63}
		for i := 0; i+1 < len(h.segs); i++ {
			if h.segs[i].state == segGood && h.segs[i+1].state == segBad {
				ref.lastBad = h.segs[i+1].edge.at
			}
		}
		if n := len(h.segs); n > 0 {
			ref.failing = h.segs[n-1].state == segBad
		}
		if ref.lastBad != -1<<63 || h.misplaced > 0 {
			refs = append(refs, ref)
		}
	}
	slices.SortFunc(refs, func(a, b historyRef) int {
		if a.failing != b.failing {
			if a.failing {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(b.lastBad, a.lastBad), cmp.Compare(a.key.kind, b.key.kind), cmp.Compare(a.key.key, b.key.key))
	})
	return refs
}

// DrainOrder is the rule for which nodes to drain first: a node with a
// node-fault abort (a finding about the node's health: NVML hung, ECC
// errors, retired pages) is to drain; the more such aborts, the sooner.
// Among equals, more mismatch aborts, then the name. Nodes without a
// node-fault abort follow in the same order.
func DrainOrder(a, b Node) int {
	return cmp.Or(
		-cmp.Compare(a.NodeFaultAborts, b.NodeFaultAborts),
		-cmp.Compare(a.MismatchAborts, b.MismatchAborts),
		-cmp.Compare(a.Runs, b.Runs),
		cmp.Compare(a.Name, b.Name))
}

func (t *Tracer) nodeResult(name string, n *node) Node {
	counts := func(m map[int32]int64) []FindingCount {
		out := []FindingCount{}
		for id, c := range m {
			out = append(out, FindingCount{ID: t.strs.str(id), Count: c})
		}
		slices.SortFunc(out, func(a, b FindingCount) int {
			return cmp.Or(-cmp.Compare(a.Count, b.Count), cmp.Compare(a.ID, b.ID))
		})
		return out
	}
	return Node{
		Name: name, Runs: n.runs,
		NodeFaultAborts: n.aborts75, NodeFaultFindings: counts(n.nodeFault),
		MismatchAborts: n.aborts78, MismatchFindings: counts(n.mismatch),
		LastDriver: t.strs.str(n.lastDriver), LastSeen: formatTime(n.lastAt),
		Drain: n.aborts75 > 0,
	}
}

func formatTime(nano int64) string {
	return time.Unix(0, nano).UTC().Format(report.TimeLayout)
}

// jobDrift compares the latest run of each rank of a job, fact by fact.
// multi is false for a job seen with one rank only.
func (t *Tracer) jobDrift(id string, j *job) (d JobDrift, multi bool) {
	d = JobDrift{JobID: j.name, Ranks: len(j.ranks), Facts: []FactDrift{}}
	for _, s := range j.ranks {
		d.Records += int64(s.records)
	}
	if d.Ranks < 2 {
		return d, false
	}
	first := j.ranks[0].sig
	if !slices.ContainsFunc(j.ranks, func(s rankState) bool { return s.sig != first }) {
		return d, true
	}
	for fi, f := range Facts {
		type acc struct {
			records      int64
			ranks, nodes []int32
			more         bool
		}
		by := map[int32]*acc{}
		var order []int32
		for _, s := range j.ranks {
			v := t.sigl[s.sig][fi]
			a := by[v]
			if a == nil {
				a = &acc{}
				by[v] = a
				order = append(order, v)
			}
			a.records += int64(s.records)
			var kept bool
			if a.ranks, kept = addDistinct(a.ranks, s.rank); !kept {
				a.more = true
			}
			a.nodes, _ = addDistinct(a.nodes, s.node)
		}
		if len(by) < 2 {
			continue
		}
		fd := FactDrift{Fact: f.Name, Matters: f.Matters}
		for _, v := range order {
			a := by[v]
			h := Holders{Value: t.strs.str(v), Records: a.records, MoreRanks: a.more, Ranks: []string{}, Nodes: []string{}}
			for _, r := range a.ranks {
				h.Ranks = append(h.Ranks, t.strs.str(r))
			}
			for _, n := range a.nodes {
				h.Nodes = append(h.Nodes, t.strs.str(n))
			}
			slices.SortFunc(h.Ranks, rankOrder)
			slices.Sort(h.Nodes)
			fd.Values = append(fd.Values, h)
		}
		slices.SortStableFunc(fd.Values, func(a, b Holders) int {
			return cmp.Or(cmp.Compare(len(a.Ranks), len(b.Ranks)), cmp.Compare(a.Records, b.Records), cmp.Compare(a.Value, b.Value))
		})
		d.Facts = append(d.Facts, fd)
		d.Matters = d.Matters || f.Matters
	}
	return d, true
}

// rankOrder sorts ranks as numbers when they are, else as text.
func rankOrder(a, b string) int {
	if len(a) != len(b) && isDigits(a) && isDigits(b) {
		return cmp.Compare(len(a), len(b))
	}
	return cmp.Compare(a, b)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func (t *Tracer) historyOut(k historyKey, h *history) History {
	out := History{Kind: k.kind, Key: h.name, Runs: h.runs, Good: h.good, Bad: h.runs - h.good,
		Older: h.dropped, Misplaced: h.misplaced, Boundaries: []Boundary{}}
	if n := len(h.segs); n > 0 {
		out.Failing = h.segs[n-1].state == segBad
	}
	for i := 0; i+1 < len(h.segs); i++ {
		g, b := h.segs[i], h.segs[i+1]
		if g.state != segGood || b.state != segBad {
			continue
		}
		good, bad := t.rebuild(g.edge), t.rebuild(b.edge)
		changes := []diff.Change{}
		for _, c := range diff.Diff(good, bad) {
			if !Same(c.Old, c.New) {
				c.Old, c.New = Visible(c.Old), Visible(c.New)
				changes = append(changes, c)
			}
		}
		out.Boundaries = append(out.Boundaries, Boundary{
			LastGood: t.run(g.edge), FirstBad: t.run(b.edge),
			GoodRuns: g.n, BadRuns: b.n, Changes: changes,
		})
	}
	return out
}

func (t *Tracer) run(ref runRef) Run {
	return Run{RunID: Visible(ref.id.String()), StartedAt: formatTime(ref.at), Node: t.strs.str(ref.node), Outcome: outcomeText(ref)}
}

// outcomeText says how a run ended: "exit 1", "not started (exit 127)".
func outcomeText(ref runRef) string {
	switch {
	case ref.abort != "":
		return ref.abort
	case !ref.ended && ref.supervised:
		return "end not recorded"
	case !ref.ended:
		return "ran (not supervised)"
	case ref.notStarted:
		return "not started (exit " + itoa(int(ref.exit)) + ")"
	case ref.signal != 0:
		return "killed by signal " + itoa(int(ref.signal))
	}
	return "exit " + itoa(int(ref.exit))
}

// abortText names an abort: "abort 78 (cuda-requirement)".
func abortText(d provline.Decision) string {
	s := "abort " + itoa(d.ExitCode)
	if len(d.Blocking) > 0 {
		s += " (" + joinCut(d.Blocking, 3) + ")"
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }

// rebuild makes the record diff compares from a run's summary: its GPUs
// one by one again, its host, node and outcome put back.
func (t *Tracer) rebuild(ref runRef) report.Record {
	r, ok := t.rebuilt[ref.sum]
	if !ok {
		if len(t.rebuilt) >= maxRebuilt {
			clear(t.rebuilt)
		}
		r = t.decodeSummary(ref.sum)
		if len(r.Host.GPUs) <= 64 { // a hostile count is not kept
			t.rebuilt[ref.sum] = r
		}
	}
	// r shares its lists with its summary's other runs: diff changes none.
	r.Host.Hostname = jsonText(t.strs.str(ref.host))
	r.RunID = jsonText(ref.id.String())
	r.StartedAt = formatTime(ref.at)
	r.Orchestrator = facts.Orchestrator{Kubernetes: facts.Kubernetes{NodeName: jsonText(t.strs.str(ref.node))}}
	if ref.ended {
		r.Outcome = &report.Outcome{ExitCode: int(ref.exit), Signal: int(ref.signal)}
		if ref.notStarted {
			r.Outcome.NotStarted = "not started"
		}
	}
	return r
}

// jsonText is s as encoding/json passes it: a byte not UTF-8 becomes U+FFFD.
func jsonText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			b.WriteRune(r)
		} else {
			b.WriteString(s[i : i+w])
		}
		i += w
	}
	return b.String()
}

const maxRebuilt = 256 // summaries kept decoded

// decodeSummary is summary id as a report.Record, its GPUs one by one.
func (t *Tracer) decodeSummary(id int32) report.Record {
	var m map[string]any
	_ = json.Unmarshal(t.sums.list[id], &m) // encoded by summaries.id
	host, _ := m["host"].(map[string]any)
	if host == nil {
		host = map[string]any{}
		m["host"] = host
	}
	var gpus []any
	for _, g := range asList(host["gpus"]) {
		gm, _ := g.(map[string]any)
		n, _ := gm["count"].(float64)
		for range max(int(n), 1) {
			c := maps.Clone(gm)
			delete(c, "count")
			c["index"] = len(gpus)
			gpus = append(gpus, c)
		}
	}
	host["gpus"] = gpus
	b, _ := json.Marshal(m)
	var r report.Record
	_ = json.Unmarshal(b, &r)
	return r
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func joinCut(ids []string, n int) string {
	s := ""
	for i, id := range ids {
		if i == n {
			return s + " and " + itoa(len(ids)-n) + " more"
		}
		if i > 0 {
			s += ", "
		}
		s += id
	}
	return s
}
