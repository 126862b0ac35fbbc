package trace

import (
	"cmp"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/report/trace/provline"
)

// MaxHolders bounds the ranks and nodes listed per value of a job's fact.
const MaxHolders = 256

// job is one job id's ranks, each by its latest run (a rank run again
// replaces its earlier run), sorted by the rank's interned id.
type job struct {
	name  string // the id as first seen
	ranks []rankState
}

type rankState struct {
	rank, sig, node int32
	records         int32
	at              int64
}

func (t *Tracer) addJob(r *provline.Run, at int64, sig, node int32) {
	id := norm(r.Orchestrator.JobID)
	j := t.jobs[id]
	if j == nil {
		j = &job{name: Visible(r.Orchestrator.JobID)}
		t.jobs[id] = j
	}
	rank := t.strs.id(RankOf(r))
	i, found := slices.BinarySearchFunc(j.ranks, rank, func(s rankState, r int32) int { return cmp.Compare(s.rank, r) })
	if !found {
		j.ranks = slices.Insert(j.ranks, i, rankState{rank: rank, sig: sig, node: node, at: at})
	}
	s := &j.ranks[i]
	s.records++
	if at >= s.at {
		s.at, s.sig, s.node = at, sig, node
	}
}

// History kinds: an image repository, or a job name.
const (
	KindImage = "image"
	KindJob   = "job"
)

type historyKey struct{ kind, key string }

// MaxBoundaries bounds the boundaries kept per history, the newest; older stretches' runs are counted.
const MaxBoundaries = 16

// history is one image repository's or job name's runs as stretches of
// one outcome in time order, and the runs whose outcome is still to come,
// each in its place.
type history struct {
	name       string // the key as first seen
	runs, good int64
	segs       []segment
	dropped    int64 // runs of the stretches older than those kept
	misplaced  int64 // runs that came inside a stretch of the other outcome
}

// segment is a stretch of runs of one outcome, or one run whose outcome
// is still to come. A good stretch's edge is its latest run (the last
// good), a bad one's its earliest (the first bad).
type segment struct {
	state       int8
	n           int64
	first, last int64
	edge        runRef
	pending     *pendingRun
}

const (
	segBad int8 = iota
	segGood
	segPending
)

// runRef names a run of a history, and how it ended.
type runRef struct {
	at              int64
	id              runID
	abort           string // the abort, when gpu-preflight stopped the run
	node, host, sum int32
	exit, signal    int32
	notStarted      bool
	ended           bool // its outcome is known
	supervised      bool
}

// runID packs gpu-preflight's own ids (32 lower-case hex digits); others are cloned.
type runID struct {
	packed [16]byte
	other  string
}

func makeRunID(s string) runID {
	var id runID
	if len(s) == 2*len(id.packed) && !strings.ContainsAny(s, "ABCDEF") {
		if _, err := hex.Decode(id.packed[:], []byte(s)); err == nil {
			return id
		}
	}
	return runID{other: strings.Clone(s)}
}

func (id runID) String() string {
	if id.other != "" {
		return id.other
	}
	return hex.EncodeToString(id.packed[:])
}

func (r *runRef) setOutcome(run *provline.Run) {
	r.supervised = run.Command.Supervised
	if run.Decision.Action == "abort" {
		r.abort = abortText(run.Decision)
	}
	if o := run.Outcome; o != nil {
		r.exit, r.signal, r.notStarted, r.ended = int32(o.ExitCode), int32(o.Signal), o.NotStarted != "", true
	}
}

func (t *Tracer) history(kind, key string) *history {
	if key == "" {
		return nil
	}
	k := historyKey{kind, norm(key)}
	h := t.histories[k]
	if h == nil {
		h = &history{name: Visible(key)}
		t.histories[k] = h
	}
	return h
}

func state(ok bool) int8 {
	if ok {
		return segGood
	}
	return segBad
}

// find returns the index of the first segment that ends at or after at.
func (h *history) find(at int64) int {
	i := len(h.segs)
	for i > 0 && h.segs[i-1].last >= at {
		i--
	}
	return i
}

// add places a run with its outcome by its start time.
func (h *history) add(ok bool, ref runRef) {
	if h == nil {
		return
	}
	h.runs++
	if ok {
		h.good++
	}
	h.place(state(ok), ref)
}

func (h *history) place(st int8, ref runRef) {
	i := h.find(ref.at)
	switch {
	case i < len(h.segs) && h.segs[i].first <= ref.at && h.segs[i].state != segPending:
		s := &h.segs[i]
		if s.state != st {
			h.misplaced++
			return
		}
		s.n++
		s.take(ref)
	case i > 0 && h.segs[i-1].state == st:
		h.segs[i-1].n++
		h.segs[i-1].last = ref.at
		h.segs[i-1].take(ref)
	case i < len(h.segs) && h.segs[i].state == st:
		h.segs[i].n++
		h.segs[i].first = ref.at
		h.segs[i].take(ref)
	default:
		h.insert(i, segment{state: st, n: 1, first: ref.at, last: ref.at, edge: ref})
	}
}

func (h *history) insert(i int, s segment) {
	if len(h.segs) == cap(h.segs) { // small arrays outgrown together leave half-empty spans
		h.segs = append(make([]segment, 0, max(4, len(h.segs)+len(h.segs)/4+1)), h.segs...)
	}
	h.segs = slices.Insert(h.segs, i, s)
	for len(h.segs) > 2*MaxBoundaries+1 && h.segs[0].state != segPending {
		h.dropped += h.segs[0].n
		h.segs = h.segs[1:]
	}
}

// take makes ref the stretch's edge when it bounds it better.
func (s *segment) take(ref runRef) {
	if (s.state == segGood && ref.at >= s.edge.at) || (s.state == segBad && ref.at < s.edge.at) {
		s.edge = ref
	}
}

// addPending places a run whose outcome is still to come: a place of its
// own between stretches, or, inside a stretch, a count it joins once known.
func (h *history) addPending(p *pendingRun) {
	if h == nil {
		return
	}
	h.runs++
	i := h.find(p.ref.at)
	if i < len(h.segs) && h.segs[i].first <= p.ref.at && h.segs[i].state != segPending {
		return // settle finds the stretch by its time
	}
	h.insert(i, segment{state: segPending, n: 1, first: p.ref.at, last: p.ref.at, edge: p.ref, pending: p})
}

// settle places a pending run now that its outcome is known: it joins the
// stretches of its outcome beside it, or becomes one.
func (h *history) settle(p *pendingRun, ok bool) {
	if h == nil {
		return
	}
	if ok {
		h.good++
	}
	st := state(ok)
	i := slices.IndexFunc(h.segs, func(s segment) bool { return s.pending == p })
	if i < 0 {
		h.place(st, p.ref) // inside a stretch, or among the dropped
		return
	}
	s := &h.segs[i]
	*s = segment{state: st, n: 1, first: p.ref.at, last: p.ref.at, edge: p.ref}
	if i+1 < len(h.segs) && h.segs[i+1].state == st {
		n := h.segs[i+1]
		s.n += n.n
		s.last = n.last
		if st == segGood {
			s.edge = n.edge
		}
		h.segs = slices.Delete(h.segs, i+1, i+2)
	}
	if i > 0 && h.segs[i-1].state == st {
		prev := &h.segs[i-1]
		prev.n += s.n
		prev.last = s.last
		if st == segGood {
			prev.edge = s.edge
		}
		h.segs = slices.Delete(h.segs, i, i+1)
	}
}

// node is one node's runs.
type node struct {
	runs                int64
	nodeFault, mismatch map[int32]int64 // blocking check id -> aborts
	aborts75, aborts78  int64
	lastDriver          int32
	lastAt              int64
}

// maxFindingsPerNode bounds the distinct finding ids counted per node.
const maxFindingsPerNode = 64

func (t *Tracer) addNode(r *provline.Run, at int64, name int32) {
	n := t.nodes[name]
	if n == nil {
		n = &node{}
		t.nodes[name] = n
	}
	n.runs++
	if at >= n.lastAt {
		n.lastAt, n.lastDriver = at, t.strs.id(r.Host.Driver.Version)
	}
	if r.Decision.Action != "abort" {
		return
	}
	by := &n.mismatch
	if r.Decision.NodeFault {
		by = &n.nodeFault
		n.aborts75++
	} else {
		n.aborts78++
	}
	if *by == nil {
		*by = map[int32]int64{}
	}
	counts := *by
	if len(r.Decision.Blocking) == 0 {
		counts[t.strs.id("")]++
	}
	for _, id := range r.Decision.Blocking {
		k := t.strs.id(id)
		if _, seen := counts[k]; seen || len(counts) < maxFindingsPerNode {
			counts[k]++
		}
	}
}

func addDistinct(xs []int32, x int32) ([]int32, bool) {
	if slices.Contains(xs, x) {
		return xs, true
	}
	if len(xs) >= MaxHolders {
		return xs, false
	}
	return append(xs, x), true
}
