package trace

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/gpu-preflight/gpu-preflight/report/trace/provline"
)

// What trace knows of a run it has seen, in the low bits of its entry in
// runSet; the rest tells its host and start time apart from another's.
const (
	stateFiltered  = iota // left out by the filters
	statePending          // counted; its outcome may still come
	stateNoOutcome        // counted, placed without its outcome
	stateFinal            // counted with its outcome
	stateBits      = 2
)

// runSet keeps 7 bytes a run: 52 bits of its runId's hash (12 pick a
// sorted bucket) and a 14-bit digest of its host and start time with its
// state. Blocks of one size, never freed, leave no half-empty spans.
type runSet struct {
	buckets [1 << 12]bucket
}

const (
	entryLen     = 7
	blockEntries = 36 // a block fills a 256-byte size class
)

type block [blockEntries * entryLen]byte

type bucket struct {
	blocks []*block
	n      int
}

func (b *bucket) entry(i int) []byte {
	return b.blocks[i/blockEntries][i%blockEntries*entryLen:][:entryLen]
}

func (b *bucket) insert(i int, e uint64) {
	if b.n == len(b.blocks)*blockEntries {
		b.blocks = append(b.blocks, new(block))
	}
	for k := b.n / blockEntries; ; k-- {
		lo, hi := 0, blockEntries-1
		if k == i/blockEntries {
			lo = i % blockEntries
		}
		if k == b.n/blockEntries {
			hi = b.n % blockEntries
		}
		blk := b.blocks[k]
		copy(blk[(lo+1)*entryLen:(hi+1)*entryLen], blk[lo*entryLen:hi*entryLen])
		if k == i/blockEntries {
			break
		}
		copy(blk[:entryLen], b.blocks[k-1][(blockEntries-1)*entryLen:])
	}
	b.n++
	putEntry(b.entry(i), e)
}

// find returns the run's bucket, its place there, and whether it is held.
func (s *runSet) find(key uint64) (b *bucket, i int, rest uint64, ok bool) {
	b, rest = &s.buckets[key>>52], key<<12>>24
	i, ok = sort.Find(b.n, func(i int) int {
		return cmp.Compare(rest, getEntry(b.entry(i))>>16)
	})
	return b, i, rest, ok
}

func getEntry(b []byte) uint64 {
	_ = b[entryLen-1]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48
}

func putEntry(b []byte, e uint64) {
	_ = b[entryLen-1]
	for i := range entryLen {
		b[i] = byte(e >> (8 * i))
	}
}

// get returns the run's value, and whether it was seen.
func (s *runSet) get(key uint64) (uint16, bool) {
	b, i, _, ok := s.find(key)
	if !ok {
		return 0, false
	}
	return uint16(getEntry(b.entry(i))), true
}

// put sets the run's value.
func (s *runSet) put(key uint64, v uint16) {
	b, i, rest, ok := s.find(key)
	if !ok {
		b.insert(i, rest<<16|uint64(v))
		return
	}
	putEntry(b.entry(i), rest<<16|uint64(v))
}

func runKey(runID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(runID))
	return h.Sum64()
}

// fingerprint tells a run's host and start time apart from another's.
func fingerprint(r *provline.Run) uint16 {
	h := fnv.New32a()
	h.Write([]byte(norm(r.Host.Hostname)))
	h.Write([]byte{0})
	h.Write([]byte(r.StartedAt))
	return uint16(h.Sum32()) &^ (1<<stateBits - 1)
}

// withState is v's fingerprint with state s.
func withState(v, s uint16) uint16 { return v&^(1<<stateBits-1) | s }

// maxPendingRuns bounds the runs held without an outcome; past it the
// oldest is counted as it stands (good: it started).
const maxPendingRuns = 1 << 15

// pendingRun is a counted run whose outcome may still come: a supervised
// run's start, or a run not supervised (whose outcome never comes).
type pendingRun struct {
	key uint64
	ref runRef
	ok  bool // the decision alone: an abort is a failure whatever follows
	img *history
	job *history
}

type pendingRuns struct {
	runs  map[uint64]*pendingRun
	order []uint64 // arrival order; keys resolved meanwhile are skipped
	free  []*pendingRun
}

func (p *pendingRuns) init() { p.runs = map[uint64]*pendingRun{} }

// get returns a pendingRun settled before (no history holds it any more),
// or a new one.
func (p *pendingRuns) get() *pendingRun {
	if n := len(p.free); n > 0 {
		r := p.free[n-1]
		p.free = p.free[:n-1]
		return r
	}
	return new(pendingRun)
}

// maxOrphans bounds the ends held whose run has not come yet.
const maxOrphans = 1 << 15

// orphanEnds are the ends of supervised runs whose record has not come
// yet (a stream read out of order, a filter that left the run out).
type orphanEnds struct {
	ends  map[uint64]orphan
	order []uint64
}

type orphan struct {
	outcome provline.Outcome
	src     *SourceCounts
}

func (o *orphanEnds) init() { o.ends = map[uint64]orphan{} }

// add counts a record or an end the readers found, in the order Merge
// hands them on.
func (t *Tracer) add(it item, src *SourceCounts) {
	if it.finished != nil {
		t.end(it, src)
		return
	}
	r := it.run
	c := &src.Counts
	key, fp := runKey(r.RunID), fingerprint(r)
	if v, seen := t.runs.get(key); seen {
		t.again(r, it.pos, src, key, v, fp)
		return
	}
	if !t.selected(r, it.at) {
		t.runs.put(key, withState(fp, stateFiltered))
		c.Filtered++
		return
	}
	c.Records++
	if r.Outcome == nil {
		if o, ok := t.orphans.ends[key]; ok {
			delete(t.orphans.ends, key)
			out := o.outcome
			r.Outcome = &out
			c.Outcomes++
		}
	}
	nano := it.at.UnixNano()
	nodeName := t.strs.id(NodeOf(r))
	t.addNode(r, nano, nodeName)
	if r.Orchestrator.JobID != "" {
		t.addJob(r, nano, t.signature(r), nodeName)
	}
	ref := runRef{at: nano, id: makeRunID(r.RunID), node: nodeName, host: t.strs.id(r.Host.Hostname), sum: t.sums.id(r)}
	ref.setOutcome(r)
	img := t.history(KindImage, Repository(r))
	job := t.history(KindJob, JobName(r))
	if r.Outcome != nil || r.Decision.Action != "exec" {
		t.runs.put(key, withState(fp, stateFinal))
		img.add(Succeeded(r), ref)
		job.add(Succeeded(r), ref)
		return
	}
	t.runs.put(key, withState(fp, statePending))
	p := t.pending.get()
	*p = pendingRun{key: key, ref: ref, ok: true, img: img, job: job}
	img.addPending(p)
	job.addPending(p)
	t.pending.runs[key] = p
	t.pending.order = live(append(t.pending.order, key), t.pending.runs)
	for len(t.pending.runs) > maxPendingRuns {
		t.evict()
	}
}

// again handles a record of a run counted before: its end, a copy, or a
// conflict.
func (t *Tracer) again(r *provline.Run, pos Position, src *SourceCounts, key uint64, v, fp uint16) {
	c := &src.Counts
	state := v & (1<<stateBits - 1)
	switch {
	case v&^(1<<stateBits-1) != fp:
		c.Conflicts++
		t.problem(src, Problem{pos, ProblemConflict, fmt.Sprintf("run %.40s again with another host or start time (%.40s, %.40s): not counted twice",
			r.RunID, r.Host.Hostname, r.StartedAt)})
	case state == stateFiltered:
		c.Filtered++
	case r.Outcome != nil && state == statePending:
		c.Outcomes++
		t.resolve(key, r.Outcome)
	case r.Outcome != nil && state == stateNoOutcome:
		c.LateOutcomes++
		t.problem(src, Problem{pos, ProblemLate, fmt.Sprintf("run %.40s ended after it was counted without its end: give sources in time order", r.RunID)})
	default:
		c.Duplicates++
	}
}

// end handles the line that ends a supervised run.
func (t *Tracer) end(it item, src *SourceCounts) {
	c := &src.Counts
	f := it.finished
	key := runKey(f.RunID)
	v, seen := t.runs.get(key)
	state := v & (1<<stateBits - 1)
	switch {
	case !seen:
		if _, held := t.orphans.ends[key]; !held {
			t.orphans.order = live(append(t.orphans.order, key), t.orphans.ends)
		}
		t.orphans.ends[key] = orphan{f.Outcome, src}
		for len(t.orphans.ends) > maxOrphans {
			t.dropOrphan()
		}
	case state == stateFiltered:
	case state == statePending:
		c.Outcomes++
		out := f.Outcome
		t.resolve(key, &out)
	case state == stateNoOutcome:
		c.LateOutcomes++
		t.problem(src, Problem{it.pos, ProblemLate, fmt.Sprintf("run %.40s ended after it was counted without its end: give sources in time order", f.RunID)})
	default:
		c.Duplicates++
	}
}

// live drops the keys no longer in m from order once they are most of it,
// so that an order grows with what it orders, not with what it ordered.
func live[V any](order []uint64, m map[uint64]V) []uint64 {
	if len(order) < 2*len(m)+1024 {
		return order
	}
	kept := order[:0]
	for _, k := range order {
		if _, ok := m[k]; ok {
			kept = append(kept, k)
		}
	}
	return kept
}

func (t *Tracer) dropOrphan() {
	for len(t.orphans.order) > 0 {
		key := t.orphans.order[0]
		t.orphans.order = t.orphans.order[1:]
		if o, ok := t.orphans.ends[key]; ok {
			delete(t.orphans.ends, key)
			o.src.UnjoinedOutcomes++
			return
		}
	}
}

// resolve places a pending run with its outcome.
func (t *Tracer) resolve(key uint64, out *provline.Outcome) {
	p := t.pending.runs[key]
	if p == nil {
		return
	}
	delete(t.pending.runs, key)
	v, _ := t.runs.get(key)
	t.runs.put(key, withState(v, stateFinal))
	ok := p.ok && out.ExitCode == 0 && out.Signal == 0 && out.NotStarted == ""
	p.ref.exit, p.ref.signal, p.ref.notStarted, p.ref.ended = int32(out.ExitCode), int32(out.Signal), out.NotStarted != "", true
	p.img.settle(p, ok)
	p.job.settle(p, ok)
	t.pending.free = append(t.pending.free, p)
}

// evict counts the oldest pending run as it stands: it started, and no
// end came (yet).
func (t *Tracer) evict() {
	for len(t.pending.order) > 0 {
		key := t.pending.order[0]
		t.pending.order = t.pending.order[1:]
		if p, ok := t.pending.runs[key]; ok {
			delete(t.pending.runs, key)
			v, _ := t.runs.get(key)
			t.runs.put(key, withState(v, stateNoOutcome))
			ok := p.ok && !p.ref.supervised // a supervised run's end never came
			p.img.settle(p, ok)
			p.job.settle(p, ok)
			t.pending.free = append(t.pending.free, p)
			return
		}
	}
}

// settle counts what is still pending as it stands, once all is read.
func (t *Tracer) settle() {
	if t.finished {
		return
	}
	t.finished = true
	for len(t.pending.runs) > 0 {
		t.evict()
	}
	for len(t.orphans.ends) > 0 {
		t.dropOrphan()
	}
	t.runs = runSet{} // the answers need it no more: room for writing them
}
