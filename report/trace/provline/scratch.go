package provline

import "unsafe"

const scratchChunk = 16 << 10

// Scratch holds the values that differ in every record without a string
// each. Its strings are valid until Recycle; one kept longer is copied
// (Run.Keep). A full chunk is let go, not reused.
type Scratch struct{ buf []byte }

func (s *Scratch) Bytes(v []byte) string  { return scratchString(s, v) }
func (s *Scratch) String(v string) string { return scratchString(s, v) }
func (s *Scratch) Recycle()               { s.buf = s.buf[:0] }

func scratchString[T string | []byte](s *Scratch, v T) string {
	if len(v) == 0 {
		return ""
	}
	if len(s.buf)+len(v) > cap(s.buf) {
		s.buf = make([]byte, 0, max(scratchChunk, len(v)))
	}
	i := len(s.buf)
	s.buf = append(s.buf, v...)
	return unsafe.String(&s.buf[i], len(v))
}

// Keep replaces the values a Scratch may hold (the fresh nodes) with keep's.
func (r *Run) Keep(keep func(string) string) {
	r.RunID, r.StartedAt = keep(r.RunID), keep(r.StartedAt)
	r.Orchestrator.PodName = keep(r.Orchestrator.PodName)
}

func (f *Finished) Keep(keep func(string) string) {
	f.RunID, f.Time = keep(f.RunID), keep(f.Time)
}
