package trace

import (
	"io"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report/trace/provline"
)

// MaxMerged bounds the groups read at once; more are read one after the
// other.
const MaxMerged = 32

// mergeQueue is how many records a group may hold ahead of the merge.
const mergeQueue = 16

// Read reads the sources, every group of them in its own goroutine, and
// counts their records in startedAt order across groups: groups that are
// each in time order (a container's log, a ledger per node, an export
// per day) give the boundaries one merged stream would. It returns for
// each source the error that ended it early, nil when read to its end.
func (t *Tracer) Read(sources []Source) []error {
	type input struct {
		idx int
		src *SourceCounts
		g   group
		c   Counts
		err error
		ch  chan item
	}
	var inputs []*input
	for i, s := range sources {
		sc := t.source(s.Name)
		for _, g := range s.groups {
			inputs = append(inputs, &input{idx: i, src: sc, g: g})
		}
	}
	bufSize := 64 << 10
	if len(inputs) > 1 {
		bufSize = 8 << 10 // a buffer, a decoder and a gzip window each
	}
	read := func(in *input, emit func(item)) {
		rd := newReader(&in.c, t.opt.Now, &t.held, bufSize, func(p Problem) { t.problem(in.src, p) }, emit)
		in.err = in.g.each(func(part string, r io.Reader) error { return rd.read(part, r) },
			func(err error) {
				t.problem(in.src, Problem{Position{Source: in.g.name}, ProblemMalformed, err.Error()})
			})
		t.mu.Lock()
		if in.src.Form == "" || in.c.found > 0 && !in.src.named {
			in.src.Form, in.src.named = rd.form, in.c.found > 0
		}
		t.mu.Unlock()
	}
	if len(inputs) == 1 || len(inputs) > MaxMerged {
		for _, in := range inputs {
			read(in, func(it item) { t.add(it, in.src) })
		}
	} else {
		for _, in := range inputs {
			in.ch = make(chan item, mergeQueue)
			go func() {
				defer close(in.ch)
				read(in, func(it item) {
					if it.run != nil { // the reader fills its run and end again
						r := new(provline.Run)
						r.Set(it.run)
						it.run = r
					}
					if it.finished != nil {
						f := *it.finished
						it.finished = &f
					}
					in.ch <- it
				})
			}()
		}
		heads := make([]item, len(inputs))
		live := make([]bool, len(inputs))
		for i, in := range inputs {
			heads[i], live[i] = <-in.ch
		}
		for {
			next := -1
			for i := range heads {
				if live[i] && (next < 0 || earlier(heads[i].at, heads[next].at)) {
					next = i
				}
			}
			if next < 0 {
				break
			}
			t.add(heads[next], inputs[next].src)
			heads[next], live[next] = <-inputs[next].ch
		}
	}
	errs := make([]error, len(sources))
	for _, in := range inputs {
		in.src.read.plus(in.c)
		if in.err != nil && errs[in.idx] == nil {
			errs[in.idx] = in.err
			in.src.Error = in.err.Error()
		}
	}
	return errs
}

// earlier orders items by time; an end without a time comes first, to
// wait for its run.
func earlier(a, b time.Time) bool { return a.Before(b) }
