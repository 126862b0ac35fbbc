package trace

import (
	"bufio"
	"bytes"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gpu-preflight/gpu-preflight/report/trace/jsonstream"
	"github.com/gpu-preflight/gpu-preflight/report/trace/provline"
)

// chunkWorkers is how many chunks of a stream's lines are parsed at once.
var chunkWorkers = min(runtime.GOMAXPROCS(0), 4)

// chunksAhead is how many chunks may be read ahead of the one replayed:
// few, as what they hold counts against the memory limit.
var chunksAhead = chunkWorkers + 2

// chunkBytes, when set, caps a chunk below the reader's buffer (tests).
var chunkBytes = 0

// chunk is a run of whole lines parsed on its own, and what parsing it
// found, in order, to be replayed as if one reader had read the stream.
type chunk struct {
	data         []byte
	offset, line int64
	last         bool // the stream ends with it

	events   []item // an item with a nil run and end is the next problem
	problems []Problem
	runs     []*provline.Run
	ends     []*provline.Finished
	nr, ne   int
	text     provline.Scratch
	counts   Counts
	form     string
	named    bool
	fresh    bool // it left nothing open past its end
	recordy  bool // lastRecordy as it left it, when it set one
	setRec   bool
	usedRec  bool // it read the lastRecordy left before it
	done     chan struct{}
}

// linesInChunks reads what rd.lines reads, its chunks of whole lines parsed
// on workers. From the first chunk that leaves a value or a partial line
// open past its end, or reads what the one before left, it reads alone.
// No chunk outgrows the reader's buffer: a line is buffered whole alike.
func (rd *reader) linesInChunks(br *bufio.Reader) error {
	size := rd.bufSize
	if chunkBytes > 0 {
		size = min(size, chunkBytes)
	}
	todo := make(chan *chunk, chunksAhead)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(todo)
	for range chunkWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd.parseChunks(todo)
		}()
	}
	free := make([]*chunk, 0, chunksAhead)
	for range chunksAhead {
		free = append(free, &chunk{data: make([]byte, 0, size), done: make(chan struct{}, 1)})
	}
	var (
		queue  []*chunk
		carry  []byte
		offset int64
		line   int64 = 1
		recErr error
		// lastRecordy as the chunks merged so far left it
		recordy bool
	)
	alone := func(from int64, fromLine int64, pieces ...[]byte) error {
		rs := make([]io.Reader, 0, len(pieces)+1)
		for _, p := range pieces {
			rs = append(rs, bytes.NewReader(p))
		}
		if recErr != nil {
			rs = append(rs, &errReader{recErr})
		} else {
			rs = append(rs, br)
		}
		d := jsonstream.NewDecoderSize(io.MultiReader(rs...), rd.bufSize)
		d.SplitSizes = splitSizes
		d.At(from, fromLine)
		rd.search.lastRecordy = recordy
		return rd.lines(d, true)
	}
	// merge replays the oldest chunk, or reads alone from it on.
	merge := func() (bool, error) {
		c := queue[0]
		<-c.done
		if !c.fresh || c.usedRec && recordy {
			pieces := [][]byte{}
			for _, q := range queue {
				pieces = append(pieces, q.data)
			}
			return true, alone(c.offset, c.line, append(pieces, carry)...)
		}
		queue = queue[:copy(queue, queue[1:])]
		p := 0
		for _, it := range c.events {
			if it.run == nil && it.finished == nil {
				rd.problem(c.problems[p])
				p++
				continue
			}
			rd.emit(it)
		}
		rd.counts.plus(c.counts)
		if c.named && !rd.named {
			rd.named, rd.form = true, c.form
		}
		if c.setRec {
			recordy = c.recordy
		}
		free = append(free, c)
		return false, nil
	}
	for {
		for len(free) == 0 {
			if stop, err := merge(); stop {
				return err
			}
		}
		c := free[len(free)-1]
		free = free[:len(free)-1]
		c.data = append(c.data[:0], carry...)
		var err error
		for len(c.data) < cap(c.data) && err == nil {
			var n int
			n, err = br.Read(c.data[len(c.data):cap(c.data)])
			c.data = c.data[:len(c.data)+n]
		}
		if err != nil && err != io.EOF {
			recErr = err
		}
		c.last = err != nil
		end := len(c.data)
		if !c.last {
			end = bytes.LastIndexByte(c.data, '\n') + 1
		}
		if end == 0 || recErr != nil {
			// A line longer than a chunk, or a failed read: the rest alone.
			carry = c.data
			for len(queue) > 0 {
				if stop, err := merge(); stop {
					return err
				}
			}
			return alone(offset, line, carry)
		}
		carry = append(carry[:0], c.data[end:]...)
		c.data = c.data[:end]
		c.offset, c.line = offset, line
		c.form, c.named = rd.form, rd.named
		offset += int64(end)
		line += int64(bytes.Count(c.data, []byte{'\n'}))
		queue = append(queue, c)
		todo <- c
		if c.last {
			for len(queue) > 0 {
				if stop, err := merge(); stop {
					return err
				}
			}
			return nil
		}
	}
}

// parseChunks parses each chunk with a reader of its own.
func (rd *reader) parseChunks(todo <-chan *chunk) {
	var c *chunk
	var held atomic.Int64
	wr := newReader(nil, rd.now, &held, rd.bufSize, func(p Problem) {
		c.problems = append(c.problems, p)
		c.events = append(c.events, item{})
	}, func(it item) {
		var r *provline.Run
		var f *provline.Finished
		if it.run != nil {
			r = takeAt(&c.runs, c.nr)
			c.nr++
		}
		if it.finished != nil {
			f = takeAt(&c.ends, c.ne)
			c.ne++
		}
		c.events = append(c.events, it.keep(r, f, &c.text))
	})
	wr.part, wr.inChunk = rd.part, true
	d := jsonstream.NewBytesDecoder(nil)
	d.SplitSizes = splitSizes
	for c = range todo {
		c.events, c.problems, c.nr, c.ne, c.counts = c.events[:0], c.problems[:0], 0, 0, Counts{}
		c.text.Recycle()
		held.Store(rd.held.Load())
		wr.counts, wr.form, wr.named, wr.cut = &c.counts, c.form, c.named, false
		wr.search.lastRecordy, wr.search.lastSet, wr.search.lastUsed = false, false, false
		d.ResetBytes(c.data)
		d.At(c.offset, c.line)
		wr.lines(d, true)
		s := &wr.search
		c.fresh = len(wr.partials) == 0 && len(s.units) == 0 && len(s.levels) == 0 && (c.last || !wr.cut)
		c.recordy, c.setRec, c.usedRec = s.lastRecordy, s.lastSet, s.lastUsed
		c.form, c.named = wr.form, wr.named
		if !c.fresh {
			wr = wr.fresh()
		}
		c.done <- struct{}{}
	}
}

// fresh is a reader like rd with nothing held.
func (rd *reader) fresh() *reader {
	n := newReader(nil, rd.now, rd.held, rd.bufSize, rd.problem, rd.emit)
	n.part, n.inChunk = rd.part, rd.inChunk
	return n
}

// takeAt is the i-th of a pool, grown as needed.
func takeAt[T any](pool *[]*T, i int) *T {
	if i == len(*pool) {
		*pool = append(*pool, new(T))
	}
	return (*pool)[i]
}

type errReader struct{ err error }

func (e *errReader) Read([]byte) (int, error) { return 0, e.err }
