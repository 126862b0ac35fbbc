package trace

import (
	"io"
	"sync"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report"
)

// Source is one source for Merge: its name, and how to read it. Each calls
// read once per stream the source holds: once for a file or standard
// input, once per record file of a directory.
type Source struct {
	Name string
	Each func(read func(part string, r io.Reader) error) error
}

// MaxMerged bounds the sources Merge reads at once: each holds a read
// buffer (and a gzip window) and a few decoded records.
const MaxMerged = 64

// mergeQueue is how many decoded records a source may hold ahead of the
// merge.
const mergeQueue = 4

// Merge reads the sources, and returns for each the error that ended it
// early (nil when it was read to its end). Up to MaxMerged sources are read
// at once, each decoded in its own goroutine, and their records counted in
// startedAt order across them: sources that are each in time order (a
// ledger per node, a file per day) so give the exact boundaries one merged
// source would. More sources are read one after the other.
func (t *Tracer) Merge(sources []Source) []error {
	errs := make([]error, len(sources))
	if len(sources) == 1 || len(sources) > MaxMerged {
		for i, s := range sources {
			st := t.sourceStats(s.Name)
			errs[i] = s.Each(func(part string, r io.Reader) error { return t.readInto(st, part, r) })
			if errs[i] != nil {
				st.Error = errs[i].Error()
			}
		}
		return errs
	}
	if p := t.opt.Problem; p != nil {
		var mu sync.Mutex
		t.opt.Problem = func(pr Problem) {
			mu.Lock()
			defer mu.Unlock()
			p(pr)
		}
		defer func() { t.opt.Problem = p }()
	}
	type item struct {
		r  *report.Record
		at time.Time
	}
	chans := make([]chan item, len(sources))
	states := make([]*SourceCounts, len(sources))
	for i, s := range sources {
		st := &SourceCounts{Name: s.Name}
		t.sources = append(t.sources, st)
		states[i] = st
		ch := make(chan item, mergeQueue)
		chans[i] = ch
		st.emit = func(r *report.Record, at time.Time) { ch <- item{r, at} }
		go func() {
			defer close(ch)
			errs[i] = s.Each(func(part string, r io.Reader) error { return t.readInto(st, part, r) })
		}()
	}
	heads := make([]item, len(sources))
	live := make([]bool, len(sources))
	for i, ch := range chans {
		heads[i], live[i] = <-ch
	}
	for {
		next := -1
		for i := range heads {
			if live[i] && (next < 0 || heads[i].at.Before(heads[next].at)) {
				next = i
			}
		}
		if next < 0 {
			break
		}
		t.add(heads[next].r, heads[next].at, &states[next].counts)
		heads[next], live[next] = <-chans[next]
	}
	for i, st := range states {
		st.emit = nil
		if errs[i] != nil {
			st.Error = errs[i].Error()
		}
	}
	return errs
}
