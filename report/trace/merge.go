package trace

import (
	"io"
	"strings"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report/trace/provline"
)

// MaxMerged bounds the groups read at once; more are read in turn.
const MaxMerged = 32

// mergeQueue is how many records a group may hold ahead of the merge.
const mergeQueue = 16

// Read reads the sources, a goroutine per group, and counts their records
// in startedAt order across groups, so that groups each in time order give
// the boundaries one stream would. It returns each source's error, if any.
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
	read := func(in *input, emit func(item), problem func(Problem)) {
		rd := newReader(&in.c, t.opt.Now, &t.held, bufSize, problem, emit)
		rd.chunked = len(inputs) == 1 || len(inputs) > MaxMerged
		in.err = in.g.each(func(part string, r io.Reader) error { return rd.read(part, r) },
			func(err error) { problem(Problem{Position{Source: in.g.name}, ProblemMalformed, err.Error()}) })
		t.mu.Lock()
		if in.src.Form == "" || in.c.found > 0 && !in.src.named {
			in.src.Form, in.src.named = rd.form, in.c.found > 0
		}
		t.mu.Unlock()
	}
	if len(inputs) == 1 || len(inputs) > MaxMerged {
		for _, in := range inputs {
			t.pipeline(in.src, func(emit func(item), problem func(Problem)) { read(in, emit, problem) })
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
						r.Keep(strings.Clone)
						it.run = r
					}
					if it.finished != nil {
						f := *it.finished
						f.Keep(strings.Clone)
						it.finished = &f
					}
					in.ch <- it
				}, func(p Problem) { t.problem(in.src, p) })
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

// earlier orders items by time; an end without one comes first.
func earlier(a, b time.Time) bool { return a.Before(b) }

const batchLen, batches = 64, 4 // how far reading may run ahead of counting

// batch holds a reader's items and problems in order (so MaxProblems keeps
// the same), with copies of their runs and ends and of their fresh values.
type batch struct {
	items    []item
	problems []Problem // an item with a nil run and end is the next of these
	runs     [batchLen]provline.Run
	ends     [batchLen]provline.Finished
	text     provline.Scratch
}

// keep is it with its run and end copied into r and f, their fresh values
// into text: the reader fills its own again.
func (it item) keep(r *provline.Run, f *provline.Finished, text *provline.Scratch) item {
	if it.run != nil {
		r.Set(it.run)
		r.Keep(text.String)
		it.run = r
	}
	if it.finished != nil {
		*f = *it.finished
		f.Keep(text.String)
		it.finished = f
	}
	return it
}

// pipeline reads on a goroutine of its own and counts here, in order.
func (t *Tracer) pipeline(src *SourceCounts, read func(emit func(item), problem func(Problem))) {
	full, free := make(chan *batch, batches), make(chan *batch, batches)
	for range batches {
		free <- &batch{items: make([]item, 0, batchLen)}
	}
	go func() {
		defer close(full)
		b := <-free
		next := func() {
			if len(b.items) == cap(b.items) {
				full <- b
				b = <-free
				b.items, b.problems = b.items[:0], b.problems[:0]
				b.text.Recycle()
			}
		}
		read(func(it item) {
			next()
			i := len(b.items)
			b.items = append(b.items, it.keep(&b.runs[i], &b.ends[i], &b.text))
		}, func(p Problem) {
			next()
			b.problems = append(b.problems, p)
			b.items = append(b.items, item{})
		})
		full <- b
	}()
	for b := range full {
		p := 0
		for _, it := range b.items {
			if it.run == nil && it.finished == nil {
				t.problem(src, b.problems[p])
				p++
				continue
			}
			t.add(it, src)
		}
		free <- b
	}
}
