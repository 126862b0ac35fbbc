package trace

import (
	"fmt"
	"hash/maphash"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gpu-preflight/gpu-preflight/report/trace/provline"
)

// Same compares values without the invisible format characters (Unicode's
// Cf: U+200B, U+FEFF, bidirectional marks): values that print alike are one.
func Same(a, b string) bool { return norm(a) == norm(b) }

// norm drops the format characters from s.
func norm(s string) string {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return s
	}
	if !strings.ContainsFunc(s[i:], isFormat) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isFormat(r) {
			return -1
		}
		return r
	}, s)
}

func isFormat(r rune) bool { return r >= 0x80 && unicode.Is(unicode.Cf, r) }

// Visible writes the format characters in s as \uXXXX, so that a value
// that holds one does not print like one that does not.
func Visible(s string) string {
	if norm(s) == s {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isFormat(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// interner numbers distinct values in the order first seen; values equal
// but for format characters are one, shown as first seen.
type interner struct {
	index map[string]int32
	list  []string
}

func (in *interner) init() {
	in.index = map[string]int32{"": 0}
	in.list = []string{""}
}

func (in *interner) id(s string) int32 {
	if id, ok := in.index[s]; ok {
		return id
	}
	k := norm(s)
	if id, ok := in.index[k]; ok {
		return id
	}
	id := int32(len(in.list)) // s may be a batch's
	in.index[strings.Clone(k)] = id
	in.list = append(in.list, strings.Clone(Visible(s)))
	return id
}

// idBytes is id(string(b)), without a copy of a value seen before.
func (in *interner) idBytes(b []byte) int32 {
	if id, ok := in.index[string(b)]; ok {
		return id
	}
	return in.id(string(b))
}

func (in *interner) str(id int32) string { return in.list[id] }

// summaries interns what a boundary compares of a run: its reduced record
// without its id, time, host, placement, command and outcome.
type summaries struct {
	seed  maphash.Seed
	index map[uint64][]int32
	list  [][]byte
}

func (s *summaries) init(seed maphash.Seed) {
	s.seed, s.index = seed, map[uint64][]int32{}
}

func (s *summaries) id(r *provline.Run) int32 {
	var h maphash.Hash
	h.SetSeed(s.seed)
	hashSummary(&h, r)
	k := h.Sum64()
	if ids := s.index[k]; len(ids) > 0 {
		return ids[0] // 64 bits of the fields tell summaries apart
	}
	x := *r
	x.RunID, x.StartedAt, x.Host.Hostname = "", "", ""
	x.Orchestrator = provline.Orchestrator{}
	x.Command = provline.Command{}
	x.Outcome = nil
	id := int32(len(s.list))
	s.list = append(s.list, x.AppendJSON(nil))
	s.index[k] = append(s.index[k], id)
	return id
}

// hashSummary writes what a summary keeps of r into h.
func hashSummary(h *maphash.Hash, r *provline.Run) {
	str := func(ss ...string) {
		for _, s := range ss {
			h.WriteString(s)
			h.WriteByte(0)
		}
	}
	num := func(ns ...int) {
		for _, n := range ns {
			maphash.WriteComparable(h, n)
		}
	}
	flag := func(b bool) { maphash.WriteComparable(h, b) }
	str(r.SchemaVersion, r.Tool)
	d := r.Host.Driver
	str(d.Version, d.CUDAVersion, d.Branch)
	flag(d.OpenKernelModule)
	num(len(r.Host.GPUs))
	for _, g := range r.Host.GPUs {
		str(g.Name, g.Brand, g.ComputeCapability, g.MIGMode, g.PersistenceMode)
		num(g.Count)
	}
	c := r.Host.CUDA
	str(c.Mode, c.Outcome)
	num(c.DriverAPIVersion)
	im := r.Image
	str(im.CUDAVersion, im.CUDAVersionFull, im.CuDNNVersion, im.NCCLVersion, im.TensorRTVersion, im.Ref, im.Digest, im.Revision)
	flag(im.RequireDisabled)
	num(len(im.Requirements), len(im.Compat), len(im.Frameworks), len(r.Checks), len(r.Decision.Blocking), len(r.Env))
	for _, v := range im.Requirements {
		str(v.Name, v.Value)
	}
	str(im.Compat...)
	for _, f := range im.Frameworks {
		str(f.Name, f.Version, f.CUDAVersion, f.CuDNNVersion, f.Build)
		num(len(f.Archs))
		str(f.Archs...)
	}
	for _, ch := range r.Checks {
		str(ch.ID, ch.Status)
	}
	str(r.Decision.Policy, r.Decision.Action)
	num(r.Decision.ExitCode)
	flag(r.Decision.NodeFault)
	str(r.Decision.Blocking...)
	for _, v := range r.Env {
		str(v.Name, v.Value)
	}
}
