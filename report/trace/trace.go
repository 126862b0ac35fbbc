// Package trace answers fleet questions over many provenance records, read
// in one pass in memory bounded by the number of distinct jobs, images and
// nodes, never by the number of records:
//
//   - Jobs: for each job id with more than one rank, the facts its ranks
//     disagree on (driver, image, CUDA stack, frameworks, GPUs, decision),
//     each value with the ranks and nodes that hold it, the minority first.
//   - Regressions: for each image and job name, in time order, each
//     boundary between the last run that succeeded and the first that
//     failed after it, with package diff's ranked changes between the two.
//   - Nodes: per node, its runs, its aborts by finding, its last driver,
//     and the nodes to drain first.
//
// A Tracer reads sources (Read: any stream of records as log pipelines hold
// them) and builds a Result; it does no I/O of its own beyond the readers
// it is given. docs/trace.md describes the inputs and the rules.
package trace

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/orchestrator"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/diff"
)

// Options select the records a Tracer counts.
type Options struct {
	// Job keeps only the records of this job id or job name.
	Job string
	// Image keeps only the records whose image digest or reference is this.
	Image string
	// Since and Until keep only records started in [Since, Until); zero
	// is unbounded.
	Since, Until time.Time
	// Problem, when set, is called for each broken record, at most
	// MaxProblems times per source.
	Problem func(Problem)
}

// MaxProblems bounds the problems reported per source: a file of a million
// broken lines says so in its counts, not in a million messages.
const MaxProblems = 20

// Counts are what a source (or all of them) held.
type Counts struct {
	// Records is how many records were counted (after the filters).
	Records int64 `json:"records"`
	// Filtered is how many records the filters (--job, --image, --since,
	// --until) left out.
	Filtered int64 `json:"filtered"`
	// Skipped is how many lines or documents held no record: other log
	// lines, blank lines are not counted.
	Skipped int64 `json:"skipped"`
	// Malformed is how many records could not be decoded.
	Malformed int64 `json:"malformed"`
	// OtherSchema is how many records were of another schemaVersion.
	OtherSchema int64 `json:"otherSchema"`
	// OverLong is how many lines (or JSON values) were longer than
	// MaxLineBytes and skipped.
	OverLong int64 `json:"overLong"`
	problems int
	// emit, when set, takes the records decoded instead of Tracer.add
	// (Merge).
	emit func(*report.Record, time.Time)
}

func (c *Counts) plus(o Counts) {
	c.Records += o.Records
	c.Filtered += o.Filtered
	c.Skipped += o.Skipped
	c.Malformed += o.Malformed
	c.OtherSchema += o.OtherSchema
	c.OverLong += o.OverLong
}

// SourceCounts is one source's counts, and the error that ended it early.
type SourceCounts struct {
	Name string `json:"name"`
	counts
	// Error is the read error that ended the source early; "" when it was
	// read to its end.
	Error string `json:"error"`
}

type counts = Counts

// Tracer accumulates records. Its zero value is not usable: call New.
type Tracer struct {
	opt     Options
	sources []*SourceCounts

	strs interner[string] // short values: ranks, nodes, facts, check ids

	seed     maphash.Seed
	sumIndex map[uint64][]int32 // summary hash -> ids with that hash
	sums     [][]byte           // summary id -> its canonical JSON

	sigs interner[signature]

	jobs      map[string]*job
	histories map[historyKey]*history
	nodes     map[string]*node
}

// New returns a Tracer that counts the records o selects.
func New(o Options) *Tracer {
	return &Tracer{
		opt:       o,
		strs:      interner[string]{index: map[string]int32{"": 0}, list: []string{""}},
		seed:      maphash.MakeSeed(),
		sumIndex:  map[uint64][]int32{},
		sigs:      interner[signature]{index: map[signature]int32{}},
		jobs:      map[string]*job{},
		histories: map[historyKey]*history{},
		nodes:     map[string]*node{},
	}
}

// sourceStats returns the counts of the source named name: the last
// source's when it has that name (the parts of one source come in a row).
func (t *Tracer) sourceStats(name string) *SourceCounts {
	if n := len(t.sources); n > 0 && t.sources[n-1].Name == name {
		return t.sources[n-1]
	}
	s := &SourceCounts{Name: name}
	t.sources = append(t.sources, s)
	return s
}

// SourceError records the error that ended the source read last.
func (t *Tracer) SourceError(err error) {
	if len(t.sources) > 0 && err != nil {
		t.sources[len(t.sources)-1].Error = err.Error()
	}
}

func (t *Tracer) problem(p Problem, src *Counts) {
	if t.opt.Problem == nil || src.problems >= MaxProblems {
		return
	}
	src.problems++
	if src.problems == MaxProblems {
		p.What += " (further problems in this source are only counted)"
	}
	t.opt.Problem(p)
}

// interner numbers distinct values in the order first seen.
type interner[K comparable] struct {
	index map[K]int32
	list  []K
}

func (in *interner[K]) id(k K) int32 {
	if id, ok := in.index[k]; ok {
		return id
	}
	id := int32(len(in.list))
	in.index[k] = id
	in.list = append(in.list, k)
	return id
}

func (t *Tracer) intern(s string) int32 { return t.strs.id(s) }

func (t *Tracer) str(id int32) string { return t.strs.list[id] }

// selected reports whether the options keep r.
func (t *Tracer) selected(r *report.Record, at time.Time) bool {
	o := t.opt
	if o.Job != "" && r.Orchestrator.JobID != o.Job && jobName(r) != o.Job {
		return false
	}
	if o.Image != "" && r.Image.Digest != o.Image && r.Image.Ref != o.Image {
		return false
	}
	if !o.Since.IsZero() && at.Before(o.Since) {
		return false
	}
	if !o.Until.IsZero() && !at.Before(o.Until) {
		return false
	}
	return true
}

func (t *Tracer) add(r *report.Record, at time.Time, src *Counts) {
	if !t.selected(r, at) {
		src.Filtered++
		return
	}
	src.Records++
	nano := at.UnixNano()
	nodeName := t.intern(NodeOf(r))
	t.addNode(r, nano, nodeName)
	sig := t.signature(r)
	if r.Orchestrator.JobID != "" {
		t.addJob(r, nano, sig, nodeName)
	}
	ok := Succeeded(r)
	var sum int32 = -1 // interned on first use: a run that is no edge needs none
	summary := func() int32 {
		if sum < 0 {
			sum = t.summarise(r)
		}
		return sum
	}
	ref := runRef{at: nano, runID: r.RunID, node: nodeName, host: t.intern(r.Host.Hostname)}
	if k := ImageKey(r); k != "" {
		t.addRun(historyKey{KindImage, k}, ok, ref, summary)
	}
	if k := jobName(r); k != "" {
		t.addRun(historyKey{KindJob, k}, ok, ref, summary)
	}
}

// Succeeded is the rule for a good run: gpu-preflight started the command
// (decision exec) and the command did not fail (no outcome: not
// supervised; or exit code 0). An abort, a command that never started and a
// non-zero exit are failures.
func Succeeded(r *report.Record) bool {
	if r.Decision.Action != decision.Exec {
		return false
	}
	return r.Outcome == nil || (r.Outcome.ExitCode == 0 && r.Outcome.NotStarted == "")
}

// NodeOf is the node a run ran on: the Kubernetes node name, else Slurm's
// node name, else the host name.
func NodeOf(r *report.Record) string {
	o := r.Orchestrator
	switch {
	case o.Kubernetes.NodeName != "":
		return o.Kubernetes.NodeName
	case o.Slurm.NodeName != "":
		return o.Slurm.NodeName
	}
	return r.Host.Hostname
}

// RankOf is a run's rank in its job: torchrun's RANK, Slurm's
// SLURM_PROCID, Paddle's trainer id, an Indexed Job's completion index,
// else the pod name, else the host name.
func RankOf(r *report.Record) string {
	o := r.Orchestrator
	for _, s := range []string{o.Torchrun.Rank, o.Slurm.ProcID, o.Paddle.TrainerID, o.Kubernetes.CompletionIndex, o.Kubernetes.PodName} {
		if s != "" {
			return s
		}
	}
	return r.Host.Hostname
}

// ImageKey names the image a run used: its digest, else its reference.
func ImageKey(r *report.Record) string {
	if r.Image.Digest != "" {
		return r.Image.Digest
	}
	return r.Image.Ref
}

// jobName is the name a job keeps across its runs: a Kubeflow job's
// namespace/name, or a job id given explicitly (PREFLIGHT_JOB_ID, in
// Kubernetes the Job's name). Slurm, torchelastic and Paddle ids are new for
// every submission, so they name no history.
func jobName(r *report.Record) string {
	o := r.Orchestrator
	if o.Kubeflow.JobName != "" {
		if o.Kubernetes.Namespace != "" {
			return o.Kubernetes.Namespace + "/" + o.Kubeflow.JobName
		}
		return o.Kubeflow.JobName
	}
	if o.JobIDSource == orchestrator.EnvJobID {
		return o.JobID
	}
	return ""
}

// summarise interns what a boundary compares of r: the record without what
// differs between any two runs (ids, times, the command, the per-node GPU
// ids, the launcher's placement) and without the texts its facts already
// say, so that the runs of one image on one kind of node share one summary.
// The node and host are kept beside it (runRef) and put back for diff.
func (t *Tracer) summarise(r *report.Record) int32 {
	s := *r
	s.RunID, s.StartedAt = "", ""
	s.Host.Hostname = ""
	s.Host.DeviceNodes = nil
	s.Host.NVML.DurationMillis = 0
	s.Host.CUDA = facts.CUDACheck{Mode: r.Host.CUDA.Mode, Outcome: r.Host.CUDA.Outcome, Via: r.Host.CUDA.Via,
		DriverAPIVersion: r.Host.CUDA.DriverAPIVersion, DeviceCount: r.Host.CUDA.DeviceCount}
	s.Host.GPUs = make([]facts.GPU, len(r.Host.GPUs))
	for i, g := range r.Host.GPUs {
		// Without UUID and bus id diff compares GPUs by index: the node
		// class (model, compute capability, MIG), not the very boards.
		s.Host.GPUs[i] = facts.GPU{Index: g.Index, Name: g.Name, Brand: g.Brand,
			ComputeCapability: g.ComputeCapability, Architecture: g.Architecture, MemoryBytes: g.MemoryBytes,
			MIGMode: g.MIGMode, PersistenceMode: g.PersistenceMode}
	}
	s.Image.CUDALibraries = nil
	s.Checks = make([]report.Check, len(r.Checks))
	for i, c := range r.Checks {
		s.Checks[i] = report.Check{ID: c.ID, Status: c.Status, NodeFault: c.NodeFault}
	}
	s.Command = report.Command{}
	s.Orchestrator = facts.Orchestrator{}
	s.Env = map[string]string{}
	for k, v := range r.Env {
		if diff.Tuning(k) {
			s.Env[k] = v
		}
	}
	s.EnvDropped = 0
	if o := r.Outcome; o != nil {
		s.Outcome = &report.Outcome{ExitCode: o.ExitCode, Signal: o.Signal, NotStarted: o.NotStarted}
	}
	b, err := s.AppendJSON(nil)
	if err != nil {
		panic("trace: a report.Record did not encode: " + err.Error()) // only strings, numbers, bools, slices, maps
	}
	h := maphash.Bytes(t.seed, b)
	for _, id := range t.sumIndex[h] {
		if bytes.Equal(t.sums[id], b) {
			return id
		}
	}
	id := int32(len(t.sums))
	t.sums = append(t.sums, b)
	t.sumIndex[h] = append(t.sumIndex[h], id)
	return id
}

// rebuild rebuilds the record a summary stands for, with ref's node and host.
func (t *Tracer) rebuild(ref runRef) report.Record {
	var r report.Record
	if ref.sum >= 0 {
		_ = json.Unmarshal(t.sums[ref.sum], &r) // encoded by summarise
	}
	r.RunID = ref.runID
	r.StartedAt = time.Unix(0, ref.at).UTC().Format(report.TimeLayout)
	r.Host.Hostname = t.str(ref.host)
	r.Orchestrator.Kubernetes.NodeName = t.str(ref.node)
	return r
}

// Fact is one fact ranks of a job are compared on.
type Fact struct {
	Name string
	// Matters says whether ranks that differ in it are drift that matters
	// (the exit status of `gpu-preflight trace`): a difference that can
	// hang a collective or silently change the numbers. The rule is this
	// column and nowhere else.
	Matters bool
	get     func(*report.Record) string
}

// Facts are the facts compared between the ranks of a job, in the order
// they are reported.
var Facts = []Fact{
	{"driver", true, func(r *report.Record) string { return r.Host.Driver.Version }},
	{"driver branch", true, func(r *report.Record) string { return r.Host.Driver.Branch.Name }},
	{"driver CUDA", true, func(r *report.Record) string { return r.Host.Driver.CUDAVersion }},
	// The image as its digest, else its reference: two references to one
	// digest are one image.
	{"image", true, ImageKey},
	// A tag beside a digest, or two tags of one digest: minor.
	{"image ref", false, func(r *report.Record) string { return r.Image.Ref }},
	{"image CUDA", true, func(r *report.Record) string {
		if r.Image.CUDAVersionFull != "" {
			return r.Image.CUDAVersionFull
		}
		return r.Image.CUDAVersion
	}},
	{"cuDNN", true, func(r *report.Record) string { return r.Image.CuDNNVersion }},
	{"NCCL", true, func(r *report.Record) string { return r.Image.NCCLVersion }},
	{"frameworks", true, frameworks},
	{"GPU model", true, func(r *report.Record) string {
		return distinct(r.Host.GPUs, func(g facts.GPU) string { return g.Name })
	}},
	// A rank that sees fewer GPUs is a placement choice as often as a fault.
	{"GPU count", false, func(r *report.Record) string { return itoa(len(r.Host.GPUs)) }},
	{"MIG mode", true, func(r *report.Record) string {
		return distinct(r.Host.GPUs, func(g facts.GPU) string { return g.MIGMode })
	}},
	// One rank stopped while the others ran: the job cannot be whole.
	{"decision", true, func(r *report.Record) string {
		if r.Decision.Action == decision.Abort {
			return "abort (exit " + itoa(r.Decision.ExitCode) + ")"
		}
		return r.Decision.Action
	}},
}

// signature is a run's value of each of Facts, interned.
type signature [13]int32

func init() {
	if len(Facts) != len(signature{}) {
		panic("trace: signature has a slot per fact")
	}
}

func (t *Tracer) signature(r *report.Record) int32 {
	var s signature
	for i, f := range Facts {
		s[i] = t.intern(f.get(r))
	}
	return t.sigs.id(s)
}

func frameworks(r *report.Record) string {
	parts := make([]string, 0, len(r.Image.Frameworks))
	for _, f := range r.Image.Frameworks {
		p := f.Name + " " + f.Version
		switch {
		case f.CUDAVersion != "":
			p += " (CUDA " + f.CUDAVersion + ")"
		case f.Build != "":
			p += " (" + f.Build + ")"
		}
		parts = append(parts, p)
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func distinct[T any](xs []T, get func(T) string) string {
	var vs []string
	for _, x := range xs {
		if v := get(x); !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	return strings.Join(vs, ", ")
}

func itoa(n int) string { return strconv.Itoa(n) }
