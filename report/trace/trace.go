// Package trace answers fleet questions (ranks that differ, where runs
// started failing and what changed, nodes to drain) over provenance
// records read in one pass from wherever a log pipeline left them, in
// memory bounded by the distinct jobs, images, nodes and runs.
// docs/trace.md has the forms it reads and the rules.
package trace

import (
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/imageref"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/trace/provline"
)

// Options select the records a Tracer counts.
type Options struct {
	// Job keeps only the records of this job id or job name.
	Job string
	// Image is a digest, a reference or a repository.
	Image string
	// Since and Until bound the start, [Since, Until); zero is unbounded.
	Since, Until time.Time
	// Now leaves out records dated over FutureSlack after it; zero keeps all.
	Now time.Time
	// Problem is called for each record not counted as a run.
	Problem func(Problem)
}

// MaxProblems bounds the problems reported per source.
const MaxProblems = 20

// Counts are what a source (or all of them) held.
type Counts struct {
	// Records counts runs: a record and its end, or two copies, once.
	Records  int64 `json:"records"`
	Filtered int64 `json:"filtered"`
	// Skipped counts lines or values that held no record.
	Skipped     int64 `json:"skipped"`
	Malformed   int64 `json:"malformed"`
	OtherSchema int64 `json:"otherSchema"`
	// Truncated counts records a pipeline cut (a line limit, a lost part).
	Truncated int64 `json:"truncated"`
	// Duplicates counts records (and ends) of a run counted already.
	Duplicates int64 `json:"duplicates"`
	// Conflicts counts records whose runId names a run counted already
	// with another host or start time.
	Conflicts int64 `json:"conflicts"`
	// Stdout counts records the job printed on stdout.
	Stdout int64 `json:"stdout"`
	// NotJobRuns counts records of no job's command (gpu-preflight check).
	NotJobRuns int64 `json:"notJobRuns"`
	// Future counts records dated more than FutureSlack after the trace.
	Future int64 `json:"future"`
	// Outcomes counts ends of supervised runs joined to their run.
	Outcomes int64 `json:"outcomes"`
	// LateOutcomes came after their run was counted without one.
	LateOutcomes     int64 `json:"lateOutcomes"`
	UnjoinedOutcomes int64 `json:"unjoinedOutcomes"`

	found int64 // records and ends the reader found
}

func (c *Counts) plus(o Counts) {
	c.Records += o.Records
	c.Filtered += o.Filtered
	c.Skipped += o.Skipped
	c.Malformed += o.Malformed
	c.OtherSchema += o.OtherSchema
	c.Truncated += o.Truncated
	c.Duplicates += o.Duplicates
	c.Conflicts += o.Conflicts
	c.Stdout += o.Stdout
	c.NotJobRuns += o.NotJobRuns
	c.Future += o.Future
	c.Outcomes += o.Outcomes
	c.LateOutcomes += o.LateOutcomes
	c.UnjoinedOutcomes += o.UnjoinedOutcomes
	c.found += o.found
}

// SourceCounts is one source's counts, form, problems and error.
type SourceCounts struct {
	Name string `json:"name"`
	// Form is what the source was read as: "Docker json-file: log>.record".
	Form string `json:"form"`
	Counts
	Problems []Problem `json:"problems"`
	// Error ended the source early.
	Error string `json:"error"`

	read     Counts // the reader's, kept apart from the Tracer's
	problems int
	named    bool // Form names where a record was found
}

// Tracer accumulates runs until its first answer. Its zero value is not usable: call New.
type Tracer struct {
	opt     Options
	sources []*SourceCounts
	mu      sync.Mutex
	held    atomic.Int64 // bytes of partial lines the readers hold

	strs    interner
	fact    []byte // a fact's value, interned from here
	seed    maphash.Seed
	sums    summaries
	rebuilt map[int32]report.Record // decoded summaries (rebuild)
	sigs    map[signature]int32
	sigl    []signature

	runs     runSet
	pending  pendingRuns
	orphans  orphanEnds
	finished bool // pending runs were counted as they stand

	jobs      map[string]*job
	histories map[historyKey]*history
	nodes     map[int32]*node
}

// New returns a Tracer that counts the records o selects.
func New(o Options) *Tracer {
	t := &Tracer{
		opt:       o,
		seed:      maphash.MakeSeed(),
		sigs:      map[signature]int32{},
		jobs:      map[string]*job{},
		histories: map[historyKey]*history{},
		nodes:     map[int32]*node{},
		rebuilt:   map[int32]report.Record{},
	}
	t.strs.init()
	t.sums.init(t.seed)
	t.pending.init()
	t.orphans.init()
	return t
}

func (t *Tracer) source(name string) *SourceCounts {
	s := &SourceCounts{Name: name}
	t.sources = append(t.sources, s)
	return s
}

// problem reports p; readers call it from their own goroutines.
func (t *Tracer) problem(src *SourceCounts, p Problem) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if src.problems >= MaxProblems {
		return
	}
	src.problems++
	if src.problems == MaxProblems {
		p.What += " (further problems in this source are only counted)"
	}
	src.Problems = append(src.Problems, p)
	if t.opt.Problem != nil {
		t.opt.Problem(p)
	}
}

// selected reports whether the options keep r.
func (t *Tracer) selected(r *provline.Run, at time.Time) bool {
	o := t.opt
	if o.Job != "" && r.Orchestrator.JobID != o.Job && JobName(r) != o.Job {
		return false
	}
	if o.Image != "" && r.Image.Digest != o.Image && r.Image.Ref != o.Image && Repository(r) != o.Image {
		return false
	}
	if !o.Since.IsZero() && at.Before(o.Since) {
		return false
	}
	return o.Until.IsZero() || at.Before(o.Until)
}

// Succeeded is the rule for a good run: gpu-preflight started the command
// (decision exec) and it did not fail: exit code 0, or no outcome from a
// run not supervised (a supervised run whose end was not recorded failed).
func Succeeded(r *provline.Run) bool {
	if r.Decision.Action != "exec" {
		return false
	}
	o := r.Outcome
	if o == nil {
		return !r.Command.Supervised
	}
	return o.ExitCode == 0 && o.Signal == 0 && o.NotStarted == ""
}

// NodeOf is the node a run ran on: the Kubernetes node name, else Slurm's
// node name, else the host name.
func NodeOf(r *provline.Run) string {
	o := r.Orchestrator
	switch {
	case o.NodeName != "":
		return o.NodeName
	case o.SlurmNodeName != "":
		return o.SlurmNodeName
	}
	return r.Host.Hostname
}

// RankOf is a run's rank in its job: torchrun's RANK, Slurm's
// SLURM_PROCID, Paddle's trainer id, an Indexed Job's completion index,
// else the pod name, else the host name.
func RankOf(r *provline.Run) string {
	o := r.Orchestrator
	for _, s := range []string{o.TorchrunRank, o.SlurmProcID, o.PaddleTrainerID, o.CompletionIdx, o.PodName} {
		if s != "" {
			return s
		}
	}
	return r.Host.Hostname
}

// ImageKey names the image a run used: its digest, else its reference.
func ImageKey(r *provline.Run) string {
	if r.Image.Digest != "" {
		return r.Image.Digest
	}
	return r.Image.Ref
}

// Repository is the image's reference without tag and digest
// (registry.example/ml/train), the key of an image's history: a rollout to
// a new digest continues it. Without a reference, the digest.
func Repository(r *provline.Run) string {
	if ref, err := imageref.Parse(r.Image.Ref); err == nil && ref.Name != "" {
		return ref.Name
	}
	return ImageKey(r)
}

// JobName is the name a job keeps across submissions: a Kubeflow job's
// namespace/name, or a job id given explicitly (PREFLIGHT_JOB_ID). Slurm,
// torchelastic and Paddle ids are new for every submission.
func JobName(r *provline.Run) string {
	o := r.Orchestrator
	if o.KubeflowJobID != "" {
		if o.Namespace != "" {
			return o.Namespace + "/" + o.KubeflowJobID
		}
		return o.KubeflowJobID
	}
	if o.JobIDSource == "PREFLIGHT_JOB_ID" {
		return o.JobID
	}
	return ""
}

// Fact is one fact ranks of a job are compared on.
type Fact struct {
	Name string
	// Matters: ranks that differ in it are drift that matters (the exit status).
	Matters bool
	put     func([]byte, *provline.Run) []byte // appends the run's value
}

func text(get func(*provline.Run) string) func([]byte, *provline.Run) []byte {
	return func(b []byte, r *provline.Run) []byte { return append(b, get(r)...) }
}

// Facts are compared between the ranks of a job, in the order reported.
var Facts = []Fact{
	{"driver", true, text(func(r *provline.Run) string { return r.Host.Driver.Version })},
	{"driver branch", true, text(func(r *provline.Run) string { return r.Host.Driver.Branch })},
	{"driver CUDA", true, text(func(r *provline.Run) string { return r.Host.Driver.CUDAVersion })},
	{"image", true, text(ImageKey)},
	// A tag beside a digest, or two tags of one digest, name one image.
	{"image ref", false, text(func(r *provline.Run) string { return r.Image.Ref })},
	{"image CUDA", true, text(func(r *provline.Run) string {
		if r.Image.CUDAVersionFull != "" {
			return r.Image.CUDAVersionFull
		}
		return r.Image.CUDAVersion
	})},
	{"cuDNN", true, text(func(r *provline.Run) string { return r.Image.CuDNNVersion })},
	{"NCCL", true, text(func(r *provline.Run) string { return r.Image.NCCLVersion })},
	// Ranks on different networks or HCA sets hang in their first collective.
	{"NCCL transport", true, text(transport)},
	{"frameworks", true, appendFrameworks},
	{"GPU model", true, text(func(r *provline.Run) string {
		return distinct(r.Host.GPUs, func(g provline.GPU) string { return g.Name })
	})},
	// Fewer GPUs is a placement choice as often as a fault.
	{"GPU count", false, func(b []byte, r *provline.Run) []byte {
		n := 0
		for _, g := range r.Host.GPUs {
			n += g.Count
		}
		return strconv.AppendInt(b, int64(n), 10)
	}},
	{"MIG mode", true, text(func(r *provline.Run) string {
		return distinct(r.Host.GPUs, func(g provline.GPU) string { return g.MIGMode })
	})},
	// One rank stopped while the others ran: the job cannot be whole.
	{"decision", true, text(func(r *provline.Run) string {
		if r.Decision.Action == "abort" {
			return "abort (exit " + strconv.Itoa(r.Decision.ExitCode) + ")"
		}
		return r.Decision.Action
	})},
}

// signature is a run's value of each of Facts, interned.
type signature [14]int32

func init() {
	if len(Facts) != len(signature{}) {
		panic("trace: signature has a slot per fact")
	}
}

func (t *Tracer) signature(r *provline.Run) int32 {
	var s signature
	for i, f := range Facts {
		t.fact = f.put(t.fact[:0], r)
		s[i] = t.strs.idBytes(t.fact)
	}
	if id, ok := t.sigs[s]; ok {
		return id
	}
	id := int32(len(t.sigl))
	t.sigs[s] = id
	t.sigl = append(t.sigl, s)
	return id
}

func transport(r *provline.Run) string {
	t := r.Host.Transport
	s := t.Network
	if t.LinkLayer != "" {
		s += " (" + t.LinkLayer + ")"
	}
	if t.Devices != "" {
		s += " on " + t.Devices
	}
	return s
}

// appendFrameworks appends the frameworks, sorted: "torch 2.4.0 (CUDA 12.4)".
func appendFrameworks(b []byte, r *provline.Run) []byte {
	fws := r.Image.Frameworks
	if len(fws) == 1 {
		return appendFramework(b, fws[0])
	}
	parts := make([]string, 0, len(fws))
	for _, f := range fws {
		parts = append(parts, string(appendFramework(nil, f)))
	}
	slices.Sort(parts)
	return append(b, strings.Join(parts, ", ")...)
}

func appendFramework(b []byte, f provline.Framework) []byte {
	b = append(append(append(b, f.Name...), ' '), f.Version...)
	switch {
	case f.CUDAVersion != "":
		b = append(append(append(b, " (CUDA "...), f.CUDAVersion...), ')')
	case f.Build != "":
		b = append(append(append(b, " ("...), f.Build...), ')')
	}
	return b
}

func distinct[T any](xs []T, get func(T) string) string {
	if len(xs) == 1 {
		return get(xs[0])
	}
	var vs []string
	for _, x := range xs {
		if v := get(x); !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	return strings.Join(vs, ", ")
}
