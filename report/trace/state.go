package trace

import (
	"cmp"
	"slices"

	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/report"
)

// MaxHolders bounds the ranks and nodes listed per value of a job's fact
// in the answer; beyond it they are counted.
const MaxHolders = 256

// job is one job id's state: each rank's latest run (a rank run again,
// after a restart or a resubmission under the same id, replaces its
// earlier run), sorted by the rank's interned id.
type job struct {
	ranks []rankState
}

type rankState struct {
	rank, sig, node int32
	records         int32 // the rank's records, all of them
	at              int64 // when its latest run started
}

func addDistinct(xs []int32, x int32) ([]int32, bool) {
	for _, y := range xs {
		if y == x {
			return xs, true
		}
	}
	if len(xs) >= MaxHolders {
		return xs, false
	}
	return append(xs, x), true
}

func (t *Tracer) addJob(r *report.Record, at int64, sig, node int32) {
	j := t.jobs[r.Orchestrator.JobID]
	if j == nil {
		j = &job{}
		t.jobs[r.Orchestrator.JobID] = j
	}
	rank := t.intern(RankOf(r))
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

// History kinds.
const (
	KindImage = "image"
	KindJob   = "job"
)

type historyKey struct {
	kind, key string
}

// MaxBoundaries bounds the boundaries kept per image or job name: the
// newest are kept, and how many runs the older ones held is counted.
const MaxBoundaries = 16

// history is one image's or job name's runs as stretches of one outcome
// in time order.
type history struct {
	runs, good int64
	segs       []segment
	// dropped counts the runs of stretches older than the kept ones.
	dropped int64
	// misplaced counts runs that arrived out of time order inside a
	// stretch of the other outcome: where they belong in it is unknown
	// (the stretch keeps no per-run times), so they are counted only.
	misplaced int64
}

// segment is a stretch of runs with one outcome. edge is the run that
// bounds it: for a good stretch its latest run (the last good), for a bad
// one its earliest (the first bad).
type segment struct {
	good        bool
	n           int64
	first, last int64
	edge        runRef
}

type runRef struct {
	at         int64
	runID      string
	node, host int32
	sum        int32 // the summary's id, -1 when none was made
}

// addRun places a run in its history by its start time.
func (t *Tracer) addRun(k historyKey, ok bool, ref runRef, summary func() int32) {
	h := t.histories[k]
	if h == nil {
		h = &history{}
		t.histories[k] = h
	}
	h.runs++
	if ok {
		h.good++
	}
	// The first stretch that ends at or after the run.
	i := len(h.segs)
	for i > 0 && h.segs[i-1].last >= ref.at {
		i--
	}
	switch {
	case i < len(h.segs) && h.segs[i].first <= ref.at:
		// Inside stretch i (between its first and last run).
		s := &h.segs[i]
		if s.good != ok {
			h.misplaced++
			return
		}
		s.n++
		s.take(ref, summary)
	case i > 0 && h.segs[i-1].good == ok:
		// Just after stretch i-1, of its outcome: it grows.
		h.segs[i-1].n++
		h.segs[i-1].last = ref.at
		h.segs[i-1].take(ref, summary)
	case i < len(h.segs) && h.segs[i].good == ok:
		// Just before stretch i, of its outcome.
		h.segs[i].n++
		h.segs[i].first = ref.at
		h.segs[i].take(ref, summary)
	default:
		// A new stretch: a new boundary.
		ref.sum = summary()
		h.segs = append(h.segs, segment{})
		copy(h.segs[i+1:], h.segs[i:])
		h.segs[i] = segment{good: ok, n: 1, first: ref.at, last: ref.at, edge: ref}
		if len(h.segs) > 2*MaxBoundaries+1 {
			h.dropped += h.segs[0].n
			h.segs = h.segs[1:]
		}
	}
}

// take makes ref the stretch's edge when it bounds it better.
func (s *segment) take(ref runRef, summary func() int32) {
	if (s.good && ref.at >= s.edge.at) || (!s.good && ref.at < s.edge.at) {
		ref.sum = summary()
		s.edge = ref
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

func (t *Tracer) addNode(r *report.Record, at int64, name int32) {
	key := t.str(name)
	n := t.nodes[key]
	if n == nil {
		n = &node{nodeFault: map[int32]int64{}, mismatch: map[int32]int64{}}
		t.nodes[key] = n
	}
	n.runs++
	if at >= n.lastAt {
		n.lastAt, n.lastDriver = at, t.intern(r.Host.Driver.Version)
	}
	if r.Decision.Action != decision.Abort {
		return
	}
	by := n.mismatch
	if r.Decision.NodeFault {
		by = n.nodeFault
		n.aborts75++
	} else {
		n.aborts78++
	}
	if len(r.Decision.Blocking) == 0 {
		by[t.intern("")]++
	}
	for _, id := range r.Decision.Blocking {
		k := t.intern(id)
		if _, seen := by[k]; seen || len(by) < maxFindingsPerNode {
			by[k]++
		}
	}
}

// maxFindingsPerNode bounds the distinct finding ids counted per node
// (gpu-preflight has a few dozen checks; a hostile record could name any).
const maxFindingsPerNode = 64
